package import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension Subprocess {
    /// The exit status and the outputs of a child that has ended, decoded as UTF-8 (every caller reads text).
    package struct Result: Sendable {
        package var status: Int32
        package var output: String
        package var errors: String
        /// The CPU time the child used, user and system, in seconds.
        package var cpuSeconds: Double = 0
    }

    /// The next bytes the child writes to standard output, as soon as there are some; empty at its end.
    package func readOutput() -> Data {
        outputEnd.map(Self.readChunk) ?? Data()
    }

    /// Standard error to its end (every child holding it has closed it); empty when it is not a pipe.
    package func readAllErrors() -> Data {
        readAll([errorEnd])[0]
    }

    /// Standard output and error to their ends, read together: a child blocked on a full error pipe while this
    /// process waits for the end of its output would wait forever.
    package func readAllOutputs() -> (output: Data, errors: Data) {
        let both = readAll([outputEnd, errorEnd])
        return (both[0], both[1])
    }

    /// Reads both outputs to their end, then waits for the child to exit.
    package func finish() -> Result {
        let (output, errors) = readAllOutputs()
        let status = waitForExit()
        return Result(
            status: status, output: String(decoding: output, as: UTF8.self),
            errors: String(decoding: errors, as: UTF8.self),
            cpuSeconds: cpuSeconds ?? 0)
    }

    /// ``finish()`` on a Dispatch thread, so its blocking calls never hold a thread of Swift's cooperative pool.
    package func finished() async -> Result {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: self.finish()) }
        }
    }

    /// Starts `executable`, writes `input` (when given; small enough for a pipe's buffer, as it is written before
    /// any output is read) to its standard input and closes it, then finishes it. Blocks.
    package static func run(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        input: Data? = nil, standardError: StandardStream = .pipe
    ) throws -> Result {
        let process = try start(
            executable, arguments, environment: environment, standardInput: input == nil ? .null : .pipe,
            standardError: standardError)
        if let input {
            try? process.writeToStandardInput(input)  // a child that does not read it says so in its status
            process.closeStandardInput()
        }
        return process.finish()
    }

    /// Every descriptor of `descriptors` (nil ones are skipped and give empty data) read to its end, all at once.
    private func readAll(_ descriptors: [Int32?]) -> [Data] {
        var results = descriptors.map { _ in Data() }
        var open = descriptors.enumerated().compactMap { index, descriptor in descriptor.map { (index, $0) } }
        while !open.isEmpty {
            var polled = open.map { pollfd(fd: $0.1, events: Int16(POLLIN), revents: 0) }
            if poll(&polled, nfds_t(polled.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            var ended: Set<Int> = []
            for (position, entry) in polled.enumerated() where entry.revents != 0 {
                let chunk = Self.readChunk(entry.fd)
                if chunk.isEmpty { ended.insert(position) } else { results[open[position].0].append(chunk) }
            }
            open = open.enumerated().filter { !ended.contains($0.offset) }.map(\.element)
        }
        return results
    }

    /// One `read(2)`, retried when a signal interrupts it; empty at the end (or on an error).
    static func readChunk(_ descriptor: Int32) -> Data {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return Data(buffer[..<count]) }
            if errno != EINTR { return Data() }
        }
    }
}
