import Foundation

/// A value guarded by a lock, for the few places that share mutable state across threads and tasks: the one lock
/// type of the package's modules (the WebDAV transport and the testing module use it too).
///
/// `@unchecked Sendable`: it is the lock the checked types build on; every access to the value goes through it.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    package var current: Value { withLock { $0 } }
}
