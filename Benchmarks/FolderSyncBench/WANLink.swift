import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A wide-area link in front of the WebDAV server: `Benchmarks/wan_proxy.py` (a delaying, rate-limited TCP proxy on
/// 127.0.0.1) run as a child process for as long as this object lives.
///
/// This kernel has no `tc netem`, so the delay is made in user space. The proxy's standard input is a pipe this
/// process holds: if the benchmark dies, the proxy sees its input close and exits too.
final class WANLink {
    /// One-way delay and rate of each direction, as the issue asks: a 50 ms round trip and a 20 Mbit/s home line.
    static let oneWayDelay = 0.025
    static let bitsPerSecond = 20e6
    static var roundTrip: Double { 2 * oneWayDelay }

    /// The server's URL with the proxy's port in place of the server's.
    let url: String
    private let pid: pid_t
    private var input: Int32

    /// The proxy's script: `FOLDERSYNC_BENCH_WAN_PROXY`, or beside this source folder.
    static var script: String {
        ProcessInfo.processInfo.environment["FOLDERSYNC_BENCH_WAN_PROXY"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("wan_proxy.py").path
    }

    /// Starts the proxy in front of `serverURL` (an `http://user:password@127.0.0.1:port/…` URL) and waits until it
    /// listens.
    init(inFrontOf serverURL: String) throws {
        guard var components = URLComponents(string: serverURL), let host = components.host, let port = components.port
        else {
            throw BenchError("the WebDAV URL has no host and port")
        }
        guard FileManager.default.fileExists(atPath: Self.script) else {
            throw BenchError("no WAN proxy at \(Self.script)")
        }
        var toChild: [Int32] = [0, 0]
        var fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { throw BenchError("pipe failed") }
        // The parent's ends must not leak into the child (nor into later children): close-on-exec.
        _ = fcntl(toChild[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fromChild[0], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        let arguments = [
            "python3", Self.script, "--target", "\(host):\(port)",
            "--delay", "\(Self.oneWayDelay)", "--rate", "\(Self.bitsPerSecond)",
        ]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        close(toChild[0])
        close(fromChild[1])
        guard spawned == 0 else {
            close(toChild[1])
            close(fromChild[0])
            throw BenchError("cannot start python3: \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        self.input = toChild[1]
        // Its first line, "port N", comes once it listens; end of file means it failed.
        var line = [UInt8]()
        var byte: UInt8 = 0
        while read(fromChild[0], &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        close(fromChild[0])
        let words = String(decoding: line, as: UTF8.self).split(separator: " ")
        guard words.count == 2, words[0] == "port", let proxyPort = Int(words[1]) else {
            Self.stop(pid: pid, input: &input)
            throw BenchError("the WAN proxy did not start (it printed \"\(String(decoding: line, as: UTF8.self))\")")
        }
        components.port = proxyPort
        url = components.string ?? serverURL
    }

    deinit { Self.stop(pid: pid, input: &input) }

    /// Closes the proxy's input, which ends it, and waits for it.
    private static func stop(pid: pid_t, input: inout Int32) {
        guard input >= 0 else { return }
        close(input)
        input = -1
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
}
