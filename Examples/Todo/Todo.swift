import ArgumentParser
import FolderSync
import Foundation

/// `todo`: a to-do app that syncs through a shared folder with FolderSync, one command per run.
///
/// Exit code 0 on success; otherwise 1 with a one-line error on standard error.
@main
struct Todo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A to-do app that syncs through a shared folder with FolderSync.",
        discussion: """
            Lists, items, people and assignments live in this device's database: every command but sync and \
            confirm-replaced works without the shared folder. Concurrent edits of one item: done on either device \
            stays done, the higher priority wins, the later title wins; a deleted item stays deleted. Items are named \
            by their ID or its \
            first characters, as show prints them.
            """,
        subcommands: [
            Add.self, Done.self, Undone.self, Rename.self, Prioritize.self, Assign.self, Unassign.self,
            Delete.self, Show.self, Sync.self, ConfirmReplaced.self,
        ])

    @Option(help: "This device's database (SQLite file).")
    var db: String

    @Option(
        help: ArgumentHelp(
            "The shared folder, for sync: a directory path, a file:// URL, or an http(s):// WebDAV URL "
                + "(credentials from FOLDERSYNC_WEBDAV_USER and FOLDERSYNC_WEBDAV_PASSWORD).",
            valueName: "LOCATION"))
    var remote: String?

    /// This device's database: all that reading and writing items needs (never the shared folder).
    func database() throws -> TodoDatabase { try TodoDatabase(path: db) }

    /// The app's model, with its sync managers configured for the shared folder.
    @MainActor
    func model() throws -> TodoModel {
        guard let remote else { throw TodoError("missing --remote LOCATION (see 'todo --help')") }
        return try TodoModel(databasePath: db, remote: remote)
    }

    /// Runs the command; any error becomes one line on standard error and exit code 1.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .success {
                print(fullMessage(for: error))  // --help
                return
            }
            let line =
                switch error {
                case let error as FolderSyncError: error.description + ConfirmReplaced.hint(for: error)
                case let error as TodoError: error.description
                default:
                    (message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)")
                        + " (see 'todo --help')"
                }
            FileHandle.standardError.write(Data(("todo: " + line + "\n").utf8))
            Foundation.exit(1)
        }
    }
}

struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add an item to a list (made if missing); prints its ID.")
    @ParentCommand var todo: Todo
    @Argument(help: "The item's title.") var title: String
    @Option(help: "The list's name.") var list = "Inbox"
    @Option(help: "Its priority: higher comes first.") var priority = 0

    func run() throws { print(try todo.database().add(title, to: list, priority: priority)) }
}

struct Done: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark an item done.")
    @ParentCommand var todo: Todo
    @Argument(help: "The item's ID.") var id: String

    func run() throws { try todo.database().update(id, done: true) }
}

struct Undone: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark an item not done.")
    @ParentCommand var todo: Todo
    @Argument(help: "The item's ID.") var id: String

    func run() throws { try todo.database().update(id, done: false) }
}

struct Rename: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Change an item's title.")
    @ParentCommand var todo: Todo
    @Argument(help: "The item's ID.") var id: String
    @Argument(help: "The new title.") var title: String

    func run() throws { try todo.database().update(id, title: title) }
}

struct Prioritize: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Change an item's priority.")
    @ParentCommand var todo: Todo
    @Argument(help: "The item's ID.") var id: String
    @Argument(help: "The new priority.") var priority: Int

    func run() throws { try todo.database().update(id, priority: priority) }
}

struct Assign: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Assign an item to a person.")
    @ParentCommand var todo: Todo
    @Argument(help: "The item's ID.") var id: String
    @Argument(help: "The person's name.") var person: String

    func run() throws { try todo.database().assign(id, to: person) }
}

struct Unassign: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Take a person off an item.")
    @ParentCommand var todo: Todo
    @Argument(help: "The item's ID.") var id: String
    @Argument(help: "The person's name.") var person: String

    func run() throws { try todo.database().unassign(id, from: person) }
}

struct Delete: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete an item.")
    @ParentCommand var todo: Todo
    @Argument(help: "The item's ID.") var id: String

    func run() throws { try todo.database().delete(id) }
}

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print every list and its items.")
    @ParentCommand var todo: Todo
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let lists = try todo.database().lists()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(lists), as: UTF8.self))
            return
        }
        for list in lists {
            print(TodoText.safe(list.name))
            for item in list.items {
                let people = item.people.isEmpty ? "" : "  @" + item.people.map(TodoText.safe).joined(separator: " @")
                print(
                    "  \(item.done ? "[x]" : "[ ]") \(item.id.prefix(8))  \(TodoText.safe(item.title))  p\(item.priority)\(people)"
                )
            }
        }
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Synchronize with the shared folder: progress lines on standard error, then what the sync did.")
    @ParentCommand var todo: Todo

    @MainActor func run() async throws {
        let model = try todo.model()
        model.onProgress = { line in FileHandle.standardError.write(Data(("  " + line + "\n").utf8)) }
        let report = try await model.sync()
        print(
            "sent \(report.changesSent) change(s), applied \(report.changesApplied), \(report.conflicts.count) conflict(s)"
        )
        for resolved in report.conflicts {
            let conflict = resolved.conflict
            print(
                "  \(conflict.table) \(conflict.syncID.prefix(8)) \(conflict.column): \(resolved.resolution)"
                    + (resolved.decidedByResolver ? " (the app's rule)" : " (last writer wins)"))
        }
    }
}

/// Text written by other devices, made safe to print: control characters are shown as `\u{…}`.
enum TodoText {
    static func safe(_ text: String) -> String {
        text.unicodeScalars.map { scalar in
            scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format
                ? "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}" : String(scalar)
        }.joined()
    }
}
