package import Foundation

/// A value guarded by a lock, for the few places that share mutable state across threads and tasks: the one lock
/// type of the package's modules (the WebDAV transport and the testing module use it too). A thread can also wait,
/// with the lock released, until the value is what it needs (``withLock(when:before:_:)``), woken by a change made
/// under the lock (``wakeOne()``, ``wakeAll()``).
///
/// `@unchecked Sendable`: it is the lock the checked types build on; every access to the value holds it.
package final class Locked<Value>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        condition.lock()
        defer { condition.unlock() }
        return try body(&value)
    }

    /// Waits, the lock released meanwhile, until `isReady` holds of the value or `deadline` passes, then runs `body`
    /// with the lock held; `body` is told whether `isReady` held. `isReady` is asked again after every wake-up, so
    /// a thread that changes what it reads calls ``wakeOne()`` or ``wakeAll()`` afterwards.
    package func withLock<Result>(
        when isReady: (Value) -> Bool, before deadline: Date? = nil,
        _ body: (inout Value, _ isReady: Bool) throws -> Result
    ) rethrows -> Result {
        condition.lock()
        defer { condition.unlock() }
        while !isReady(value) {
            if let deadline {
                guard condition.wait(until: deadline) else { break }
            } else {
                condition.wait()
            }
        }
        return try body(&value, isReady(value))
    }

    /// Wakes one thread waiting in ``withLock(when:before:_:)`` to look at the value again.
    package func wakeOne() {
        condition.lock()
        condition.signal()
        condition.unlock()
    }

    /// Wakes every thread waiting in ``withLock(when:before:_:)`` to look at the value again.
    package func wakeAll() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    package var current: Value { withLock { $0 } }
}
