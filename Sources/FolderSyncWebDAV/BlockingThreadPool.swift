import FolderSync
import Foundation

/// Threads for work that blocks (a libcurl transfer sleeping in poll(2)), kept between jobs instead of made for each.
///
/// Starting a `Thread` per request cost about 70 µs on the project's machine, handing a job to a waiting thread
/// about 10 µs: for a vacuum's thousands of DELETEs that was most of what separated it from `curl`. Never more
/// than `maximumThreads` threads; a thread idle for `idleLifetime` ends, so an engine that
/// is dropped leaves none behind. A job starts at once while fewer than `maximumThreads` run; jobs beyond the
/// threads wait in order.
final class BlockingThreadPool: Sendable {
    private struct State {
        var jobs: [() -> Void] = []
        var threads = 0
        /// Threads waiting for a job, counted until they wake (a thread woken for a job is still counted here).
        var idle = 0
        /// Callers of ``waitUntilIdle(threads:)``, woken with the idle threads whenever one more thread becomes idle.
        var idleWatchers = 0
    }

    private let maximumThreads: Int
    private let idleLifetime: TimeInterval
    private let name: String
    /// Idle threads wait on it for a job, and ``waitUntilIdle(threads:)`` for idle threads.
    private let state = Locked(State())

    init(maximumThreads: Int, idleLifetime: TimeInterval = 10, name: String) {
        self.maximumThreads = maximumThreads
        self.idleLifetime = idleLifetime
        self.name = name
    }

    /// Runs `job` on one of the pool's threads (which alone uses what it captured): at once while fewer than
    /// `maximumThreads` jobs run.
    func run(_ job: @escaping () -> Void) {
        let (startsThread, idle, watched) = state.withLock { state in
            state.jobs.append(job)
            // Each idle thread takes one waiting job, and jobs beyond them get threads of their own: an idle thread
            // is counted until it wakes, so every job that arrives before it does is one more than it can take.
            let startsThread = state.jobs.count > state.idle && state.threads < maximumThreads
            if startsThread { state.threads += 1 }
            return (startsThread, state.idle > 0, state.idleWatchers > 0)
        }
        if startsThread {
            let thread = Thread { [self] in work() }
            thread.name = name
            thread.start()
        }
        if idle {
            if watched { state.wakeAll() } else { state.wakeOne() }
        }
    }

    /// Waits until at least `count` threads wait for a job, or fewer than `count` threads are left (for tests: a pool
    /// whose threads all wait is the one a burst of jobs meets between two bursts of requests). Idle threads stay
    /// while a caller waits here; one that ended before it came is not waited for.
    func waitUntilIdle(threads count: Int) {
        state.withLock { $0.idleWatchers += 1 }
        state.withLock(when: { $0.idle >= count || $0.threads < count }) { state, _ in state.idleWatchers -= 1 }
    }

    private func work() {
        while let job = nextJob() { job() }
    }

    /// What an idle thread found when it woke.
    private enum Wakening {
        case job(() -> Void)
        /// No job came within `idleLifetime` and nobody watches: the thread ends.
        case end
        /// No job came, but a caller of ``waitUntilIdle(threads:)`` counts on the thread: it waits again.
        case stay
    }

    /// The next job, waiting for one at most `idleLifetime` at a time; `nil` when the thread ends.
    private func nextJob() -> (() -> Void)? {
        while true {
            let (waiting, watched) = state.withLock { state -> (Wakening?, Bool) in
                if !state.jobs.isEmpty { return (.job(state.jobs.removeFirst()), false) }
                state.idle += 1
                return (nil, state.idleWatchers > 0)
            }
            if case .job(let job) = waiting { return job }
            if watched { state.wakeAll() }
            let deadline = Date().addingTimeInterval(idleLifetime)
            let woken = state.withLock(when: { !$0.jobs.isEmpty }, before: deadline) { state, hasJob -> Wakening in
                state.idle -= 1
                if hasJob { return .job(state.jobs.removeFirst()) }
                guard state.idleWatchers == 0 else { return .stay }
                state.threads -= 1
                return .end
            }
            switch woken {
            case .job(let job): return job
            case .end: return nil
            case .stay: continue
            }
        }
    }
}
