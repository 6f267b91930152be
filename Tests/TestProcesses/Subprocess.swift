package import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for the tests and the test worker.
///
/// Not Foundation's `Process`: on Swift 6.3.1 its `run()` reads 256 bytes past a directory entry's `d_name` while
/// it looks for the highest open descriptor (`findMaximumOpenFromProcSelfFD()`, swift-corelibs-foundation PR 5472,
/// fixed only after 6.3.1), which crashed the launching test process with SIGSEGV about one CI run in five.
///
/// Not `swiftlang/swift-subprocess` either, tried at 1.0.2 on this toolchain (2026-11-25): it builds (about 30 s with
/// swift-system), runs 200 children at once in 0.2 s, streams standard input and delivers SIGKILL; but the tests need
/// what it does not offer: a child's own resource usage from `wait4` (the WebDAV CPU-cost test reads a child's CPU
/// time, and `getrusage(RUSAGE_CHILDREN)` would mix in every other test's children), and a handle to signal a child
/// from outside the closure it runs in (the kill torture kills workers from another task at a random moment).
/// Moving only the plain runs would leave two launchers.
///
/// Every pipe end made here is close-on-exec and, where glibc offers it, the child closes every descriptor above 2,
/// so no child holds a pipe of another: a reader waiting for the end of that pipe would wait for that other child.
/// Reads and waits block: async code calls ``finished()``, or its own blocking calls on a Dispatch thread.
package final class Subprocess: @unchecked Sendable {
    package let pid: Int32
    /// This process's ends of the pipes: standard input's write end (guarded by `inputLock`), output's and error's read
    /// ends.
    private var inputEnd: Int32?
    let outputEnd: Int32?
    let errorEnd: Int32?
    private let inputLock = NSLock()
    /// Guards `exitStatus`, so a signal is never sent to a pid that has been reaped (and may be reused).
    private let exitLock = NSLock()
    private var exitStatus: Int32?
    private var cpuTime: Double?

    /// The CPU time (user and system, in seconds) the child used in all its threads, once it has ended and been
    /// waited for (``waitForExit()``); `nil` before.
    package var cpuSeconds: Double? { exitLock.withLock { cpuTime } }

    private init(pid: Int32, inputEnd: Int32?, outputEnd: Int32?, errorEnd: Int32?) {
        self.pid = pid
        self.inputEnd = inputEnd
        self.outputEnd = outputEnd
        self.errorEnd = errorEnd
    }

    /// Starts `executable` (a path, or a name looked up in `PATH` when it has no slash) with `arguments`, in
    /// `environment` (this process's when `nil`). Signals the child starts with are unblocked and at their defaults.
    package static func start(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        standardInput: StandardStream = .null, standardOutput: StandardStream = .pipe,
        standardError: StandardStream = .pipe
    ) throws -> Subprocess {
        precondition(
            standardInput != .sameAsOutput && standardOutput != .sameAsOutput,
            "only standard error can join standard output")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var ours: [Int32?] = [nil, nil, nil]  // this process's end of each pipe, by the child's descriptor
        var theirs: [Int32] = []  // the child's ends, closed here once it has them
        defer { for fd in theirs { close(fd) } }
        do {
            for (descriptor, stream) in [standardInput, standardOutput, standardError].enumerated() {
                let descriptor = Int32(descriptor)
                switch stream {
                case .inherit:
                    break
                case .null:
                    posix_spawn_file_actions_addopen(
                        &actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
                case .sameAsOutput:
                    posix_spawn_file_actions_adddup2(&actions, 1, 2)
                case .pipe:
                    let (readEnd, writeEnd) = try makePipe()
                    ours[Int(descriptor)] = descriptor == 0 ? writeEnd : readEnd
                    theirs.append(descriptor == 0 ? readEnd : writeEnd)
                    // dup2 leaves the copy open across exec; the original closes there.
                    posix_spawn_file_actions_adddup2(&actions, theirs.last!, descriptor)
                }
            }
            if let addCloseFrom = GNUFunctions.addCloseFrom { _ = addCloseFrom(&actions, 3) }

            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var noSignals = sigset_t()
            var allSignals = sigset_t()
            sigemptyset(&noSignals)
            sigfillset(&allSignals)
            posix_spawnattr_setsigmask(&attributes, &noSignals)
            posix_spawnattr_setsigdefault(&attributes, &allSignals)  // SIGPIPE included, which ours ignores
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            let envp =
                (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for pointer in argv + envp { free(pointer) } }
            var pid: pid_t = 0
            let error =
                executable.contains("/")
                ? posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
                : posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
            guard error == 0 else {
                throw SubprocessFailure(description: "cannot start \(executable): \(String(cString: strerror(error)))")
            }
            return Subprocess(pid: pid, inputEnd: ours[0], outputEnd: ours[1], errorEnd: ours[2])
        } catch {
            for fd in ours.compactMap({ $0 }) { close(fd) }
            throw error
        }
    }

    /// A pipe whose two ends are close-on-exec.
    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard GNUFunctions.pipe2(&ends, O_CLOEXEC) == 0 else {
            throw SubprocessFailure(description: "cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        return (ends[0], ends[1])
    }

    /// Waits for the child to end: its exit code, or 128 plus the number of the signal that ended it (as a shell
    /// reports it). Later calls return the same.
    @discardableResult
    package func waitForExit() -> Int32 {
        // Waits without reaping, so that the pid stays the child's while `kill` may still use it.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        return exitLock.withLock {
            if let exitStatus { return exitStatus }
            var raw: Int32 = 0
            var usage = rusage()
            while wait4(pid, &raw, 0, &usage) < 0 {
                guard errno == EINTR else {
                    raw = -1
                    break
                }
            }
            if raw >= 0 {
                cpuTime =
                    Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
                    + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
            }
            let signal = raw & 0x7f
            let status = raw < 0 ? -1 : signal == 0 ? (raw >> 8) & 0xff : 128 + signal
            exitStatus = status
            return status
        }
    }

    /// Sends `signal` to the child, unless it has ended and been waited for.
    package func kill(_ signal: Int32 = SIGTERM) {
        exitLock.withLock {
            if exitStatus == nil { _ = Glibc.kill(pid, signal) }
        }
    }

    /// Closes standard input's write end; does nothing when it is not a pipe or already closed.
    package func closeStandardInput() {
        inputLock.withLock {
            if let inputEnd { close(inputEnd) }
            inputEnd = nil
        }
    }

    /// Writes all of `data` to the child's standard input (a pipe); blocks while the pipe is full.
    package func writeToStandardInput(_ data: Data) throws {
        _ = Self.brokenPipesIgnored
        try inputLock.withLock {
            guard let inputEnd else {
                throw SubprocessFailure(description: "standard input of \(pid) is not an open pipe")
            }
            try data.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = write(inputEnd, bytes.baseAddress! + offset, bytes.count - offset)
                    if written >= 0 {
                        offset += written
                    } else if errno != EINTR {
                        throw SubprocessFailure(
                            description: "cannot write to \(pid): \(String(cString: strerror(errno)))")
                    }
                }
            }
        }
    }

    /// A write to a child that has closed its input fails with EPIPE instead of killing this process with SIGPIPE.
    private static let brokenPipesIgnored: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    deinit {
        for fd in [inputEnd, outputEnd, errorEnd].compactMap({ $0 }) { close(fd) }
        if exitStatus == nil { _ = waitpid(pid, nil, WNOHANG) }  // reaps a child that ended unwatched
    }
}
