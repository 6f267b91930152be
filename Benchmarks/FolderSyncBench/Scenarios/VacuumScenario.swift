import FolderSync
import FolderSyncWebDAV
import Foundation
import Logging

/// Scenario 8: a vacuum that removes many change sets, against deleting the same files without FolderSync.
///
/// The document is fabricated (``DocumentFabricator``: no client writes or syncs it): client A published `N + 8`
/// change sets, client B acknowledges them all, and B's whole store contains the first `N`, which are therefore
/// removable; the last 8 are not. What is timed is `DocumentMaintenance.vacuum()` as the `foldersync vacuum`
/// command runs it: listing the document, reading the markers, verifying the whole store, removing. The floor
/// removes the same number of files of the same sizes: `rm -r` of a folder holding them (local), or one `curl`
/// sending their DELETEs, 8 at a time (WebDAV). The vacuum moves what it removes into the removed area; a second
/// vacuum, with the folder's clock past the grace period, purges it: the two together are judged against the floor.
struct VacuumScenario: Scenario {
    let number = "8"
    let title = "Vacuum of many change sets"

    /// Change sets kept because no whole store contains them.
    static let kept = 8

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        var result = ScenarioResult()
        let local = context.sizes.vacuumLocal
        let webDAV = context.sizes.vacuumWebDAV
        result.note = "\(local) removable change sets in a local folder, \(webDAV) over WebDAV"
        let root = try context.folder("vacuum")
        defer { try? FileManager.default.removeItem(at: root) }

        context.log("local folder: fabricating \(local) removable change sets")
        let remoteURL = root.appendingPathComponent("remote")
        try FileManager.default.createDirectory(at: remoteURL, withIntermediateDirectories: true)
        let folder = FileManagerFileSystem(rootURL: remoteURL)
        let localDocument = try await Self.fabricate(folder, count: local) { fabricator, files in
            for (path, bytes) in files {
                try Self.writeFile(folder.url(for: path), bytes: bytes)
            }
        }
        let floorFolder = root.appendingPathComponent("floor")
        try FileManager.default.createDirectory(at: floorFolder, withIntermediateDirectories: true)
        for (index, bytes) in Self.sizes(local).enumerated() {
            try Self.writeFile(floorFolder.appendingPathComponent("\(index)"), bytes: bytes)
        }
        context.log("local folder: vacuum, then rm")
        let localVacuum = try await Self.vacuum(folder, localDocument, expecting: local)
        try Floors.flushWrites()
        let rm = try ChildProcess.mustRun(["rm", "-r", floorFolder.path]).seconds
        Self.report(localVacuum, count: local, label: "local", into: &result)
        result.figure("local: rm -r of the same number of files", rm, "s")
        result.check("local: (vacuum + purge) / rm", localVacuum.vacuum / rm, atMost: 3)

        guard let url = context.webDAVURL else {
            result.note! += "; no WebDAV server: run scripts/bench, which starts one (or set FOLDERSYNC_BENCH_WEBDAV)"
            return result
        }
        context.log("WebDAV: fabricating \(webDAV) removable change sets")
        let base = url.hasSuffix("/") ? url : url + "/"
        let remote = try RemoteLocation.fileSystem(for: url)
        let uploads = root.appendingPathComponent("uploads")
        try FileManager.default.createDirectory(at: uploads, withIntermediateDirectories: true)
        let curlConfig = root.appendingPathComponent("curl-config")
        var uploaded: [URL] = []
        let webDAVDocument = try await Self.fabricate(remote, count: webDAV) { fabricator, files in
            var requests: [(upload: URL?, path: String)] = []
            for (path, bytes) in files {
                let file = uploads.appendingPathComponent(path.name)
                try Self.writeFile(file, bytes: bytes)
                requests.append((file, path.description))
            }
            _ = try Floors.curlParallelSeconds(requests, baseURL: base, parallel: 8, scratch: curlConfig)
            uploaded = requests.map { $0.upload! }
        }
        // The floor's files: the removable ones' bytes, in a folder of their own.
        let floorPath = try RemotePath("bench-vacuum-floor-\(UUID().uuidString.prefix(8))")
        try await remote.createDirectory(at: floorPath)
        let floorFiles = uploaded.prefix(webDAV)
        _ = try Floors.curlParallelSeconds(
            floorFiles.map { ($0, floorPath.appending($0.lastPathComponent).description) },
            baseURL: base, parallel: 8, scratch: curlConfig)
        context.log("WebDAV: vacuum, then curl DELETEs")
        let webDAVVacuum = try await Self.vacuum(remote, webDAVDocument, expecting: webDAV)
        let deletes = try Floors.curlParallelSeconds(
            floorFiles.map { (nil, floorPath.appending($0.lastPathComponent).description) },
            baseURL: base, parallel: 8, scratch: curlConfig)
        try await remote.remove(floorPath)
        try await remote.remove(webDAVDocument.layout.documentDirectory(webDAVDocument.document))
        Self.report(webDAVVacuum, count: webDAV, label: "WebDAV", into: &result)
        result.figure("WebDAV: curl DELETEs of the same number of files, 8 at a time", deletes, "s")
        result.check("WebDAV: (vacuum + purge) / curl DELETEs", webDAVVacuum.vacuum / deletes, atMost: 1.5)
        return result
    }

    static func report(_ timing: Timing, count: Int, label: String, into result: inout ScenarioResult) {
        result.figure("\(label): dry run before it (listing, markers, whole store, plan)", timing.dryRun, "s")
        result.figure("\(label): vacuum (moves into the removed area)", timing.move, "s")
        result.figure("\(label): later vacuum purging them (grace period passed)", timing.purge, "s")
        result.figure("\(label): vacuum and purge per removed change set", timing.vacuum / Double(count) * 1e6, "µs")
        result.figure("\(label): requests of the vacuum", Double(timing.requests), "")
        result.figure("\(label): requests of the purge", Double(timing.purgeRequests), "")
        if let http = timing.httpRequests {
            result.figure("\(label): HTTP requests of the vacuum per moved file", Double(http.move) / Double(count), "")
            result.figure(
                "\(label): HTTP requests of the purge per purged file", Double(http.purge) / Double(count), "")
        }
    }

    /// A document of A's `count + kept` change sets (their files written by `writeFiles`), all acknowledged by B,
    /// the first `count` in B's whole store.
    static func fabricate(
        _ remote: any RemoteFileSystem, count: Int,
        writeFiles: (DocumentFabricator, [(RemotePath, Int)]) async throws -> Void
    ) async throws -> DocumentFabricator {
        let fabricator = try DocumentFabricator(
            remote, applicationIdentifier: BenchSchema.applicationIdentifier,
            document: "vacuum-\(UUID().uuidString.prefix(8))", date: Date())
        try await fabricator.createDocumentFolders()
        try await remote.createDirectory(at: fabricator.layout.syncChangesDirectory(fabricator.document, client: "A"))
        let published = Int64(count + kept)
        try await writeFiles(
            fabricator, zip(1...published, sizes(count + kept)).map { (fabricator.changeSetPath("A", $0), $1) })
        try await fabricator.recentSync("A", acknowledgement: [:], published: published)
        try await fabricator.recentSync("B", acknowledgement: ["A": published])
        try await fabricator.wholeStore("B", covers: ["A": Int64(count)])
        return fabricator
    }

    /// The sizes of `count` change-set files: 200 to 2,000 bytes, the same in every run.
    static func sizes(_ count: Int) -> [Int] {
        (0..<count).map { 200 + ($0 &* 7_919) % 1_800 }
    }

    /// Writes a file of `bytes` bytes without fsync (a fabricated tree need not be durable).
    static func writeFile(_ url: URL, bytes: Int) throws {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw BenchError("cannot create \(url.path)") }
        defer { close(fd) }
        let written = [UInt8](repeating: 0x5A, count: bytes).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes else { throw BenchError("cannot write \(url.path)") }
    }

    /// What one vacuum of the fabricated document took: a dry run first (listing, markers, whole store, plan),
    /// then the vacuum, checked to have removed exactly the removable change sets.
    struct Timing {
        var dryRun: Double
        /// The vacuum that moves the removable files into the removed area.
        var move: Double
        /// The vacuum after the grace period that purges them.
        var purge: Double
        var requests: Int
        var purgeRequests: Int
        /// HTTP requests the WebDAV backend sent (its statistics) for the vacuum and for the purge.
        var httpRequests: (move: Int, purge: Int)?
        /// What is judged: removing the files, from the vacuum to their purge.
        var vacuum: Double { move + purge }
    }

    static func vacuum(_ remote: any RemoteFileSystem, _ fabricator: DocumentFabricator, expecting count: Int)
        async throws -> Timing
    {
        var environment = SyncEnvironment.live
        environment.logger.logLevel = .error
        let counting = CountingFileSystem(remote)
        let http = { (remote as? WebDAVFileSystem)?.statistics.requests }
        let context = DocumentOperationContext(
            fileSystem: counting, layout: fabricator.layout, documentIdentifier: fabricator.document,
            clientIdentifier: "foldersync", environment: environment)
        let maintenance = try DocumentMaintenance(context: context)
        var started = ContinuousClock.now
        _ = try await maintenance.vacuum(dryRun: true)
        let dryRun = (ContinuousClock.now - started).seconds
        try Floors.flushWrites()
        _ = counting.take()
        let httpBefore = http()
        started = ContinuousClock.now
        let report = try await maintenance.vacuum()
        let seconds = (ContinuousClock.now - started).seconds
        let requests = counting.take().requests
        let httpAfterMove = http()
        guard report.removedChangeSets.count == count, report.failures.isEmpty else {
            throw BenchError(
                "the vacuum removed \(report.removedChangeSets.count) change sets, expected \(count); \(report.failures.count) failures"
            )
        }
        let left = try await remote.contentsOfDirectory(
            at: fabricator.layout.syncChangesDirectory(fabricator.document, client: "A"))
        guard left.count == kept else {
            throw BenchError("\(left.count) change sets left after the vacuum, expected \(kept)")
        }
        // The same files' later purge: a vacuum once the grace period has passed by the folder's clock.
        try Floors.flushWrites()
        counting.folderClockAhead = VacuumOperation.defaultRemovedFileGracePeriod + 86_400
        let httpBeforePurge = http()
        started = ContinuousClock.now
        let purge = try await maintenance.vacuum()
        let purgeSeconds = (ContinuousClock.now - started).seconds
        let purgeRequests = counting.take().requests
        let httpAfterPurge = http()
        guard let removal = report.removalFolder, purge.purgedRemovals == [removal], purge.failures.isEmpty,
            try await remote.item(at: removal) == nil
        else {
            throw BenchError(
                "the later vacuum purged \(purge.purgedRemovals), expected \(report.removalFolder.map { "\($0)" } ?? "a removal")"
            )
        }
        var httpRequests: (move: Int, purge: Int)?
        if let httpBefore, let httpAfterMove, let httpBeforePurge, let httpAfterPurge {
            httpRequests = (httpAfterMove - httpBefore, httpAfterPurge - httpBeforePurge)
        }
        return Timing(
            dryRun: dryRun, move: seconds, purge: purgeSeconds, requests: requests, purgeRequests: purgeRequests,
            httpRequests: httpRequests)
    }
}
