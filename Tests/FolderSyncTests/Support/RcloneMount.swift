import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A WebDAV share mounted with `rclone mount` (FUSE), for running the file-manager backend through a mount.
///
/// `rclone mount --daemon` returns once the mount is ready (or failed), so nothing waits on time. The
/// password reaches rclone obscured, through its environment, never in arguments or logs.
final class RcloneMount {
    let mountPoint: URL

    /// Why this machine cannot mount, or `nil` after a successful mount.
    private(set) var failure: String?

    init(share: URL, at mountPoint: URL, log: URL) throws {
        self.mountPoint = mountPoint
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        guard FileManager.default.fileExists(atPath: "/dev/fuse") else { failure = "/dev/fuse does not exist"; return }
        guard let rclone = Self.which("rclone") else { failure = "rclone is not installed"; return }
        guard Self.which("fusermount3") ?? Self.which("fusermount") != nil else { failure = "fusermount3 is not installed (Debian: fuse3)"; return }
        var parts = URLComponents(url: share, resolvingAgainstBaseURL: false)!
        let user = parts.user ?? "", password = parts.password ?? ""
        parts.user = nil
        parts.password = nil
        let obscured = try Self.run(rclone, ["obscure", "-"], input: password).trimmingCharacters(in: .whitespacesAndNewlines)
        var environment = ProcessInfo.processInfo.environment
        environment["RCLONE_WEBDAV_URL"] = parts.url!.absoluteString
        environment["RCLONE_WEBDAV_USER"] = user
        environment["RCLONE_WEBDAV_PASS"] = obscured
        environment["RCLONE_CONFIG"] = "/dev/null"
        // Not through Foundation's Process: the daemon rclone leaves behind keeps what Process watches open,
        // so its wait would never end. posix_spawn and waitpid see the parent exit once the mount is ready.
        let status = try Self.spawnAndWait(rclone, ["mount", ":webdav:", mountPoint.path, "--daemon", "--daemon-wait", "30s",
                                                    "--vfs-cache-mode", "writes", "--log-file", log.path],
                                           environment: environment)
        if status != 0 {
            let tail = (try? String(contentsOf: log, encoding: .utf8))?.split(separator: "\n").suffix(3).joined(separator: " | ") ?? ""
            failure = "rclone mount exited with status \(status): \(tail)"
        }
    }

    /// Unmounts (the rclone daemon exits with it).
    func unmount() {
        guard failure == nil, let fusermount = Self.which("fusermount3") ?? Self.which("fusermount") else { return }
        _ = try? Self.run(fusermount, ["-u", mountPoint.path])
    }

    private static func which(_ name: String) -> String? {
        for folder in ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin"] where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
            return "\(folder)/\(name)"
        }
        return nil
    }

    /// Runs `executable` to its end; returns its standard output.
    @discardableResult
    private static func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe(), stdin = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readAllRetryingInterruptions()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Runs `executable` with standard input and output on /dev/null and returns its exit status.
    private static func spawnAndWait(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else { throw MisbehavingServerFailure(description: "cannot start \(executable): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status >> 8) & 0xff
    }
}
