import Foundation
import TestProcesses
import Testing

@testable import TestSupport

/// `notes app` used as a person uses it: two instances running in tmux, sharing a folder, keys sent to one,
/// both screens read back. Waits poll the captured screen until a deadline; nothing sleeps to synchronise.
@Suite("notes app in tmux", .serialized)
struct NotesAppTmuxTests {
    @Test(
        "A note typed in one running app appears on the other's screen with no key pressed there; with the folder away the app keeps working, and publishes when it is back"
    )
    func twoRunningApps() async throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let tmux = Tmux()
        defer { tmux.stop() }
        func app(_ name: String) -> [String] {
            [
                buildProductsDirectory.appendingPathComponent("notes").path, "--db",
                directory.url.appendingPathComponent("\(name).sqlite").path,
                "--remote", shared.path, "--client-name", name, "app", "--poll", "1",
            ]
        }
        try tmux.start("laptop", app("laptop"))
        try await tmux.waitForScreen("laptop") { $0.contains("sync: synced at") }
        try tmux.start("phone", app("phone"))
        try await tmux.waitForScreen("phone") { $0.contains("sync: synced at") }

        // Typed on the laptop: it appears on the phone's screen, which no key touched, named by the device that wrote
        // it.
        try tmux.type("laptop", "a", literal: "Buy milk", then: "Enter")
        try await tmux.waitForScreen("laptop") { $0.contains("> Buy milk") && $0.contains("Notes on laptop — 1 note") }
        let phone = try await tmux.waitForScreen("phone") {
            $0.contains("Buy milk") && $0.contains("1 note changed on laptop: Buy milk (new)")
        }
        #expect(phone.contains("Notes on phone — 1 note"), "\(phone)")

        // The folder goes away: the laptop says so and keeps working; the note travels once the folder is back.
        let away = directory.url.appendingPathComponent("shared-away")
        try FileManager.default.moveItem(at: shared, to: away)
        try tmux.type("laptop", "a", literal: "Call Bob", then: "Enter")
        try await tmux.waitForScreen("laptop") { $0.contains("Call Bob") && $0.contains("shared folder unavailable") }
        try FileManager.default.moveItem(at: away, to: shared)
        try await tmux.waitForScreen("phone", within: .seconds(90)) { $0.contains("Call Bob") }
        try await tmux.waitForScreen("laptop", within: .seconds(90)) {
            $0.contains("sync: synced at") && $0.contains("Call Bob")
        }

        // The phone edits the note it received (still selected: a selection stays on its note as others arrive); the
        // laptop's screen follows.
        try await tmux.waitForScreen("phone") { $0.contains("> Buy milk") }
        try tmux.type("phone", "e", literal: " and eggs", then: "Enter")
        try await tmux.waitForScreen("laptop") {
            $0.contains("Buy milk and eggs") && $0.contains("changed on phone: Buy milk and eggs (edited)")
        }

        try tmux.type("laptop", "q")
        try await tmux.waitForScreen("phone") { $0.contains("Notes on phone — 2 notes") }
    }
}

/// A tmux server of a test's own, started by its first session, on a socket of its own: in /tmp, since a socket's
/// path is limited to about 100 bytes.
struct Tmux {
    let socket = URL(fileURLWithPath: "/tmp/foldersync-tmux-\(UUID().uuidString.prefix(8))")

    /// Starts `command` in a new detached session `name` of 100 × 30 characters.
    func start(_ name: String, _ command: [String]) throws {
        try run(["new-session", "-d", "-s", name, "-x", "100", "-y", "30"] + command)
    }

    /// Sends `keys` (tmux key names), then `literal` text as typed, then `then` (a key name).
    func type(_ session: String, _ keys: String..., literal: String? = nil, then last: String? = nil) throws {
        if !keys.isEmpty { try run(["send-keys", "-t", session] + keys) }
        if let literal { try run(["send-keys", "-t", session, "-l", literal]) }
        if let last { try run(["send-keys", "-t", session, last]) }
    }

    /// The session's screen as text.
    func capture(_ session: String) throws -> String {
        try run(["capture-pane", "-p", "-t", session])
    }

    /// Reads the screen until `condition` holds, and returns it; fails the test at the deadline.
    @discardableResult
    func waitForScreen(
        _ session: String, within timeout: Duration = .seconds(60),
        sourceLocation: SourceLocation = #_sourceLocation, _ condition: (String) -> Bool
    ) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        var screen = ""
        while ContinuousClock.now < deadline {
            screen = try capture(session)
            if condition(screen) { return screen }
            try await Task.sleep(for: .milliseconds(100))  // the pause between two looks at the screen
        }
        Issue.record(
            "\(session)'s screen did not show what was awaited within \(timeout):\n\(screen)",
            sourceLocation: sourceLocation)
        throw TmuxFailure("timed out waiting for \(session)")
    }

    func stop() {
        _ = try? run(["kill-server"], check: false)
        try? FileManager.default.removeItem(at: socket)
    }

    @discardableResult
    private func run(_ arguments: [String], check: Bool = true) throws -> String {
        // No configuration file: the user's must not change what the screens show.
        let result = try Subprocess.run("tmux", ["-f", "/dev/null", "-S", socket.path] + arguments)
        if check && result.status != 0 {
            throw TmuxFailure("tmux \(arguments.joined(separator: " ")): \(result.errors)")
        }
        return result.output
    }
}

struct TmuxFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
