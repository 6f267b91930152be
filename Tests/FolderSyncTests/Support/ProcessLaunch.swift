import Foundation

extension Process {
    private static let launches = NSLock()

    /// Starts the process, one launch at a time in this test process: Foundation's `Process.run()` crashed
    /// (a bad read in its own copying, in CI) while the parallel tests launched children at the same moment.
    func runSerially() throws {
        try Self.launches.withLock { try run() }
    }
}
