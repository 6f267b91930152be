import FolderSync
import Foundation
import GRDB

/// `notes app`: the notes app as a long-running program in the terminal, living as an app does.
///
/// One `DatabasePool` stays open (the store's): the list on screen is a `ValueObservation` of it, so a note another
/// device wrote appears when the sync that brought it commits, with no key pressed. The shared folder is watched
/// (``DocumentSyncManager/startWatchingRemote(debounce:pollInterval:)``) and every local edit is synced in the
/// background; the status lines show the sync under way, what the last syncs changed, their conflicts, and that
/// the folder is away when it is — the notes stay editable meanwhile, and are published when it comes back.
actor NotesInterface {
    private enum Mode: Equatable {
        case browsing
        case adding(String)
        case editing(id: String, text: String)
        case confirmingDelete(id: String)
    }

    private let session: NotesSession
    private let remote: String
    private let password: String?
    private let pollInterval: Duration
    private let terminal: RawTerminal
    private let deviceName: String

    private var notes: [NoteListing] = []
    private var selectedID: String?
    private var mode = Mode.browsing
    private var registered = false
    private var syncStatus = "not synced yet"
    private var changes: [String] = []
    private var conflicts: [String] = []
    private var message: String?
    /// Other devices' names, by client identifier, as they registered them.
    private var deviceNames: [String: String] = [:]

    init(session: NotesSession, remote: String, password: String?, pollInterval: Duration, terminal: RawTerminal) {
        self.session = session
        self.remote = remote
        self.password = password
        self.pollInterval = pollInterval
        self.terminal = terminal
        deviceName = session.document.applicationSyncManager.clientDescription ?? "this device"
    }

    /// Runs until the user quits: the list observed, the sync events followed, the keys read.
    func run() async {
        let database = session.database.store.database
        let observation = ValueObservation.tracking { try NotesDatabase.list($0) }
        Task { [weak self] in
            do {
                for try await listing in observation.values(in: database) { await self?.show(listing) }
            } catch {
                await self?.say("cannot read the notes: \(error)")
            }
        }
        let events = session.document.events()
        Task { [weak self] in
            for await event in events { await self?.handle(event) }
        }
        Task { [weak self] in await self?.register() }
        render()
        for await key in terminal.keys() {
            if key == .interrupt || (key == .character("q") && mode == .browsing) { break }
            press(key)
        }
        session.document.stopWatchingRemote()
        terminal.restore()
    }

    // MARK: Syncing in the background

    /// Registers (at once from what the device remembers; with the folder the first time, tried again while it is
    /// away), then watches the folder and syncs.
    private func register() async {
        var wait = Duration.seconds(1)
        while !registered {
            do {
                try await session.register(remote: remote, password: password)
                registered = true
            } catch {
                syncStatus = "not registered yet: \(Self.describe(error)); trying again"
                render()
                try? await Task.sleep(for: wait)  // an example app's retry, not a test's synchronisation
                wait = min(wait * 2, .seconds(30))
            }
        }
        session.document.startWatchingRemote(debounce: .milliseconds(200), pollInterval: pollInterval)
        syncSoon()
    }

    /// Starts a sync in the background (a sync already running is followed by one more, never two at once).
    private func syncSoon() {
        guard registered else { return }
        let document = session.document
        Task { _ = try? await document.synchronize() }
    }

    private func handle(_ event: SyncEvent) async {
        switch event {
        case .started: syncStatus = "syncing…"
        case .phase(let phase): syncStatus = "syncing: " + Self.describe(phase)
        case .applyingChangeSet(let index, let count, let changes):
            syncStatus = "syncing: applying change set \(index) of \(count) (\(changes) changes)"
        case .wholeStoreTransfer(let direction, let bytes, let total):
            syncStatus =
                "syncing: \(direction == .upload ? "uploading" : "downloading") the whole store, "
                + "\(bytes >> 20) of \(max(1, total >> 20)) MiB"
        case .rowsChanged(let rows):
            await learnNames(of: rows)
            changes = describe(rows) + Array(changes.prefix(2))
        case .completed(let report):
            syncStatus =
                "synced at \(Self.time())"
                + (report.changesSent > 0 ? ", sent \(report.changesSent) change(s)" : "")
            if !report.conflicts.isEmpty {
                conflicts = report.conflicts.map { "\($0.conflict.key): \($0.resolution)" }
            }
        case .failed(let error):
            syncStatus =
                error.code == .remoteUnavailable
                ? "shared folder unavailable since \(Self.time()): notes are kept here, and synced when it is back"
                : "sync failed at \(Self.time()): \(error.message)"
        default: return
        }
        render()
    }

    /// Asks the folder for the names of devices not seen before (only when one wrote something).
    private func learnNames(of rows: [RowChanges]) async {
        guard rows.contains(where: { deviceNames[$0.client] == nil }) else { return }
        deviceNames.merge(await session.deviceNames(for: rows)) { _, new in new }
    }

    /// A line per device that changed notes, its changes named by the notes' titles (read now: the set that changed
    /// them has committed, and the list on screen may not have been refreshed yet).
    private func describe(_ rows: [RowChanges]) -> [String] {
        let ids = rows.filter { $0.table == "notes" }.flatMap { $0.inserted + $0.updated.keys }
        let titles = (try? session.database.titles(of: ids)) ?? [:]
        return NotesOutput.changedNotes(rows, names: deviceNames, titles: titles).map { "\(Self.time())  \($0)" }
    }

    // MARK: The list

    private func show(_ listing: [NoteListing]) {
        notes = listing
        if selectedID.map({ id in !listing.contains { $0.id == id } }) ?? true { selectedID = listing.first?.id }
        render()
    }

    private func say(_ text: String) {
        message = text
        render()
    }

    // MARK: Keys

    private func press(_ key: RawTerminal.Key) {
        message = nil
        switch (mode, key) {
        case (.browsing, .character("a")): mode = .adding("")
        case (.browsing, .character("e")):
            if let note = selected { mode = .editing(id: note.id, text: note.text) }
        case (.browsing, .character("d")):
            if let note = selected { mode = .confirmingDelete(id: note.id) }
        case (.browsing, .character("s")): syncSoon()
        case (.browsing, .up), (.browsing, .character("k")): moveSelection(by: -1)
        case (.browsing, .down), (.browsing, .character("j")): moveSelection(by: 1)
        case (.adding(let text), _): mode = edit(text, key, done: { try self.session.database.add($0) }) { .adding($0) }
        case (.editing(let id, let text), _):
            mode = edit(
                text, key,
                done: {
                    try self.session.database.edit(id, $0)
                    return id
                }
            ) { .editing(id: id, text: $0) }
        case (.confirmingDelete(let id), .character("y")):
            write { try self.session.database.delete(id) }
            mode = .browsing
        case (.confirmingDelete, _): mode = .browsing
        default: break
        }
        render()
    }

    /// The mode after `key` typed into `text`: Enter saves (`done`), Escape cancels, others edit the text.
    private func edit(
        _ text: String, _ key: RawTerminal.Key, done: (String) throws -> String,
        typing: (String) -> Mode
    ) -> Mode {
        switch key {
        case .enter:
            if !text.isEmpty { write { selectedID = try done(text) } }
            return .browsing
        case .escape: return .browsing
        case .backspace: return typing(String(text.dropLast()))
        case .character(let character): return typing(text + String(character))
        default: return typing(text)
        }
    }

    /// A local write (never waits for the folder), then a sync in the background.
    private func write(_ body: () throws -> Void) {
        do {
            try body()
            syncSoon()
        } catch {
            message = Self.describe(error)
        }
    }

    private var selected: NoteListing? { notes.first { $0.id == selectedID } }

    private func moveSelection(by offset: Int) {
        guard let index = notes.firstIndex(where: { $0.id == selectedID }) else {
            selectedID = notes.first?.id
            return
        }
        selectedID = notes[max(0, min(notes.count - 1, index + offset))].id
    }

    // MARK: Drawing

    private func render() {
        let (rows, _) = terminal.size
        var lines = [
            "\u{1B}[7m Notes on \(NotesOutput.escaped(deviceName)) — \(notes.count) note\(notes.count == 1 ? "" : "s") \u{1B}[0m"
        ]
        let footer = footerLines()
        let room = max(1, rows - lines.count - footer.count)
        let index = notes.firstIndex { $0.id == selectedID } ?? 0
        let first = max(0, min(index - room / 2, notes.count - room))
        for note in notes.dropFirst(first).prefix(room) {
            var line = (note.id == selectedID ? "> " : "  ") + NotesOutput.escaped(note.text)
            if let folder = note.folder { line += "  [\(NotesOutput.escaped(folder))]" }
            if !note.tags.isEmpty { line += "  #" + note.tags.map(NotesOutput.escaped).joined(separator: " #") }
            lines.append(line)
        }
        if notes.isEmpty { lines.append("  (no notes yet: press a to add one)") }
        while lines.count < rows - footer.count { lines.append("") }
        terminal.draw(lines + footer)
    }

    private func footerLines() -> [String] {
        var lines = ["─── sync: " + NotesOutput.escaped(syncStatus)]
        lines += changes.prefix(3).map { "    " + $0 }
        lines += conflicts.prefix(2).map { "    conflict on " + NotesOutput.escaped($0) }
        if let message { lines.append("    " + NotesOutput.escaped(message)) }
        switch mode {
        case .browsing: lines.append("a add  e edit  d delete  s sync now  ↑↓ select  q quit")
        case .adding(let text): lines.append("New note: " + NotesOutput.escaped(text) + "▏  (Enter saves, Esc cancels)")
        case .editing(_, let text): lines.append("Edit: " + NotesOutput.escaped(text) + "▏  (Enter saves, Esc cancels)")
        case .confirmingDelete: lines.append("Delete this note? y deletes, any other key keeps it")
        }
        return lines
    }

    private static func time() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        return formatter.string(from: Date())
    }

    private static func describe(_ phase: SyncEvent.Phase) -> String {
        switch phase {
        case .checkingIntegrity: "checking the shared folder"
        case .findingRemoteChanges: "looking for other devices' changes"
        case .applyingRemoteChanges: "applying other devices' changes"
        case .stagingLocalChanges, .publishingLocalChanges: "publishing this device's changes"
        case .writingRecentSync: "saying what this device has"
        case .finished: "done"
        }
    }

    private static func describe(_ error: any Error) -> String {
        (error as? FolderSyncError)?.message ?? (error as? NotesError)?.description ?? "\(error)"
    }
}
