import Foundation

/// `Tests/MisbehavingHTTPServer/server.py` started on 127.0.0.1 with a script of answers, for retry and error tests.
final class MisbehavingServer: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    let url: URL

    /// Starts the server and waits for it to print its port.
    init(_ answers: [[String: any Sendable]]) async throws {
        let script = repositoryRoot.appendingPathComponent("Tests/MisbehavingHTTPServer/server.py")
        let json = String(decoding: try JSONSerialization.data(withJSONObject: answers), as: UTF8.self)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, json]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let handle = output.fileHandleForReading
        let line: String = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var data = Data()
                while !data.contains(UInt8(ascii: "\n")) {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    data.append(chunk)
                }
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
        }
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw MisbehavingServerFailure(description: "the misbehaving server did not start: \(line)")
        }
        url = URL(string: "http://127.0.0.1:\(port)/share/")!
    }

    /// Stops the server (closing its input) and returns the requests it saw, one "METHOD PATH BODY-LENGTH" each.
    func stop() async -> [String] {
        try? input.fileHandleForWriting.close()
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let data = self.errors.fileHandleForReading.readAllRetryingInterruptions()
                self.process.waitUntilExit()
                continuation.resume(returning: String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init))
            }
        }
    }
}

struct MisbehavingServerFailure: Error, CustomStringConvertible {
    let description: String
}
