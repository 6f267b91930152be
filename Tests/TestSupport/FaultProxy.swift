import Foundation
import TestProcesses

/// `Tests/FaultProxy/fault_proxy.py`: a wsgidav server of the test's own, behind a proxy on 127.0.0.1 that
/// injects faults (503 with Retry-After, dropped connections, delays, torn uploads) or holds an upload
/// half-way so the test can kill and restart the server under it.
final class FaultProxy: @unchecked Sendable {
    private let process: Subprocess
    private var lines: AsyncStream<String>.Iterator
    /// The proxy's URL (the share's root).
    private(set) var url = URL(string: "http://127.0.0.1/")!

    /// Starts the server and the proxy; `seed` turns faults on (after ``storm()``), `hold` holds the first PUT whose
    /// path contains it.
    init(root: URL, seed: Int? = nil, hold: String? = nil) async throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let script = repositoryRoot.appendingPathComponent("Tests/FaultProxy/fault_proxy.py")
        let process = try Subprocess.start(
            "/usr/bin/env",
            ["python3", script.path, "--root", root.path]
                + (seed.map { ["--seed", String($0)] } ?? []) + (hold.map { ["--hold", $0] } ?? []),
            standardInput: .pipe)
        self.process = process
        lines = AsyncStream<String> { continuation in
            Thread.detachNewThread {
                var buffer = Data()
                while true {
                    let chunk = process.readOutput()
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                    while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                        continuation.yield(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                        buffer = Data(buffer[(newline + 1)...])
                    }
                }
                continuation.finish()
            }
        }.makeAsyncIterator()
        let first = try await waitFor("port ")
        guard let port = Int(first.dropFirst("port ".count)) else {
            throw MisbehavingServerFailure(description: "fault proxy: \(first)")
        }
        url = URL(string: "http://127.0.0.1:\(port)/")!
    }

    /// Waits for the next line starting with `prefix` (the proxy's answer to a command, or an event).
    @discardableResult
    func waitFor(_ prefix: String) async throws -> String {
        while let line = await lines.next() {
            if line.hasPrefix(prefix) { return line }
        }
        throw MisbehavingServerFailure(description: "the fault proxy stopped before printing \(prefix)")
    }

    /// Writes a command line to the proxy; one that has exited says so through ``waitFor(_:)`` and ``stop()``.
    func send(_ command: String) {
        try? process.writeToStandardInput(Data((command + "\n").utf8))
    }

    /// Stops the proxy and its server; returns its log, one "KIND METHOD PATH" per request.
    func stop() async -> [String] {
        process.closeStandardInput()
        // Standard error only: the thread of `lines` reads standard output to its end.
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let log = String(decoding: self.process.readAllErrors(), as: UTF8.self)
                self.process.waitForExit()
                continuation.resume(returning: log.split(separator: "\n").map(String.init))
            }
        }
    }
}
