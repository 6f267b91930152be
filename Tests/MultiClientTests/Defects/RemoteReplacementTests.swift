import Foundation
import TestProcesses
import Testing

@testable import TestSupport

/// Issue 38, item 11: an emptied share, one restored from before the set-up, or a WebDAV server started again on an
/// empty volume stranded every device for ever (`remoteUnavailable … holds no application`, `notes rejoin`
/// refusing). No device sets the folder up by itself (an unmounted share looks the same), but the user can say it
/// was replaced: `notes confirm-replaced`, `todo confirm-replaced` or `foldersync recreate`, each named by the error,
/// after which every device re-joins with its data. Through the built tools.
@Suite("Remote replacement", .serialized)
struct RemoteReplacementTests {
    /// One device of `tool` (`notes` or `todo`) on `remote`.
    struct Device {
        let tool: String
        let database: URL
        let remote: String
        var options: [String] = []

        func run(_ arguments: [String]) throws -> Subprocess.Result {
            try Subprocess.run(
                buildProductsDirectory.appendingPathComponent(tool).path,
                ["--db", database.path, "--remote", remote] + options + arguments)
        }

        @discardableResult
        func succeed(_ arguments: [String]) throws -> String {
            let result = try run(arguments)
            #expect(result.status == 0, "\(database.lastPathComponent) \(arguments): \(result.errors)")
            return result.output
        }

        /// Fails with one error line (after progress lines, for todo) that says `code` and names `command`.
        func fails(_ arguments: [String], with code: String, naming command: String) throws {
            let result = try run(arguments)
            #expect(result.status == 1, "\(database.lastPathComponent) \(arguments): \(result.output)")
            let lines = result.errors.split(separator: "\n").filter { $0.hasPrefix(tool + ": ") }
            #expect(
                lines.count == 1 && lines[0].contains(code) && lines[0].contains(command),
                "\(database.lastPathComponent) \(arguments): \(result.errors)")
        }

        var listing: String { get throws { try succeed(tool == "notes" ? ["list"] : ["show"]) } }
    }

    static func notesDevices(_ count: Int, on remote: String, in directory: TemporaryDirectory, options: [String] = [])
        throws -> [Device]
    {
        let devices = (0..<count).map {
            Device(
                tool: "notes", database: directory.url.appendingPathComponent("d\($0).sqlite"),
                remote: remote, options: options)
        }
        for (index, device) in devices.enumerated() {
            try device.succeed(["add", "note of device \(index)"])
            try device.succeed(["sync"])
        }
        for device in devices { try device.succeed(["sync"]) }
        return devices
    }

    /// Removes everything in `folder`, as an emptied share or a new volume holds nothing.
    static func empty(_ folder: URL) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }

    /// Every device holds the same notes, each device's among them.
    static func expectConverged(_ devices: [Device]) throws {
        for device in devices { try device.succeed(["sync"]) }
        let listings = try devices.map { try $0.listing }
        #expect(Set(listings).count == 1, "\(listings)")
        for index in devices.indices where devices[index].tool == "notes" {
            #expect(listings[0].contains("note of device \(index)"), "\(listings[0])")
        }
    }

    @Test("notes: an emptied share names confirm-replaced; after it every device re-joins with its notes")
    func notesConfirmReplaced() throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let devices = try Self.notesDevices(3, on: shared.path, in: directory)
        #expect(try devices[0].succeed(["confirm-replaced"]).contains("nothing was replaced"))
        try Self.empty(shared)
        try devices[1].succeed(["add", "written while the share was empty"])
        try devices[1].fails(["sync"], with: "remoteUnavailable", naming: "notes confirm-replaced")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: shared.path).isEmpty,
            "a device set the folder up by itself")

        #expect(try devices[0].succeed(["confirm-replaced"]).contains("Re-joined"))
        try devices[1].fails(["sync"], with: "integrityKeyMismatch", naming: "notes rejoin")
        try devices[1].succeed(["rejoin"])
        #expect(try devices[2].succeed(["confirm-replaced"]).contains("Re-joined"))
        try Self.expectConverged(devices)
        #expect(try devices[0].listing.contains("written while the share was empty"))
    }

    @Test(
        "notes over WebDAV: the server started again on an empty volume; confirm-replaced, then every device re-joins")
    func notesAfterServerRestartedEmpty() async throws {
        let directory = TemporaryDirectory()
        let share = directory.subdirectory("share")
        let proxy = try await FaultProxy(root: share)
        let devices = try Self.notesDevices(2, on: proxy.url.absoluteString, in: directory)
        proxy.send("kill")
        try await proxy.waitFor("killed")
        try Self.empty(share)
        proxy.send("restart")
        try await proxy.waitFor("ready")
        try devices[1].fails(["sync"], with: "remoteUnavailable", naming: "notes confirm-replaced")
        try devices[0].succeed(["confirm-replaced"])
        try devices[1].succeed(["confirm-replaced"])
        try Self.expectConverged(devices)
        _ = await proxy.stop()
    }

    @Test("todo: an emptied share names confirm-replaced; after it every device re-joins with its items")
    func todoConfirmReplaced() throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let devices = (0..<2).map {
            Device(tool: "todo", database: directory.url.appendingPathComponent("t\($0).sqlite"), remote: shared.path)
        }
        for (index, device) in devices.enumerated() {
            try device.succeed(["add", "item of device \(index)"])
            try device.succeed(["sync"])
        }
        try devices[0].succeed(["sync"])
        try Self.empty(shared)
        try devices[0].fails(["sync"], with: "remoteUnavailable", naming: "todo confirm-replaced")
        try devices[0].succeed(["confirm-replaced"])
        try devices[1].fails(["sync"], with: "integrityKeyMismatch", naming: "todo confirm-replaced")
        try devices[1].succeed(["confirm-replaced"])
        try Self.expectConverged(devices)
        let listing = try devices[0].listing
        #expect(listing.contains("item of device 0") && listing.contains("item of device 1"), "\(listing)")
    }

    @Test(
        "foldersync recreate: named by the tool's error, asks for --yes, refuses a folder that holds the application; the devices re-join",
        arguments: ["clear", "encrypted"])
    func foldersyncRecreate(_ encryption: String) throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let password = directory.url.appendingPathComponent("password")
        try "correct horse\n".write(to: password, atomically: true, encoding: .utf8)
        let options = encryption == "encrypted" ? ["--password-file", password.path] : []
        let devices = try Self.notesDevices(2, on: shared.path, in: directory, options: options)
        try Self.empty(shared)
        let foldersync = buildProductsDirectory.appendingPathComponent("foldersync").path
        let doctor = try Subprocess.run(foldersync, ["doctor", "--remote", shared.path, "--app", "com.example.notes"])
        #expect(doctor.status == 2 && doctor.errors.contains("foldersync recreate"), "\(doctor.errors)")
        let recreate = ["recreate", "--remote", shared.path, "--app", "com.example.notes", "--\(encryption)"] + options
        let unconfirmed = try Subprocess.run(foldersync, recreate)
        #expect(unconfirmed.status == 2 && unconfirmed.errors.contains("--yes"), "\(unconfirmed.errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: shared.path).isEmpty)
        let done = try Subprocess.run(foldersync, recreate + ["--yes"])
        #expect(done.status == 0, "\(done.errors)")
        let again = try Subprocess.run(foldersync, recreate + ["--yes"])
        #expect(again.status == 2 && again.errors.contains("holds com.example.notes already"), "\(again.errors)")

        try devices[0].fails(["sync"], with: "integrityKeyMismatch", naming: "notes rejoin")
        try devices[0].succeed(["rejoin"])
        try devices[1].succeed(["confirm-replaced"])
        try Self.expectConverged(devices)
        let healthy = try Subprocess.run(
            foldersync, ["doctor", "--remote", shared.path] + options, standardError: .sameAsOutput)
        #expect(healthy.status == 0, "\(healthy.output)")
    }
}
