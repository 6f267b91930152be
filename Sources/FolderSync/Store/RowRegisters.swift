import Foundation

/// One synced row's last-writer-wins registers, packed into the `stamps` BLOB of its `foldersync_clocks` row.
///
/// One row per synced row, not one per column: a bulk sync writes and reads a tenth of the B-tree rows it
/// would with a row per register (scenario 1 of the benchmarks). Registers are named by column, not by
/// position, so a migration that adds, drops or reorders columns leaves them meaning what they meant.
///
/// ```
/// version            1 byte: 1
/// newest             UInt64 big-endian: the newest register's timestamp, so that SQL finds the newest of
///                    all (`max(substr(stamps, 2, 8))`) without decoding a register
/// client count       varint; then each client identifier, varint length + UTF-8
/// per register       column (varint length + UTF-8), timestamp (UInt64 LE),
///                    client (varint: 0 this client, k the k-th identifier above)
/// ```
/// "This client" is stored without an identifier, as before: local writes not yet published are the
/// registers with no client, and a snapshot names the client in every register (``owned(by:)``).
struct RowRegisters: Equatable {
    struct Register: Equatable {
        var column: String
        var timestamp: UInt64
        /// `nil` for this client's own writes.
        var client: String?
    }

    private(set) var registers: [Register] = []

    init() {}

    /// Decodes a `stamps` value; `nil` or an empty blob is a row with no register.
    init(_ blob: Data?) throws {
        guard let blob, !blob.isEmpty else { return }
        registers = try blob.withUnsafeBytes { bytes in
            var reader = BlobReader(bytes: bytes)
            let version = try reader.byte()
            guard version == 1 else { throw FormatViolation("registers of unknown version \(version)") }
            _ = try reader.bytes(8) // the newest timestamp, derived from the registers
            let clientCount = try reader.varint()
            // Each identifier takes at least one byte: a hostile count runs out of input before memory.
            guard clientCount <= UInt64(reader.remaining) else { throw FormatViolation("register client count \(clientCount) is out of range") }
            var clients: [String] = []
            clients.reserveCapacity(Int(clientCount))
            for _ in 0..<clientCount { clients.append(try reader.string(what: "register client")) }
            var registers: [Register] = []
            while reader.remaining > 0 {
                let column = try reader.string(what: "register column")
                let timestamp = try reader.bytes(8).loadUnaligned(as: UInt64.self).littleEndian
                let index = try reader.varint()
                guard index <= UInt64(clients.count) else { throw FormatViolation("register client \(index) is out of range") }
                registers.append(Register(column: column, timestamp: timestamp, client: index == 0 ? nil : clients[Int(index) - 1]))
            }
            return registers
        }
    }

    /// The `stamps` value.
    var encoded: Data {
        var clients: [String] = []
        var body = ByteSink()
        body.bytes.reserveCapacity(registers.count * 16)
        for register in registers {
            body.appendString(register.column)
            body.appendUInt64(register.timestamp)
            if let client = register.client {
                if let index = clients.firstIndex(of: client) {
                    body.appendVarint(UInt64(index + 1))
                } else {
                    clients.append(client)
                    body.appendVarint(UInt64(clients.count))
                }
            } else {
                body.appendVarint(0)
            }
        }
        var sink = Self.head(newest: newestTimestamp, clients: clients, bodyCapacity: body.bytes.count)
        sink.bytes.append(contentsOf: body.bytes)
        return Data(sink.bytes)
    }

    /// A `stamps` value up to its registers: version, newest timestamp, client identifiers.
    private static func head(newest: UInt64, clients: some Collection<String>, bodyCapacity: Int) -> ByteSink {
        var sink = ByteSink()
        sink.bytes.reserveCapacity(10 + clients.reduce(0) { $0 + 1 + $1.utf8.count } + bodyCapacity)
        sink.bytes.append(1)
        withUnsafeBytes(of: newest.bigEndian) { sink.bytes.append(contentsOf: $0) }
        sink.appendVarint(UInt64(clients.count))
        for client in clients { sink.appendString(client) }
        return sink
    }

    /// The `stamps` value of one register per column of `columns`, all written by `client`: the same bytes as
    /// ``encoded`` of those registers, without building them first (once per new row of a bulk apply).
    static func encoded(_ columns: [ColumnChange], client: String) -> [UInt8] {
        guard !columns.isEmpty else { return [UInt8](RowRegisters().encoded) }
        var sink = head(newest: columns.reduce(0) { max($0, $1.timestamp.rawValue) }, clients: CollectionOfOne(client), bodyCapacity: columns.count * 24)
        for column in columns {
            sink.appendString(column.column)
            sink.appendUInt64(column.timestamp.rawValue)
            sink.appendVarint(1)
        }
        return sink.bytes
    }

    /// The newest timestamp stored at the head of a `stamps` value (`max(substr(stamps, 2, 8))`), or 0.
    static func newestTimestamp(ofHead head: Data?) -> UInt64 {
        guard let head, head.count == 8 else { return 0 }
        return head.reduce(0) { $0 << 8 | UInt64($1) }
    }

    var isEmpty: Bool { registers.isEmpty }

    subscript(column: String) -> Register? {
        registers.first { $0.column == column }
    }

    /// Sets `column`'s register, replacing the one it had.
    mutating func set(_ column: String, timestamp: UInt64, client: String?) {
        if let index = registers.firstIndex(where: { $0.column == column }) {
            registers[index].timestamp = timestamp
            registers[index].client = client
        } else {
            registers.append(Register(column: column, timestamp: timestamp, client: client))
        }
    }

    /// Removes the registers `remove` picks.
    mutating func removeAll(where remove: (Register) -> Bool) {
        registers.removeAll(where: remove)
    }

    /// The stamp of `column`'s register; a register with no client is `localClient`'s.
    func stamp(of column: String, localClient: String) -> ChangeStamp? {
        self[column].map { $0.stamp(localClient: localClient) }
    }

    /// The newest stamp of the row, or `nil` when it has no register.
    func newest(localClient: String) -> ChangeStamp? {
        registers.map { $0.stamp(localClient: localClient) }.max()
    }

    /// The newest timestamp of the row, or 0.
    var newestTimestamp: UInt64 { registers.reduce(0) { max($0, $1.timestamp) } }

    /// The same registers with this client's named `client`: how they travel in a snapshot.
    func owned(by client: String) -> RowRegisters {
        var copy = self
        for index in copy.registers.indices where copy.registers[index].client == nil { copy.registers[index].client = client }
        return copy
    }
}

extension RowRegisters.Register {
    func stamp(localClient: String) -> ChangeStamp {
        ChangeStamp(timestamp: HybridTimestamp(rawValue: timestamp), clientIdentifier: client ?? localClient)
    }
}
