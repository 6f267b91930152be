@_spi(Tooling) import FolderSync
import FolderSyncWebDAV
import Foundation
import TestProcesses
import Testing

@testable import TestSupport

/// What waiting for a WebDAV server costs: the tools run as processes against a server that hangs or answers late,
/// and their CPU time (user and system, every thread, from `wait4`) is compared with how long they waited.
///
/// URLSession on Linux kept polling the socket for writing while it waited for an answer: a hung server cost
/// 18 s of CPU in 20 s. `FOLDERSYNC_HTTP_ENGINE=urlsession` in the environment of `swift test` brings that
/// engine back, and these tests then fail.
@Suite("Waiting for a WebDAV server", .serialized)
struct WebDAVWaitCostTests {
    /// The share of the waiting time the tools may spend on the CPU: starting up, a few requests, one wake-up a
    /// second for libcurl's speed check. A spinning wait uses more than 100 % (two threads).
    static let cpuShare = 0.15

    @Test(
        "A server that accepts connections and never answers: foldersync waits four timeouts of FOLDERSYNC_WEBDAV_TIMEOUT, on almost no CPU, and says so in one line"
    )
    func hungServerFoldersync() async throws {
        let server = try await MisbehavingServer([["hang": true]])
        let result = try await FoldersyncTool.run(
            ["documents", "list", "--remote", server.url.absoluteString],
            environment: ["FOLDERSYNC_WEBDAV_TIMEOUT": "1"])
        let requests = await server.stop()
        #expect(result.status == 2)
        #expect(
            result.errors.hasPrefix("foldersync: ") && result.errors.contains("did not answer within 1 s"),
            "\(result.errors)")
        #expect(result.errors.split(separator: "\n").count == 1, "\(result.errors)")
        #expect(requests.count == 4, "four attempts of one timeout each: \(requests)")
        #expect(result.wallSeconds >= 4, "each attempt waits its whole timeout: \(result.wallSeconds) s")
        #expect(
            result.cpuSeconds < Self.cpuShare * result.wallSeconds,
            "waiting \(result.wallSeconds) s cost \(result.cpuSeconds) s of CPU")
        print("hung server: foldersync waited \(result.wallSeconds) s on \(result.cpuSeconds) s of CPU")
    }

    @Test("A server that answers after 3 s costs foldersync almost no CPU while it waits")
    func slowServerFoldersync() async throws {
        let server = try await MisbehavingServer([["delay": 3, "status": 404]])
        let result = try await FoldersyncTool.run(["documents", "list", "--remote", server.url.absoluteString])
        _ = await server.stop()
        #expect(result.status == 2, "\(result.errors)")
        #expect(result.wallSeconds >= 3)
        #expect(
            result.cpuSeconds < Self.cpuShare * result.wallSeconds,
            "waiting \(result.wallSeconds) s cost \(result.cpuSeconds) s of CPU")
        print("slow server: foldersync waited \(result.wallSeconds) s on \(result.cpuSeconds) s of CPU")
    }

    @Test("notes waiting for a hung server costs almost no CPU, and stops after its attempts with one line")
    func hungServerNotes() async throws {
        let directory = TemporaryDirectory()
        let server = try await MisbehavingServer([["hang": true]])
        let start = ContinuousClock.now
        let result = try await ChildProcess(
            "notes",
            [
                "--db", directory.url.appendingPathComponent("n.sqlite").path,
                "--remote", server.url.absoluteString, "--client-name", "t", "sync",
            ],
            environment: ["FOLDERSYNC_WEBDAV_TIMEOUT": "1"]
        ).finishMeasured()
        let elapsed = ContinuousClock.now - start
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        _ = await server.stop()
        #expect(result.status == 1)
        #expect(
            result.errors.contains("did not answer within 1 s") && result.errors.split(separator: "\n").count == 1,
            "\(result.errors)")
        #expect(wall >= 4)
        #expect(result.cpuSeconds < Self.cpuShare * wall, "waiting \(wall) s cost \(result.cpuSeconds) s of CPU")
    }

    @Test("FOLDERSYNC_WEBDAV_TIMEOUT must be a positive number of seconds")
    func invalidTimeout() throws {
        for value in ["abc", "0", "-3", ""] {
            #expect(throws: FolderSyncError.self) {
                try RemoteLocation.fileSystem(
                    for: "http://127.0.0.1:1/share", environment: [RemoteLocation.timeoutVariable: value])
            }
        }
        let remote = try RemoteLocation.fileSystem(
            for: "http://127.0.0.1:1/share", environment: [RemoteLocation.timeoutVariable: "2.5"])
        #expect((remote as? WebDAVFileSystem)?.requestTimeout == 2.5)
    }
}
