import ArgumentParser
import FolderSync
import Foundation

/// Runs `notes` and maps every outcome to the documented exit codes: 0, or 1 with one line on standard error
/// (usage errors too, which ArgumentParser would print as several lines with code 64).
@main
enum NotesMain {
    static func main() async {
        do {
            var command = try Notes.parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            exit(0)
        } catch let exit as ExitCode {
            Foundation.exit(exit == .success ? 0 : 1)
        } catch {
            if Notes.exitCode(for: error) == .success {
                print(Notes.fullMessage(for: error))  // --help, help
                exit(0)
            }
            NotesOutput.printError(message(for: error))
            exit(1)
        }
    }

    /// The error in one line: FolderSync's errors and the app's own as they describe themselves, usage errors as
    /// ArgumentParser's first line with a pointer to the help.
    static func message(for error: any Error) -> String {
        switch error {
        case let error as FolderSyncError: return error.description + ConfirmReplaced.hint(for: error)
        case let error as NotesError: return error.description
        default:
            let first = Notes.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            return first.replacingOccurrences(of: "Error: ", with: "") + " (see 'notes --help')"
        }
    }
}

/// `notes`: a small notes app that syncs through a shared folder with FolderSync.
struct Notes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A notes app that syncs through a shared folder with FolderSync.",
        discussion: """
            The notes live in the database: add, edit, move, tag, untag, delete, list and status never touch the shared \
            folder; sync (which registers the device the first time), rejoin, change-password, confirm-replaced and app \
            do. Only add, sync and app create a database that is not there. Exit code 0 on success; otherwise 1 with a \
            one-line error on stderr.
            """,
        subcommands: [
            Add.self, Edit.self, Move.self, Tag.self, Untag.self, Delete.self, List.self, Sync.self, Status.self,
            Rejoin.self, ChangePassword.self, ConfirmReplaced.self, App.self, Demo.self,
        ])

    @Option(help: "The notes database (SQLite file) of this device.")
    var db: String?

    @Option(
        help: ArgumentHelp(
            "The shared folder: a directory path, a file:// URL, or an http:// or https:// WebDAV URL "
                + "(credentials from FOLDERSYNC_WEBDAV_USER and FOLDERSYNC_WEBDAV_PASSWORD).", valueName: "LOCATION"))
    var remote: String?

    @Option(help: "The application identifier.")
    var app = "com.example.notes"

    @Option(help: "The document identifier.")
    var document = "notes"

    @Option(
        help: "A name for this device, remembered in the database (default: the name given before, else the host name)."
    )
    var clientName: String?

    @Option(
        help: ArgumentHelp(
            "A file whose first line is the encryption password: a new shared folder is encrypted "
                + "with it, an encrypted one opened with it.", valueName: "PATH"))
    var passwordFile: String?

    /// The path given with `--db`; unless `creating` (add, sync and app), a database that is not there is an error, so
    /// that a mistyped path is said, not made into an empty database.
    func databasePath(creating: Bool) throws -> String {
        guard let db else { throw NotesError("missing --db PATH (see 'notes --help')") }
        guard creating || FileManager.default.fileExists(atPath: db) else {
            throw NotesError("no notes database at \(db): check --db (only add, sync and app create one)")
        }
        return db
    }

    /// This device's notes database: all that reading and writing notes needs (never the shared folder).
    func database(creating: Bool = false) throws -> NotesDatabase {
        let database = try NotesDatabase(path: databasePath(creating: creating))
        // Remembered now, so that the first sync registers the device under the name given here.
        if let clientName { _ = try database.clientName(given: clientName, fallback: clientName) }
        return database
    }

    /// The password in `--password-file`, when one is given.
    func password() throws -> String? {
        try passwordFile.map { try Self.password(inFile: $0, option: "--password-file") }
    }

    /// The first line of the file at `path`, without its line ending (LF, or CRLF as Windows editors write it);
    /// an empty one is refused before anything is written into the shared folder.
    static func password(inFile path: String, option: String) throws -> String {
        guard let line = PasswordFile.firstLine(of: path) else { throw NotesError("\(option) \(path): cannot be read") }
        guard !line.isEmpty else { throw NotesError("\(option) \(path): the password (its first line) is empty") }
        return line
    }

    /// This device's sync managers, configured without touching the remote.
    func configuredSession(creating: Bool = false) throws -> (NotesSession, remote: String, password: String?) {
        let db = try databasePath(creating: creating)
        guard let remote else { throw NotesError("missing --remote LOCATION (see 'notes --help')") }
        let password = try password()
        let session = try NotesSession.configure(
            databasePath: db, remote: remote, applicationIdentifier: app,
            documentIdentifier: document, clientName: clientName, password: password)
        return (session, remote, password)
    }

    /// This device's session, registered: from what it remembers, or with the remote the first time.
    func session(creating: Bool = false) async throws -> NotesSession {
        let (session, remote, password) = try configuredSession(creating: creating)
        try await session.register(remote: remote, password: password)
        return session
    }
}

/// A note's text from the command line, or from standard input when it is `-` (for notes longer than an argument may
/// be).
func noteText(_ argument: String) throws -> String {
    guard argument == "-" else { return argument }
    let data = FileHandle.standardInput.readDataToEndOfFile()
    guard let text = String(data: data, encoding: .utf8) else { throw NotesError("standard input is not UTF-8 text") }
    return text.hasSuffix("\n") ? String(text.dropLast()) : text
}

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add a note; prints its ID.")
    @ParentCommand var notes: Notes
    @Argument(help: "The note's text; - reads it from standard input.") var text: String

    func run() async throws {
        let text = try noteText(text)
        print(try notes.database(creating: true).add(text))
    }
}

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Replace a note's text.")
    @ParentCommand var notes: Notes
    @Argument var id: String
    @Argument(help: "The new text; - reads it from standard input.") var text: String

    func run() async throws {
        let text = try noteText(text)
        try notes.database().edit(id, text)
    }
}

struct Move: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Move a note into a folder (created if needed).")
    @ParentCommand var notes: Notes
    @Argument var id: String
    @Argument(help: "The folder's name.") var folder: String

    func run() async throws { try notes.database().move(id, toFolder: folder) }
}

struct Tag: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Tag a note.")
    @ParentCommand var notes: Notes
    @Argument var id: String
    @Argument var tag: String

    func run() async throws { try notes.database().tag(id, tag) }
}

struct Untag: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove a tag from a note.")
    @ParentCommand var notes: Notes
    @Argument var id: String
    @Argument var tag: String

    func run() async throws { try notes.database().untag(id, tag) }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a note.")
    @ParentCommand var notes: Notes
    @Argument var id: String

    func run() async throws { try notes.database().delete(id) }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List every note sorted by ID: id, text, folder, sorted tags.",
        discussion: "A note over 4 KiB shows its first line and its size; --json shows every text whole.")
    @ParentCommand var notes: Notes
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let listing = try notes.database().list(whole: json)
        print(json ? try NotesOutput.json(listing) : NotesOutput.table(listing), terminator: "")
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Synchronize with the shared folder and print the report.",
        discussion: """
            A sync that would delete more than half of a table of over 100 notes asks first, once (y/N), when standard \
            input is a terminal; --allow-mass-deletion lets it go ahead without asking. Declined, or with no terminal to \
            ask, the sync publishes this device's own changes and stops with massDeletionDeclined (exit 1).
            """)
    @ParentCommand var notes: Notes
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "Apply another device's deletion of most notes without asking.") var allowMassDeletion = false

    func run() async throws {
        let session = try await notes.session(creating: true)
        if allowMassDeletion {
            session.document.massDeletionHandler = { _ in true }
        } else if isatty(STDIN_FILENO) == 1 {
            let asked = AskedOnce()
            session.document.massDeletionHandler = { deletion in
                await asked.answer { NotesOutput.confirm("This sync would delete \(deletion). Go ahead?") }
            }
        }
        let progress = isatty(STDERR_FILENO) == 1 ? SyncProgressLine(session.document.events()) : nil
        defer { progress?.stop() }
        let report = try await session.explainingPasswordChange(password: notes.password()) {
            try await session.document.synchronize()
        }
        progress?.stop()
        let names = await session.deviceNames(for: report.rowChanges)
        if json {
            print(try NotesOutput.json(SyncReportSummary(report, names: names)), terminator: "")
        } else {
            let titles = try session.database.titles(
                of: report.rowChanges.filter { $0.table == "notes" }
                    .flatMap { $0.inserted + $0.updated.keys })
            print(NotesOutput.describe(report), terminator: "")
            for line in NotesOutput.changedNotes(report.rowChanges, names: names, titles: titles) { print(line) }
        }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show this device's sync status, without touching the shared folder.",
        discussion:
            "Whether the device registered, the reset it stopped on (until rejoin), whether notes wait to be published, "
            + "and how the last sync went.")
    @ParentCommand var notes: Notes
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        // The managers on a remote that is never asked: --remote is not needed, and a folder away changes nothing.
        let session = try NotesSession.configure(
            databasePath: notes.databasePath(creating: false),
            remote: NoSharedFolder(), applicationIdentifier: notes.app,
            documentIdentifier: notes.document, clientName: notes.clientName)
        let status = NotesStatus(session.document)
        print(json ? try NotesOutput.json(status) : status.text, terminator: "")
    }
}

struct Rejoin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Re-join the shared folder after a reset (remote wiped or replaced, document or this device deleted, "
            + "or another device syncing as this one).",
        discussion: "Keeps every note of this device: they are published again and merged with what the others have.")
    @ParentCommand var notes: Notes
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let session = try await notes.session()
        guard let reset = session.document.resetState else {
            throw NotesError("this device has no reset to re-join from (see 'notes status')")
        }
        let before = session.document.clientIdentifier
        let report = try await session.explainingPasswordChange(password: notes.password()) {
            try await session.document.rejoin()
        }
        if !json, reset.code == .clientIdentityShared {
            print(
                "this device now syncs as a new client (\(session.document.clientIdentifier)); the other device keeps \(before)"
            )
        }
        print(json ? try NotesOutput.json(SyncReportSummary(report)) : NotesOutput.describe(report), terminator: "")
    }
}

struct ChangePassword: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-password",
        abstract: "Change the encryption password of the shared folder.",
        discussion: """
            --password-file gives the current password, --new-password-file the new one (the first line of each). The \
            notes stay encrypted with the same key; only the password that opens it changes. Every other device is \
            asked for the new password at its next sync: give it there with --password-file.
            """)
    @ParentCommand var notes: Notes
    @Option(help: ArgumentHelp("A file whose first line is the new password.", valueName: "PATH"))
    var newPasswordFile: String

    func run() async throws {
        guard let current = try notes.password() else {
            throw NotesError("give the current password with --password-file PATH")
        }
        let new = try Notes.password(inFile: newPasswordFile, option: "--new-password-file")
        let session = try await notes.session()
        try await session.document.applicationSyncManager.changeEncryptionPassword(from: current, to: new)
        print(
            "changed the password of \(NotesOutput.escaped(notes.app)); "
                + "other devices are asked for the new one at their next sync")
    }
}

struct App: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the notes app in this terminal, syncing in the background.",
        discussion: """
            Keys: a adds a note, e edits the selected one, d deletes it, s syncs now, arrows (or j and k) select, q quits. \
            The list follows the database: notes other devices publish appear as they arrive. The shared folder is \
            watched, every edit is synced in the background, and the status lines show the sync, what other devices \
            changed and any conflict; while the folder is away, notes stay editable and are published when it is back.
            """)
    @ParentCommand var notes: Notes
    @Option(help: "Seconds between looks at the shared folder, for changes no notification reports (network shares).")
    var poll: Double = 30

    func run() async throws {
        let (session, remote, password) = try notes.configuredSession(creating: true)
        let terminal = try RawTerminal()
        defer { terminal.restore() }
        let interface = NotesInterface(
            session: session, remote: remote, password: password,
            pollInterval: .milliseconds(Int(max(0.1, poll) * 1000)), terminal: terminal)
        await interface.run()
    }
}

/// Asks the user once per run, however often the sync asks: a sync may stop at the fail-safe more than once.
actor AskedOnce {
    private var given: Bool?

    func answer(_ ask: @Sendable () -> Bool) -> Bool {
        if let given { return given }
        let answer = ask()
        given = answer
        return answer
    }
}
