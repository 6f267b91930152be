import Foundation
import TestProcesses

/// `Tests/MisbehavingHTTPServer/server.py` started on 127.0.0.1 with a script of answers, for retry and error tests.
final class MisbehavingServer: Sendable {
    private let process: Subprocess
    let url: URL

    /// Starts the server and waits for it to print its port.
    init(_ answers: [[String: any Sendable]]) async throws {
        let script = repositoryRoot.appendingPathComponent("Tests/MisbehavingHTTPServer/server.py")
        let json = String(decoding: try JSONSerialization.data(withJSONObject: answers), as: UTF8.self)
        let process = try Subprocess.start("/usr/bin/env", ["python3", script.path, json], standardInput: .pipe)
        self.process = process
        let line: String = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var data = Data()
                while !data.contains(UInt8(ascii: "\n")) {
                    let chunk = process.readOutput()
                    if chunk.isEmpty { break }
                    data.append(chunk)
                }
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
        }
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.kill()
            throw MisbehavingServerFailure(description: "the misbehaving server did not start: \(line)")
        }
        url = URL(string: "http://127.0.0.1:\(port)/share/")!
    }

    /// Stops the server (closing its input) and returns the requests it saw, one "METHOD PATH BODY-LENGTH" each.
    func stop() async -> [String] {
        process.closeStandardInput()
        return await process.finished().errors.split(separator: "\n").map(String.init)
    }
}

struct MisbehavingServerFailure: Error, CustomStringConvertible {
    let description: String
}
