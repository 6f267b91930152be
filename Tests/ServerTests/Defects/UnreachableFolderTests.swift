import FolderSyncTesting
import FolderSyncWebDAV
import Foundation
import TestProcesses
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Issue 38, item 12: a shared folder that is away was reported as damaged: a root that is not there as
/// `remoteItemNotFound: no such directory`, a mount vanishing mid-sync as `remoteItemNotFound … (com.example.notes)`,
/// a dead FUSE mount as `remoteIOFailed: … Transport endpoint is not connected`. Every way the folder can be away is
/// `remoteUnavailable`, so that an app tells "away, try later" from "damaged"; nothing is written, no reset, and the
/// folder back, the devices converge.
@Suite("Unreachable folders", .serialized)
struct UnreachableFolderTests {
    static func expectAway(_ client: TestClient, _ label: String) async {
        await #expect { try await client.sync() } throws: {
            ($0 as? FolderSyncError)?.code == .remoteUnavailable && !(($0 as? FolderSyncError)?.isReset ?? true)
        }
        #expect(client.document.resetState == nil, "\(label)")
        #expect(
            !FileManager.default.fileExists(atPath: client.document.localLayout.backupsDirectory.path),
            "\(label): a backup")
    }

    @Test("notes, the shared folder's root not there (a share whose mount point does not exist): remoteUnavailable")
    func rootMissing() throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let notes = buildProductsDirectory.appendingPathComponent("notes").path
        let database = directory.url.appendingPathComponent("a.sqlite").path
        #expect(try Subprocess.run(notes, ["--db", database, "add", "a note"]).status == 0)
        #expect(try Subprocess.run(notes, ["--db", database, "--remote", shared.path, "sync"]).status == 0)
        try FileManager.default.moveItem(at: shared, to: directory.url.appendingPathComponent("elsewhere"))
        let away = try Subprocess.run(notes, ["--db", database, "--remote", shared.path, "sync"])
        #expect(
            away.status == 1 && away.errors.contains("remoteUnavailable") && away.errors.contains(shared.path),
            "\(away.errors)")
        #expect(!FileManager.default.fileExists(atPath: shared.path), "the root was created")
    }

    /// A shared folder that goes away at its `after`-th request: the root moved away, or replaced by an empty folder
    /// (a mount point whose share was unmounted).
    final class VanishingFileSystem: ForwardingFileSystem, @unchecked Sendable {
        let root: URL, away: URL, replacing: Bool, after: Int
        let requests = Locked(0)
        let log = Locked<[String]>([])
        init(root: URL, away: URL, replacing: Bool, after: Int) {
            (self.root, self.away, self.replacing, self.after) = (root, away, replacing, after)
            super.init(FileManagerFileSystem(rootURL: root))
        }
        override func willForward(_ request: Request, path: RemotePath) async throws {
            log.withLock { $0.append("\(request.rawValue) \(path)") }
            guard
                requests.withLock({
                    $0 += 1
                    return $0
                }) == after
            else { return }
            try FileManager.default.moveItem(at: root, to: away)
            if replacing { try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false) }
        }
    }

    @Test(
        "A shared folder that goes away mid-sync, at each of the sync's requests: remoteUnavailable, nothing written, then converges",
        arguments: ["moved away", "replaced by an empty folder"])
    func vanishedMidSync(_ how: String) async throws {
        var vanished = 0
        for after in 1... {
            try #require(after < 200, "a sync made more than 200 requests")
            let directory = TemporaryDirectory("vanished\(after)")
            let root = directory.subdirectory("shared")
            let away = directory.url.appendingPathComponent("away")
            let b = try await TestClient.launch(FileManagerFileSystem(rootURL: root), name: "B", in: directory)
            _ = try await TestClient.launch(FileManagerFileSystem(rootURL: root), name: "A", in: directory)
            try b.execute("INSERT INTO notes(id, title) VALUES ('b1', 'from B')")
            try await b.sync()
            // A new launch of A, whose remote goes away at its `after`-th request.
            let vanishing = VanishingFileSystem(root: root, away: away, replacing: how != "moved away", after: after)
            let relaunched = try await TestClient.launch(vanishing, name: "A", in: directory)
            try relaunched.execute("INSERT INTO notes(id, title) VALUES ('a1', 'from A')")
            var failure: FolderSyncError?
            do { try await relaunched.sync() } catch let error as FolderSyncError { failure = error }
            guard vanishing.requests.current >= after else {
                // The sync made fewer requests than `after`: every one of them was tried.
                #expect(failure == nil, "\(String(describing: failure))")
                break
            }
            if let failure {
                #expect(
                    failure.code == .remoteUnavailable,
                    "away at request \(after) of \(vanishing.log.current): \(failure)")
                vanished += 1
            }
            #expect(relaunched.document.resetState == nil, "away at request \(after)")
            if how != "moved away" {
                #expect(treeListing(of: root).isEmpty, "away at request \(after): wrote \(treeListing(of: root))")
                try FileManager.default.removeItem(at: root)
            } else {
                #expect(
                    !FileManager.default.fileExists(atPath: root.path), "away at request \(after): the root was created"
                )
            }
            try FileManager.default.moveItem(at: away, to: root)
            try await converge(relaunched, b)
            #expect(try NotesSchema.dump(relaunched.store) == NotesSchema.dump(b.store))
        }
        #expect(vanished >= 4, "\(vanished)")
        print("\(how): a sync went away at each of its \(vanished) requests")
    }

    @Test(
        "A dead FUSE mount (the rclone mount's daemon killed: Transport endpoint is not connected): remoteUnavailable")
    func deadFuseMount() async throws {
        let directory = TemporaryDirectory()
        let proxy = try await FaultProxy(root: directory.subdirectory("share"))
        let mountPoint = directory.url.appendingPathComponent("mount")
        let mount = try RcloneMount(
            share: proxy.url, at: mountPoint, log: directory.url.appendingPathComponent("rclone.log"))
        defer { mount.unmount() }
        try #require(mount.failure == nil, "\(mount.failure ?? "")")
        let a = try await TestClient.launch(FileManagerFileSystem(rootURL: mountPoint), name: "A", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'through the mount')")
        try await a.sync()

        let daemon = try #require(Self.rcloneDaemon(mounting: mountPoint))
        #expect(kill(daemon, SIGKILL) == 0)
        // A request to a FUSE mount whose daemon is dying waits for its end and is aborted (ECONNABORTED); every later
        // one fails with ENOTCONN.
        var info = stat()
        _ = stat(mountPoint.path, &info)
        let status = stat(mountPoint.path, &info)
        let code = errno
        #expect(status != 0 && code == ENOTCONN, "\(String(cString: strerror(code)))")
        let relaunched = try await TestClient.launch(
            FileManagerFileSystem(rootURL: mountPoint), name: "A", in: directory)
        await Self.expectAway(relaunched, "dead mount")
        await Self.expectAway(a, "dead mount, the same launch")
        _ = await proxy.stop()
    }

    /// The process id of the `rclone mount` daemon serving `mountPoint`, read from `/proc`.
    static func rcloneDaemon(mounting mountPoint: URL) -> pid_t? {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(name), let data = FileManager.default.contents(atPath: "/proc/\(name)/cmdline") else {
                continue
            }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if arguments.first?.hasSuffix("rclone") == true, arguments.contains("mount"),
                arguments.contains(mountPoint.path)
            {
                return pid
            }
        }
        return nil
    }

    @Test(
        "A WebDAV server that refuses connections, or accepts and never answers: a registered client's sync is remoteUnavailable",
        arguments: ["refuses", "never answers"])
    func serverAway(_ how: String) async throws {
        let directory = TemporaryDirectory()
        let proxy = try await FaultProxy(root: directory.subdirectory("share"))
        var configuration = WebDAVFileSystem.Configuration(baseURL: proxy.url)
        let a = try await TestClient.launch(
            try WebDAVFileSystem(configuration: configuration), name: "A", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'before')")
        try await a.sync()
        _ = await proxy.stop()
        let hanging = how == "refuses" ? nil : try await MisbehavingServer([["hang": true]])
        configuration.baseURL = hanging?.url ?? proxy.url
        configuration.requestTimeout = 1
        configuration.retryPolicy = WebDAVRetryPolicy(maximumAttempts: 1, initialDelay: .milliseconds(10))
        let relaunched = try await TestClient.launch(
            try WebDAVFileSystem(configuration: configuration), name: "A", in: directory)
        await Self.expectAway(relaunched, how)
        _ = await hanging?.stop()
    }
}
