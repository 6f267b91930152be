import Foundation

/// Threads for work that blocks (a libcurl transfer sleeping in poll(2)), kept between jobs instead of made for each.
///
/// Starting a `Thread` per request cost about 70 µs on the project's machine, handing a job to a waiting thread
/// about 10 µs: for a vacuum's thousands of DELETEs that was most of what separated it from `curl`. Never more
/// than `maximumThreads` threads; a thread idle for `idleLifetime` ends, so an engine that
/// is dropped leaves none behind. A job starts at once while fewer than `maximumThreads` run; jobs beyond the
/// threads wait in order.
///
/// `@unchecked Sendable`: its state is guarded by an `NSCondition` that idle threads wait on, which `Locked` (a lock
/// without waiting) cannot stand for; every access to that state holds the condition's lock.
final class BlockingThreadPool: @unchecked Sendable {
    private let maximumThreads: Int
    private let idleLifetime: TimeInterval
    private let name: String
    /// Guards the fields below; idle threads wait on it.
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var threads = 0
    /// Threads waiting for a job, counted until they wake (a thread signalled for a job is still counted here).
    private var idle = 0
    /// Callers of ``waitUntilIdle(threads:)``, woken with the idle threads whenever one more thread becomes idle.
    private var idleWatchers = 0

    init(maximumThreads: Int, idleLifetime: TimeInterval = 10, name: String) {
        self.maximumThreads = maximumThreads
        self.idleLifetime = idleLifetime
        self.name = name
    }

    /// Runs `job` on one of the pool's threads: at once while fewer than `maximumThreads` jobs run.
    func run(_ job: @escaping () -> Void) {
        condition.lock()
        defer { condition.unlock() }
        jobs.append(job)
        // Each idle thread takes one waiting job, and jobs beyond them get threads of their own: an idle thread is
        // counted until it wakes, so every job that arrives before it does is one more than it can take.
        if jobs.count > idle && threads < maximumThreads {
            threads += 1
            let thread = Thread { [self] in work() }
            thread.name = name
            thread.start()
        }
        if idle > 0 {
            if idleWatchers > 0 { condition.broadcast() } else { condition.signal() }
        }
    }

    /// Waits until at least `count` threads wait for a job, or fewer than `count` threads are left (for tests: a pool
    /// whose threads all wait is the one a burst of jobs meets between two bursts of requests). Idle threads stay
    /// while a caller waits here; one that ended before it came is not waited for.
    func waitUntilIdle(threads count: Int) {
        condition.lock()
        defer { condition.unlock() }
        idleWatchers += 1
        while idle < count && threads >= count { condition.wait() }
        idleWatchers -= 1
    }

    private func work() {
        condition.lock()
        while true {
            if !jobs.isEmpty {
                let job = jobs.removeFirst()
                condition.unlock()
                job()
                condition.lock()
                continue
            }
            idle += 1
            if idleWatchers > 0 { condition.broadcast() }
            let woken = condition.wait(until: Date().addingTimeInterval(idleLifetime))
            idle -= 1
            if !woken && jobs.isEmpty && idleWatchers == 0 {
                threads -= 1
                condition.unlock()
                return
            }
        }
    }
}
