import Foundation

/// Threads for work that blocks (a libcurl transfer sleeping in poll(2)), kept between jobs instead of made for each.
///
/// Starting a `Thread` per request cost about 70 µs on the project's machine, handing a job to a waiting thread
/// about 10 µs: for a vacuum's thousands of DELETEs that was most of what separated it from `curl` (benchmark
/// scenario 8). Never more than `maximumThreads` threads; a thread idle for `idleLifetime` ends, so an engine that
/// is dropped leaves none behind. Jobs beyond the threads wait in order.
final class BlockingThreadPool: @unchecked Sendable {
    private let maximumThreads: Int
    private let idleLifetime: TimeInterval
    private let name: String
    /// Guards the three fields below; idle threads wait on it.
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var threads = 0
    private var idle = 0

    init(maximumThreads: Int, idleLifetime: TimeInterval = 10, name: String) {
        self.maximumThreads = maximumThreads
        self.idleLifetime = idleLifetime
        self.name = name
    }

    /// Runs `job` on one of the pool's threads.
    func run(_ job: @escaping () -> Void) {
        condition.lock()
        defer { condition.unlock() }
        jobs.append(job)
        if idle > 0 {
            condition.signal()
        } else if threads < maximumThreads {
            threads += 1
            let thread = Thread { [self] in work() }
            thread.name = name
            thread.start()
        }
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
            let woken = condition.wait(until: Date().addingTimeInterval(idleLifetime))
            idle -= 1
            if !woken && jobs.isEmpty {
                threads -= 1
                condition.unlock()
                return
            }
        }
    }
}
