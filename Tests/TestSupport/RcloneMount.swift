import Foundation
import TestProcesses

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
        guard FileManager.default.fileExists(atPath: "/dev/fuse") else {
            failure = "/dev/fuse does not exist"
            return
        }
        guard let rclone = Self.which("rclone") else {
            failure = "rclone is not installed"
            return
        }
        guard Self.which("fusermount3") ?? Self.which("fusermount") != nil else {
            failure = "fusermount3 is not installed (Debian: fuse3)"
            return
        }
        var parts = URLComponents(url: share, resolvingAgainstBaseURL: false)!
        let user = parts.user ?? ""
        let password = parts.password ?? ""
        parts.user = nil
        parts.password = nil
        let obscured = try Self.run(rclone, ["obscure", "-"], input: password).trimmingCharacters(
            in: .whitespacesAndNewlines)
        var environment = ProcessInfo.processInfo.environment
        environment["RCLONE_WEBDAV_URL"] = parts.url!.absoluteString
        environment["RCLONE_WEBDAV_USER"] = user
        environment["RCLONE_WEBDAV_PASS"] = obscured
        environment["RCLONE_CONFIG"] = "/dev/null"
        // Waits for rclone itself, which exits once the mount is ready: not for the end of its outputs, which the
        // daemon it leaves behind would hold open (/dev/null here).
        let status = try Subprocess.start(
            rclone,
            [
                "mount", ":webdav:", mountPoint.path, "--daemon", "--daemon-wait", "30s",
                "--vfs-cache-mode", "writes", "--log-file", log.path,
            ],
            environment: environment, standardOutput: .null, standardError: .null
        ).waitForExit()
        if status != 0 {
            let tail =
                (try? String(contentsOf: log, encoding: .utf8))?.split(separator: "\n").suffix(3).joined(
                    separator: " | ") ?? ""
            failure = "rclone mount exited with status \(status): \(tail)"
        }
    }

    /// Unmounts (the rclone daemon exits with it).
    func unmount() {
        guard failure == nil, let fusermount = Self.which("fusermount3") ?? Self.which("fusermount") else { return }
        _ = try? Self.run(fusermount, ["-u", mountPoint.path])
    }

    private static func which(_ name: String) -> String? {
        for folder in ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin"]
        where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
            return "\(folder)/\(name)"
        }
        return nil
    }

    /// Runs `executable` to its end; returns its standard output.
    @discardableResult
    private static func run(_ executable: String, _ arguments: [String], input: String = "") throws -> String {
        try Subprocess.run(executable, arguments, input: Data(input.utf8), standardError: .null).output
    }
}
