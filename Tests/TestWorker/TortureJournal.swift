import Foundation

/// What one torture client wrote, so that the checker knows every committed write.
///
/// Before each write transaction the client appends `T n`, then one `W row value` or `D row` line per write; after the
/// commit it appends `C n`. A kill between the two leaves the transaction open; the client's next run resolves it from
/// the database (the transaction's marker row holds its number or not) and appends `C n` or `A n`. Lines starting with
/// `#` say what the client did, for reading after a failure. Lines are written with one `write(2)` each, so a SIGKILL
/// never tears one.
struct TortureJournal {
    enum Operation: Equatable {
        case write(row: String, value: String)
        case delete(row: String)
    }

    /// Per own row, the last committed value (`nil`: deleted).
    private(set) var own: [String: String?] = [:]
    /// Per shared row, every committed value (any of them may be the last writer's).
    private(set) var shared: [String: Set<String>] = [:]
    /// The transaction written but not resolved yet, with its operations.
    private(set) var open: (number: Int, operations: [Operation])?
    private(set) var transactions = 0
    private(set) var committed = 0
    /// Own rows (`client-rN`) numbered so far, committed or not, so that no number is used twice.
    private(set) var rowsNumbered = 0

    let client: String
    let url: URL

    static let sharedPrefix = "shared-"

    func ownRow(_ number: Int) -> String { "\(client)-r\(number)" }
    var markerRow: String { "\(client)-txn" }
    func markerValue(_ transaction: Int) -> String { "\(client).\(transaction).marker" }

    init(client: String, url: URL) throws {
        self.client = client
        self.url = url
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        var pending: [Int: [Operation]] = [:]
        var order: [Int] = []
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2).map(String.init)
            switch (fields.first, fields.count) {
            case ("T", 2):
                let n = Int(fields[1])!
                pending[n] = []
                order.append(n)
                transactions = max(transactions, n)
            case ("W", 3):
                pending[order.last!]!.append(.write(row: fields[1], value: fields[2]))
                noteNumbered(fields[1])
            case ("D", 2): pending[order.last!]!.append(.delete(row: fields[1]))
            case ("C", 2): commit(pending.removeValue(forKey: Int(fields[1])!)!)
            case ("A", 2): pending[Int(fields[1])!] = nil
            case ("#", _): continue
            default: throw TortureFailure("journal \(url.path): bad line \(line)")
            }
        }
        if let number = order.last(where: { pending[$0] != nil }) {
            guard pending.count == 1 else {
                throw TortureFailure("journal \(url.path): \(pending.count) open transactions")
            }
            open = (number, pending[number]!)
        }
    }

    private mutating func commit(_ operations: [Operation]) {
        committed += 1
        for operation in operations {
            switch operation {
            case .write(let row, let value) where row.hasPrefix(Self.sharedPrefix):
                shared[row, default: []].insert(value)
            case .write(let row, let value): own[row] = .some(value)
            case .delete(let row): own[row] = .some(nil)
            }
        }
    }

    private mutating func noteNumbered(_ row: String) {
        if let number = Int(row.dropFirst("\(client)-r".count)), row.hasPrefix("\(client)-r") {
            rowsNumbered = max(rowsNumbered, number + 1)
        }
    }

    /// Own rows that exist after every committed transaction.
    var liveOwnRows: [String] { own.filter { $0.key != markerRow && $0.value != nil }.map(\.key).sorted() }

    /// Appends one line with a single write, so that a kill never leaves half a line.
    func append(_ lines: [String]) throws {
        if !FileManager.default.fileExists(atPath: url.path) {
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(lines.map { $0 + "\n" }.joined().utf8))
    }

    /// Notes what the client does next (`# sync`), for whoever reads the journal after a failure.
    func note(_ line: String) throws { try append([line]) }

    /// Starts transaction `number`: records its operations before they reach the database.
    mutating func begin(_ operations: [Operation]) throws -> Int {
        transactions += 1
        let number = transactions
        var lines = ["T \(number)"]
        for operation in operations {
            switch operation {
            case .write(let row, let value):
                lines.append("W \(row) \(value)")
                noteNumbered(row)
            case .delete(let row): lines.append("D \(row)")
            }
        }
        try append(lines)
        open = (number, operations)
        return number
    }

    /// Resolves the open transaction: committed if the database has its marker.
    mutating func resolve(committed isCommitted: Bool) throws {
        guard let (number, operations) = open else { return }
        try append([isCommitted ? "C \(number)" : "A \(number)"])
        if isCommitted { commit(operations) }
        open = nil
    }
}

struct TortureFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
