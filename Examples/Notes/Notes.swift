import ArgumentParser
import FolderSync
import Foundation

/// `notes`: a small notes app that syncs through a shared folder with FolderSync.
@main
struct Notes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A notes app that syncs through a shared folder with FolderSync.",
        discussion: "Registration happens on first use. Exit code 0 on success; otherwise 1 with a one-line error on stderr.",
        subcommands: [Add.self, Edit.self, Move.self, Tag.self, Untag.self, Delete.self, List.self, Sync.self, Demo.self])

    @Option(help: "The notes database (SQLite file) of this device.")
    var db: String?

    @Option(help: "The shared folder (a directory path).")
    var remote: String?

    @Option(help: "The application identifier.")
    var app = "com.example.notes"

    @Option(help: "The document identifier.")
    var document = "notes"

    @Option(help: "A name for this device (default: the host name).")
    var clientName: String?

    @Option(help: ArgumentHelp("A file whose first line is the encryption password: a new shared folder is encrypted "
                               + "with it, an encrypted one opened with it.", valueName: "PATH"))
    var passwordFile: String?

    /// Opens this device's session from the global options.
    func session() async throws -> NotesSession {
        guard let db else { throw ValidationError("missing --db PATH") }
        guard let remote else { throw ValidationError("missing --remote LOCATION") }
        var password: String?
        if let passwordFile {
            guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw ValidationError("--password-file \(passwordFile): cannot be read")
            }
            password = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        return try await NotesSession.open(databasePath: db, remote: remote, applicationIdentifier: app,
                                           documentIdentifier: document, clientName: clientName, password: password)
    }
}

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add a note; prints its ID.")
    @ParentCommand var notes: Notes
    @Argument var text: String

    func run() async throws {
        print(try await notes.session().database.add(text))
    }
}

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Replace a note's text.")
    @ParentCommand var notes: Notes
    @Argument var id: String
    @Argument var text: String

    func run() async throws { try await notes.session().database.edit(id, text) }
}

struct Move: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Move a note into a folder (created if needed).")
    @ParentCommand var notes: Notes
    @Argument var id: String
    @Argument(help: "The folder's name.") var folder: String

    func run() async throws { try await notes.session().database.move(id, toFolder: folder) }
}

struct Tag: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Tag a note.")
    @ParentCommand var notes: Notes
    @Argument var id: String
    @Argument var tag: String

    func run() async throws { try await notes.session().database.tag(id, tag) }
}

struct Untag: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove a tag from a note.")
    @ParentCommand var notes: Notes
    @Argument var id: String
    @Argument var tag: String

    func run() async throws { try await notes.session().database.untag(id, tag) }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a note.")
    @ParentCommand var notes: Notes
    @Argument var id: String

    func run() async throws { try await notes.session().database.delete(id) }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List every note sorted by ID: id, text, folder, sorted tags.")
    @ParentCommand var notes: Notes
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let listing = try await notes.session().database.list()
        print(json ? try NotesOutput.json(listing) : NotesOutput.table(listing), terminator: "")
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Synchronize with the shared folder and print the report.")
    @ParentCommand var notes: Notes
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let report = try await notes.session().document.synchronize()
        print(json ? try NotesOutput.json(SyncReportSummary(report)) : NotesOutput.describe(report), terminator: "")
    }
}
