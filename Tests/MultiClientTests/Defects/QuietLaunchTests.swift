import Foundation
import TestProcesses
import Testing

#if canImport(Glibc)
import Glibc
@testable import TestSupport
#endif

/// Issue 38, item 10: every `notes sync` rewrote `deviceInfo.plist` and re-created its folders (19–20 requests for
/// an idle sync over nginx), so a device with nothing to publish could not sync from a read-only or full share, and
/// a failed upload left its torn temporary on a full one, which then stopped every device. Through the built
/// `notes`, on local folders, read-only bind mounts, small tmpfs mounts and a WebDAV server (`FaultProxy`).
@Suite("Quiet launches", .serialized)
struct QuietLaunchTests {
    struct Device {
        let database: URL

        /// `notes --db … --remote remote arguments…`, under `faketime -f offset` when given.
        func run(_ remote: String, _ arguments: [String], faketime offset: String? = nil) throws -> Subprocess.Result {
            let notes = buildProductsDirectory.appendingPathComponent("notes").path
            let command = ["--db", database.path, "--remote", remote] + arguments
            guard let offset else { return try Subprocess.run(notes, command) }
            return try Subprocess.run("/usr/bin/faketime", ["-f", offset, notes] + command)
        }

        func succeed(_ remote: String, _ arguments: [String], faketime offset: String? = nil) throws -> String {
            let result = try run(remote, arguments, faketime: offset)
            #expect(result.status == 0, "\(database.lastPathComponent) \(arguments): \(result.errors)")
            return result.output
        }
    }

    /// A and B registered on `remote`, each with a note the other has applied.
    static func twoDevices(on remote: String, in directory: TemporaryDirectory) throws -> (Device, Device) {
        let a = Device(database: directory.url.appendingPathComponent("a.sqlite"))
        let b = Device(database: directory.url.appendingPathComponent("b.sqlite"))
        _ = try a.succeed(remote, ["add", "from A"])
        _ = try a.succeed(remote, ["sync"])
        _ = try b.succeed(remote, ["add", "from B"])
        _ = try b.succeed(remote, ["sync"])
        _ = try a.succeed(remote, ["sync"])
        return (a, b)
    }

    /// Every file and folder under `root` with its inode, modification time and size: equal when nothing was written.
    static func state(of root: URL) -> [String: String] {
        var state: [String: String] = [:]
        for path in treeListing(of: root) {
            var info = stat()
            _ = lstat(root.appendingPathComponent(path).path, &info)
            state[path] = "\(info.st_ino) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_size)"
        }
        return state
    }

    static func mount(_ arguments: [String]) throws {
        let result = try Subprocess.run("/bin/mount", arguments)
        try #require(result.status == 0, "mount \(arguments): \(result.errors) (these tests run as root)")
    }

    @Test("A launch whose registration is on the folder writes nothing, whether it applies others' notes or is idle")
    func launchWritesNothing() throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let (a, b) = try Self.twoDevices(on: shared.path, in: directory)
        _ = try b.succeed(shared.path, ["add", "B's second note"])
        _ = try b.succeed(shared.path, ["sync"])
        let before = Self.state(of: shared)
        #expect(try a.succeed(shared.path, ["sync"]).contains("applied 1 change(s) from 1 set(s)"))
        #expect(try a.succeed(shared.path, ["sync"]).contains("applied 0 change(s)"))
        let after = Self.state(of: shared)
        #expect(after == before, "written: \(after.filter { before[$0.key] != $0.value }.keys.sorted())")
        #expect(try a.succeed(shared.path, ["list"]).contains("B's second note"))
    }

    @Test(
        "A reader of a read-only share applies others' notes; once its acknowledgement is due it warns that it cannot write it"
    )
    func readOnlyShare() throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let readOnly = directory.subdirectory("read-only")
        let (a, b) = try Self.twoDevices(on: shared.path, in: directory)
        try Self.mount(["--bind", shared.path, readOnly.path])
        defer { _ = try? Subprocess.run("/bin/umount", [readOnly.path]) }
        try Self.mount(["-o", "remount,bind,ro", readOnly.path])

        _ = try b.succeed(shared.path, ["add", "while A only reads"])
        _ = try b.succeed(shared.path, ["sync"])
        let within = try a.succeed(readOnly.path, ["sync"])
        #expect(within.contains("applied 1 change(s)") && !within.contains("warning"), "\(within)")
        // Two hours on, its heartbeat and acknowledgement are due: it registers again in full, reads, and warns.
        _ = try b.succeed(shared.path, ["add", "two hours later"])
        _ = try b.succeed(shared.path, ["sync"])
        let later = try a.succeed(readOnly.path, ["sync"], faketime: "+2h")
        #expect(
            later.contains("applied 1 change(s)") && later.contains("warning: acknowledgementNotWritten"), "\(later)")
        let notes = try a.succeed(readOnly.path, ["list"])
        #expect(notes.contains("while A only reads") && notes.contains("two hours later"))
    }

    @Test("An idle notes sync over WebDAV costs at most 4 requests")
    func idleSyncRequests() async throws {
        let directory = TemporaryDirectory()
        let share = directory.subdirectory("share")
        let setup = try await FaultProxy(root: share)
        let (a, _) = try Self.twoDevices(on: setup.url.absoluteString, in: directory)
        _ = await setup.stop()
        // A proxy of its own for the idle sync, on the same folder: its log holds that sync's requests only.
        let measured = try await FaultProxy(root: share)
        _ = try a.succeed(measured.url.absoluteString, ["sync"])
        let requests = await measured.stop().filter { $0.split(separator: " ").count == 3 }
        print("an idle notes sync: \(requests.count) requests: \(requests)")
        #expect(requests.count <= 4, "\(requests)")
        #expect(!requests.contains { $0.contains("PUT") || $0.contains("MOVE") || $0.contains("MKCOL") }, "\(requests)")
    }

    @Test(
        "A full share: a reader still syncs, and a failed upload leaves no temporary behind",
        arguments: ["local", "WebDAV"])
    func fullShare(_ backend: String) async throws {
        let directory = TemporaryDirectory()
        let small = directory.subdirectory("small")
        try Self.mount(["-t", "tmpfs", "-o", "size=3m", "tmpfs", small.path])
        defer { _ = try? Subprocess.run("/bin/umount", [small.path]) }
        let proxy = backend == "WebDAV" ? try await FaultProxy(root: small) : nil
        let remote = proxy?.url.absoluteString ?? small.path
        let (a, b) = try Self.twoDevices(on: remote, in: directory)

        // A note larger than the share: its change set cannot be stored.
        let big = directory.url.appendingPathComponent("big.txt")
        try FileHandle(forReadingAtPath: "/dev/urandom")!.readData(ofLength: 4 << 20).base64EncodedData().write(to: big)
        let added = try Subprocess.run(
            buildProductsDirectory.appendingPathComponent("notes").path,
            ["--db", a.database.path, "add", "-"], input: try Data(contentsOf: big))
        #expect(added.status == 0, "\(added.errors)")
        for _ in 0..<2 {
            let failed = try a.run(remote, ["sync"])
            #expect(failed.status == 1, "\(failed.output)")
            let leftovers = treeListing(of: small).filter { $0.contains(".foldersync-tmp-") }
            #expect(leftovers.isEmpty, "\(failed.errors): left \(leftovers)")
        }
        // The share full to the last block: a device with nothing to publish syncs all the same.
        let filler = small.appendingPathComponent("filler")
        _ = try? Subprocess.run("/bin/dd", ["if=/dev/zero", "of=\(filler.path)", "bs=64k"], standardError: .null)
        #expect(try b.succeed(remote, ["sync"]).contains("sent 0 change(s)"))
        _ = await proxy?.stop()
    }
}
