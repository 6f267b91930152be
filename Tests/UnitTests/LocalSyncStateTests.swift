import FolderSyncTesting
import Foundation
import Testing

@_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

/// The sync state has one writer per part: the store commits its progress, syncs save what they know of the remote.
@Suite("Local sync state")
struct LocalSyncStateTests {
    private func adapters(_ directory: TemporaryDirectory) throws -> [(String, any SimulatorStore)] {
        let time = SimulatedTime()
        let sqlite = try GRDBSimulatorStore(
            url: directory.url.appendingPathComponent("notes.sqlite"), now: time.clock(skew: 0))
        let memory = InMemoryModelAdapter(
            tables: SimulatedNotes.tables(deletePolicy: .deleteWins), now: time.clock(skew: 0))
        return [("in-memory", memory), ("GRDBStore", sqlite)]
    }

    private func ownSet(_ sequence: Int64) -> ChangeSetHeader {
        ChangeSetHeader(
            changeSetIdentifier: "me-\(sequence)", clientIdentifier: "me", sequence: sequence, schemaVersion: 1,
            changeCount: 0, createdAt: Date(timeIntervalSince1970: 0))
    }

    @Test(
        "Saving what a sync knows of the remote never moves the store's sequences, from a state read before they moved")
    func knowledgeLeavesProgress() throws {
        let directory = TemporaryDirectory()
        for (name, store) in try adapters(directory) {
            let adapter = store.adapter
            let readBefore = try adapter.loadSyncState()
            try store.insert(table: "notes", syncID: "n1", values: ["title": .text("one")])
            #expect(try adapter.stageChanges(sequence: 1, emit: { _ in }, seal: { 1 }) == 1, "\(name)")
            try adapter.markPublished(throughSequence: 1)
            var remote = readBefore.remote
            remote.knownRecentSyncs["B"] = .init(etag: "e1", publishedSequence: 4)
            try adapter.saveRemoteKnowledge(remote)
            let state = try adapter.loadSyncState()
            #expect(
                state.progress.nextSequence == 2 && state.progress.publishedSequence == 1, "\(name): \(state.progress)")
            #expect(state.remote == remote, "\(name)")
        }
    }

    @Test("Sets published in part keep the later sets' staged changes unpublished; the last one published leaves none")
    func publishedInPart() throws {
        let directory = TemporaryDirectory()
        for (name, store) in try adapters(directory) {
            let adapter = store.adapter
            for (sequence, id) in [(Int64(1), "n1"), (2, "n2")] {
                try store.insert(table: "notes", syncID: id, values: ["title": .text(id)])
                #expect(
                    try adapter.stageChanges(sequence: sequence, emit: { _ in }, seal: { sequence }) == 1, "\(name)")
            }
            try adapter.markPublished(throughSequence: 1)
            #expect(try adapter.hasUnpublishedChanges(), "\(name): set 2's change is staged, not published")
            try adapter.markPublished(throughSequence: 2)
            #expect(try !adapter.hasUnpublishedChanges(), "\(name)")
            #expect(try adapter.loadSyncState().progress.publishedSequence == 2, "\(name)")
        }
    }

    @Test(
        "A restored store continues after the remote's sequence, leaves the remote knowledge alone, and the apply that brings back its last own set clears what it had to apply again"
    )
    func restoreAndCatchUp() throws {
        let directory = TemporaryDirectory()
        for (name, store) in try adapters(directory) {
            let adapter = store.adapter
            try store.insert(table: "notes", syncID: "n1", values: ["title": .text("one")])
            _ = try adapter.stageChanges(sequence: 1, emit: { _ in }, seal: { 1 })
            try adapter.markPublished(throughSequence: 1)
            var remote = LocalSyncState.RemoteKnowledge()
            remote.announcedSequence = 1
            remote.hasListedClients = true
            try adapter.saveRemoteKnowledge(remote)

            try adapter.continueAfterRestore(remotePublishedSequence: 3, localClient: "me")
            var state = try adapter.loadSyncState()
            #expect(state.progress.ownChangeSetsToReapplyAfter == 1, "\(name)")
            #expect(
                state.progress.publishedSequence == 3 && state.progress.nextSequence == 4, "\(name): \(state.progress)")
            #expect(state.remote == remote, "\(name): the store wrote the remote knowledge")

            let nothing: ChangeStream = { _ in }
            _ = try adapter.apply(ownSet(3), localClient: "me", changes: nothing, resolutions: [:])
            #expect(
                try adapter.loadSyncState().progress.ownChangeSetsToReapplyAfter == 1,
                "\(name): cleared with set 2 missing")
            _ = try adapter.apply(ownSet(2), localClient: "me", changes: nothing, resolutions: [:])
            state = try adapter.loadSyncState()
            #expect(state.progress.ownChangeSetsToReapplyAfter == nil, "\(name): not cleared once caught up")
            #expect(state.progress.publishedSequence == 3 && state.remote == remote, "\(name)")
        }
    }

    @Test("The state is stored under the keys it had before the split, and state saved then reads the same")
    func storedKeysUnchanged() throws {
        var state = LocalSyncState()
        state.progress.ownChangeSetsToReapplyAfter = 2
        state.remote.announcedAt = Date(timeIntervalSince1970: 0)
        state.remote.ownRecentSyncEtag = "e"
        state.remote.ownWholeStoreTag = "w"
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(state)) as? [String: Any]
        #expect(
            Set(object?.keys.map { $0 } ?? []) == [
                "nextSequence", "publishedSequence", "ownChangeSetsToReapplyAfter", "hasBootstrapped",
                "knownRecentSyncs",
                "changeSetsSinceWholeStore", "bytesSinceWholeStore", "announcedSequence", "announcedAcknowledgement",
                "announcedAt",
                "ownRecentSyncEtag", "owesWholeStore", "acknowledgedByOthers", "hasListedClients", "recentlyPublished",
                "ownWholeStoreTag",
            ])
        // As the first version wrote it: only the two sequences.
        let first = try JSONDecoder().decode(
            LocalSyncState.self, from: Data(#"{"nextSequence":5,"publishedSequence":4}"#.utf8))
        #expect(first.progress.nextSequence == 5 && first.progress.publishedSequence == 4 && first.remote == .init())
        #expect(try JSONDecoder().decode(LocalSyncState.self, from: JSONEncoder().encode(state)) == state)
    }
}
