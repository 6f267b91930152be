import Foundation

/// How big each scenario is: the sizes, or a quick mode that runs in under two minutes.
struct Sizes: Sendable {
    /// Scenarios 1 and 4: rows of 10 columns written by A, then column values updated.
    var bulkRows: Int
    var bulkUpdatedValues: Int
    /// Scenarios 1 and 4: end-to-end runs, each with its floor; the median ratio is judged.
    var bulkRuns: Int
    /// Scenario 2: change sets already in the folder (small and large), registered clients, measured rounds.
    var incrementalSmall: Int
    var incrementalLarge: Int
    var incrementalClients: Int
    var incrementalRounds: Int
    /// Scenarios 3 and 5: rows of the big document (about 200 bytes each); scenario 3's joins (the median is judged).
    var bigDocumentRows: Int
    var joinRuns: Int
    /// Scenario 7 (besides `bulkRows` inserted, `bulkUpdatedValues` updated): rows deleted, single-row transactions,
    /// runs (the median is judged).
    var captureDeletes: Int
    var captureTransactions: Int
    var captureRuns: Int
    /// Scenario 8: removable change sets of the vacuumed document, in a local folder and over WebDAV.
    var vacuumLocal: Int
    var vacuumWebDAV: Int
    /// Scenario 9: notes of the document a new device syncs first through the WAN link.
    var wanNotes: Int
    /// Scenario 9: rounds of one-change syncs (the median is judged).
    var wanRounds: Int
    /// Scenario 10: registered clients (the reader included), clients active per round, measured rounds, and whether
    /// the rounds run over WebDAV too.
    var manyClients: Int
    var manyClientsActive: Int
    var manyClientsRounds: Int
    var manyClientsOverWebDAV: Bool
    /// Scenario 11: live notes, and how many are inserted and deleted in all.
    var churnLiveRows: Int
    var churnOperations: Int
    /// Scenario 12: the size of the large value, in bytes.
    var largeValueBytes: Int

    static let full = Sizes(
        bulkRows: 100_000, bulkUpdatedValues: 1_000_000, bulkRuns: 3, incrementalSmall: 100, incrementalLarge: 10_000,
        incrementalClients: 20, incrementalRounds: 40, bigDocumentRows: 5_000_000, joinRuns: 5,
        captureDeletes: 50_000, captureTransactions: 1_000, captureRuns: 5, vacuumLocal: 100_000, vacuumWebDAV: 10_000,
        wanNotes: 26_591, wanRounds: 7,
        manyClients: 100, manyClientsActive: 10, manyClientsRounds: 20, manyClientsOverWebDAV: true,
        churnLiveRows: 10_000, churnOperations: 1_000_000, largeValueBytes: 200 << 20)
    static let quick = Sizes(
        bulkRows: 10_000, bulkUpdatedValues: 100_000, bulkRuns: 1, incrementalSmall: 100, incrementalLarge: 1_000,
        incrementalClients: 20, incrementalRounds: 8, bigDocumentRows: 100_000, joinRuns: 1,
        captureDeletes: 5_000, captureTransactions: 200, captureRuns: 1, vacuumLocal: 10_000, vacuumWebDAV: 1_000,
        wanNotes: 2_000, wanRounds: 3,
        manyClients: 100, manyClientsActive: 10, manyClientsRounds: 3, manyClientsOverWebDAV: false,
        churnLiveRows: 2_000, churnOperations: 40_000, largeValueBytes: 20 << 20)
}

/// What every scenario shares: sizes, a work folder, the way to start workers, the WebDAV server.
final class BenchContext: @unchecked Sendable {
    let sizes: Sizes
    let workDirectory: URL
    /// `name=url` of the WebDAV server to use (credentials in the URL), from `FOLDERSYNC_BENCH_WEBDAV`.
    let webDAVURL: String?
    /// The big document of scenario 3, kept for scenario 5.
    var bigDocument: BigDocument?

    init(sizes: Sizes, workDirectory: URL, webDAVURL: String?) {
        self.sizes = sizes
        self.workDirectory = workDirectory
        self.webDAVURL = webDAVURL
    }

    /// A new empty folder under the work folder.
    func folder(_ name: String) throws -> URL {
        let url = workDirectory.appendingPathComponent(name, isDirectory: true)
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func log(_ message: String) {
        FileHandle.standardError.write(Data("  · \(message)\n".utf8))
    }
}
