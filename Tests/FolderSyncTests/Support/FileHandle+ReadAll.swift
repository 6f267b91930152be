import Foundation

extension FileHandle {
    /// Everything up to the end of the pipe or file. A read interrupted by a signal is retried: Foundation's
    /// `readDataToEndOfFile()` stops the whole test process with a `try!` on `EINTR` (seen when another thread's
    /// crash was being backtraced, which turned one crash into two reports).
    func readAllRetryingInterruptions() -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[..<count])
            } else if count == 0 || errno != EINTR {
                return data
            }
        }
    }
}
