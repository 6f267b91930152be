import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Issue 38, item 9: `doctor` beside clients that publish. A change set in flight (its marker, which carries it or
/// names it, seen before its file) is never an error; a gap is reported only when a second look confirms it.
@Suite("doctor beside publishing clients")
struct DoctorInFlightTests {
    /// Holds the requests `holds` picks (by default uploads into `SyncChanges/`) until ``release()``, and says when one
    /// is held and when a marker is written.
    final class HeldUploads: ForwardingFileSystem, @unchecked Sendable {
        private let holds: @Sendable (Request, String) -> Bool
        private let state = Locked(State())
        private struct State {
            var held: [CheckedContinuation<Void, Never>] = []
            var released = false
            var arrived: CheckedContinuation<Void, Never>?
            var markerWritten: CheckedContinuation<Void, Never>?
            var markerDone = false
        }

        init(
            _ base: any RemoteFileSystem,
            holds: @escaping @Sendable (Request, String) -> Bool = { $0 == .upload && $1.contains("/SyncChanges/") }
        ) {
            self.holds = holds
            super.init(base)
        }

        override func willForward(_ request: Request, path: RemotePath) async throws {
            guard holds(request, path.description) else { return }
            await withCheckedContinuation { continuation in
                let (resume, arrived) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                    if state.released { return (true, nil) }
                    state.held.append(continuation)
                    defer { state.arrived = nil }
                    return (false, state.arrived)
                }
                arrived?.resume()
                if resume { continuation.resume() }
            }
        }

        /// Returns once a request is held.
        func waitForHeld() async {
            await withCheckedContinuation { continuation in
                let held = state.withLock { state -> Bool in
                    if !state.held.isEmpty { return true }
                    state.arrived = continuation
                    return false
                }
                if held { continuation.resume() }
            }
        }

        override func write(_ data: Data, to path: RemotePath) async throws {
            try await super.write(data, to: path)
            guard path.description.contains("/RecentSyncs/") else { return }
            state.withLock { state in
                state.markerDone = true
                state.markerWritten?.resume()
                state.markerWritten = nil
            }
        }

        func waitForMarker() async {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state -> Bool in
                    if state.markerDone { return true }
                    state.markerWritten = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        }

        func release() {
            let held = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.released = true
                defer { state.held = [] }
                return state.held
            }
            for continuation in held { continuation.resume() }
        }
    }

    /// Runs `body` (once) when the doctor has listed `SyncChanges/<client>`, before the listing reaches it: a client
    /// publishing between the doctor's listing and its read of the markers.
    final class PublishAfterListing: ForwardingFileSystem, @unchecked Sendable {
        let client: String
        let body: @Sendable () async throws -> Void
        private let ran = Locked(false)

        init(_ base: any RemoteFileSystem, client: String, body: @escaping @Sendable () async throws -> Void) {
            self.client = client
            self.body = body
            super.init(base)
        }

        override func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
            let listing = try await super.contentsOfDirectory(at: path)
            let first =
                path.name == client && path.parent.name == "SyncChanges"
                && ran.withLock { ran in
                    defer { ran = true }
                    return !ran
                }
            if first { try await body() }
            return listing
        }
    }

    private func gaps(_ report: DoctorReport) -> [DoctorFinding] {
        report.findings.filter { $0.check == .sequenceGap }
    }

    @Test("A change set whose marker carries it, its own upload still in flight, is not a gap")
    func markerCarriesSetInFlight() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let held = HeldUploads(FileManagerFileSystem(rootURL: root))
        let a = try await TestClient.make(held, name: "A", in: directory)
        held.release()
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        try await a.sync()
        let next = HeldUploads(FileManagerFileSystem(rootURL: root))
        let publisher = try await TestClient.make(next, name: "A", in: directory)
        try publisher.execute("INSERT INTO notes(id, title) VALUES ('n2', 'two')")
        let sync = Task { try await publisher.sync() }
        await next.waitForMarker()
        let doctor = try RemoteTreeDoctor(
            fileSystem: FileManagerFileSystem(rootURL: root), applicationIdentifier: "com.example.notes")
        let report = try await doctor.examine()
        #expect(gaps(report).isEmpty, "\(gaps(report))")
        next.release()
        let published = try await sync.value
        #expect(published.changeSetsSent == 1)
        #expect(try await doctor.examine().isHealthy)
    }

    @Test(
        "A change set published after the doctor listed its client's folder, and named by the marker the doctor then reads, is found by a second look"
    )
    func publishedBetweenListingAndMarker() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let a = try await TestClient.make(FileManagerFileSystem(rootURL: root), name: "A", in: directory)
        a.document.policy.carriesChangeSetsInMarkers = false
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        try await a.sync()
        try a.execute("INSERT INTO notes(id, title) VALUES ('n2', 'two')")
        let racing = PublishAfterListing(FileManagerFileSystem(rootURL: root), client: "client-A") {
            let report = try await a.sync()
            #expect(report.changeSetsSent == 1)
        }
        let report = try await RemoteTreeDoctor(fileSystem: racing, applicationIdentifier: "com.example.notes")
            .examine()
        #expect(gaps(report).isEmpty, "\(gaps(report))")
        #expect(report.isHealthy, "\(report.findings)")
    }

    @Test("A gap that is there at the second look is still reported")
    func realGapReported() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let a = try await TestClient.make(FileManagerFileSystem(rootURL: root), name: "A", in: directory)
        for n in 1...3 {
            try a.execute("INSERT INTO notes(id, title) VALUES (?, 'n')", ["n\(n)"])
            try await a.sync()
        }
        let folder = root.appendingPathComponent("com.example.notes/Documents/DOC/SyncChanges/client-A")
        let second = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasPrefix("000000000002-") })
        try FileManager.default.removeItem(at: folder.appendingPathComponent(second))
        let report = try await RemoteTreeDoctor(
            fileSystem: FileManagerFileSystem(rootURL: root), applicationIdentifier: "com.example.notes"
        ).examine()
        #expect(
            gaps(report).count == 1
                && gaps(report).first?.message.contains("sequence 2 of client client-A is missing") == true,
            "\(report.findings)")
    }

    @Test(
        "doctor run again and again beside three devices that publish through the notes app never reports a gap",
        .timeLimit(.minutes(10)))
    func loopingDoctorBesidePublishingDevices() async throws {
        let directory = TemporaryDirectory()
        let devices = NotesProcessTests.devices(3, in: directory)
        for device in devices { _ = try await device.succeed(["sync"]) }
        let finished = Locked(false)
        let verdicts = Task {
            var runs: [FoldersyncTool.Result] = []
            // At least a few runs, and on until every device has published all its notes.
            while runs.count < 5 || !finished.current {
                runs.append(try await FoldersyncTool.run(["doctor", "--remote", devices[0].remote.path, "--json"]))
            }
            return runs
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for device in devices {
                group.addTask {
                    for round in 1...6 {
                        _ = try await device.succeed(["add", "\(device.name) note \(round)"])
                        _ = try await device.succeed(["sync"])
                    }
                }
            }
            try await group.waitForAll()
        }
        finished.withLock { $0 = true }
        let runs = try await verdicts.value
        #expect(runs.count >= 5)
        for run in runs {
            #expect(
                run.status == 0 && !run.output.contains("sequenceGap"),
                "doctor beside publishing devices: \(run.output)\(run.errors)")
        }
    }
}
