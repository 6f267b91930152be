import ArgumentParser
import FolderSync
import Foundation

/// `notes demo`: two devices sharing one folder, narrated step by step.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Two devices sync notes through a temporary folder, with a conflict, narrated.")

    @Option(help: "The folder to work in, kept afterwards (default: a new temporary folder, removed at the end).")
    var folder: String?

    func run() async throws {
        let base =
            folder.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                "notes-demo-\(UUID().uuidString.prefix(8))")
        defer { if folder == nil { try? FileManager.default.removeItem(at: base) } }
        try await narrate(in: base)
    }

    private func narrate(in base: URL) async throws {
        var number = 0
        func step(_ text: String) {
            number += 1
            print("\n\(number). \(text)")
        }
        let remote = base.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: remote, withIntermediateDirectories: true)
        say(
            """
            FolderSync demo. Two devices, a laptop and a phone, each keep their notes in their own SQLite file
            and sync through the shared folder \(remote.path). Nobody runs a server for it.
            """)

        step("The laptop opens its notes and registers with the shared folder.")
        let laptop = try await open("laptop", base: base, remote: remote)
        step("The phone does the same; it finds the document the laptop created and adopts its integrity key.")
        let phone = try await open("phone", base: base, remote: remote)

        step(
            "The laptop writes two notes, files one in a folder and tags it. Each write is recorded as a change in the same SQLite transaction."
        )
        let groceries = try laptop.database.add("Groceries: milk, eggs")
        let ideas = try laptop.database.add("Ideas for the weekend")
        try laptop.database.move(groceries, toFolder: "Home")
        try laptop.database.tag(groceries, "errands")
        try await sync(laptop, "laptop")

        step("The phone syncs: it downloads the laptop's change set and applies it in one transaction.")
        try await sync(phone, "phone")
        try show(phone, "phone")

        step("Now both edit the same note while apart: a conflict. The phone also tags the other note.")
        try laptop.database.edit(ideas, "Ideas for the weekend: hiking")
        try phone.database.edit(ideas, "Ideas for the weekend: cinema")
        try phone.database.tag(ideas, "fun")
        phone.document.conflictResolver = { conflict in
            guard case .text(let mine) = conflict.localValue, case .text(let theirs) = conflict.remoteValue else {
                return nil
            }
            say(
                "    phone's conflict resolver: \(conflict.table).\(conflict.column) is \"\(mine)\" here and \"\(theirs)\" there; keeping both."
            )
            return .merged(.text(theirs + " / " + mine.replacingOccurrences(of: "Ideas for the weekend: ", with: "")))
        }
        try await sync(laptop, "laptop")
        try await sync(phone, "phone")
        step("The phone's merged answer is a new change, so the laptop gets it on its next sync.")
        try await sync(laptop, "laptop")

        step("Both lists are now the same:")
        try show(laptop, "laptop")
        try show(phone, "phone")
        let equal = try laptop.database.list() == phone.database.list()
        say("\nThe two devices \(equal ? "agree" : "DISAGREE"). The shared folder holds:")
        print(TreePrinter.render(root: remote), terminator: "")
        if !equal { throw ExitCode.failure }
    }

    private func open(_ name: String, base: URL, remote: URL) async throws -> NotesSession {
        try await NotesSession.open(
            databasePath: base.appendingPathComponent("\(name).sqlite").path, remote: remote.path,
            applicationIdentifier: "com.example.notes", documentIdentifier: "notes",
            clientName: name, narrate: { say("    \(name): \($0)") })
    }

    private func sync(_ session: NotesSession, _ name: String) async throws {
        let report = try await session.document.synchronize()
        say("    \(name) syncs: " + NotesOutput.describe(report).trimmingCharacters(in: .newlines))
    }

    private func show(_ session: NotesSession, _ name: String) throws {
        say("    \(name)'s notes:")
        for line in NotesOutput.table(try session.database.list()).split(separator: "\n") { say("      \(line)") }
    }
}

func say(_ line: String) { print(line) }
