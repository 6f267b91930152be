import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The vacuum rule, recomputed here by brute force over every (client, sequence) pair, written independently of the
/// planner.
private struct RuleModel {
    var clients: [String]
    var changeSets: [String: Int64]  // author -> highest sequence (sets 1...n exist)
    var deleted: Set<String>
    var acknowledgements: [String: [String: Int64]]  // readable recent syncs only
    var stores: [String: [String: Int64]]  // readable manifests only

    var keptStores: [[String: Int64]] {
        // No two fabricated stores have equal coverage, so "dominated" is "another store covers at least as much
        // everywhere".
        stores.filter { name, covers in
            !stores.contains { other, otherCovers in
                other != name
                    && Set(covers.keys).union(otherCovers.keys).allSatisfy {
                        (otherCovers[$0] ?? 0) >= (covers[$0] ?? 0)
                    }
            }
        }.map(\.value)
    }

    var live: [String] { clients.filter { !deleted.contains($0) } }

    func removable() -> Set<String> {
        let kept = keptStores
        let live = self.live
        var result = Set<String>()
        for (author, count) in changeSets where count > 0 {
            for sequence in 1...count {
                let acknowledged = live.allSatisfy { $0 == author || (acknowledgements[$0]?[author] ?? 0) >= sequence }
                let covered = !kept.isEmpty && kept.allSatisfy { ($0[author] ?? 0) >= sequence }
                if acknowledged && covered { result.insert("\(author)/\(sequence)") }
            }
        }
        return result
    }

    func heldBackCounts() -> [String: Int] {
        let kept = keptStores
        let live = self.live
        var counts: [String: Int] = [:]
        for client in live {
            for (author, count) in changeSets where author != client && count > 0 {
                for sequence in 1...count
                where !kept.isEmpty && kept.allSatisfy({ ($0[author] ?? 0) >= sequence })
                    && (acknowledgements[client]?[author] ?? 0) < sequence
                {
                    counts[client, default: 0] += 1
                }
            }
        }
        return counts
    }
}

/// Change sets still on the remote, as "client/sequence".
private func remainingChangeSets(_ remote: any RemoteFileSystem, _ fabricator: DocumentFabricator) async throws -> Set<
    String
> {
    var result = Set<String>()
    for folder in try await remote.contentsOfDirectoryIfPresent(
        at: fabricator.layout.syncChangesDirectory(fabricator.document))
    {
        for item in try await remote.contentsOfDirectoryIfPresent(
            at: fabricator.layout.syncChangesDirectory(fabricator.document, client: folder.name))
        {
            if let parsed = RemoteLayout.parseChangeSetFileName(item.name) {
                result.insert("\(folder.name)/\(parsed.sequence)")
            }
        }
    }
    return result
}

/// Every path under the application's folder (one listing per folder).
private func everyPath(_ remote: any RemoteFileSystem) async throws -> Set<RemotePath> {
    let tree = try await remote.listTree(at: RemotePath.root.appending(Fixture.application))
    return Set(tree.flatMap { folder, items in items.map { folder.appending($0.name) } })
}

private func key(_ path: RemotePath) -> String {
    "\(path.parent.name)/\(RemoteLayout.parseChangeSetFileName(path.name)!.sequence)"
}

@Suite("Vacuum rule")
struct VacuumRuleTests {
    @Test(
        "20 clients × 10,000 change sets: vacuum removes exactly what a brute-force recomputation allows; dry run plans the same"
    )
    func largeDocument() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let fabricator = try DocumentFabricator(remote)
        try await fabricator.createDocumentFolders()
        var random = FolderSyncTesting.SeededGenerator(seed: 20_260_102)
        let clients = (0..<20).map { String(format: "client-%02d", $0) }
        var model = RuleModel(
            clients: clients, changeSets: [:], deleted: [clients[17], clients[18], clients[19]],
            acknowledgements: [:], stores: [:])

        var clock = Date()
        for client in clients {
            let count: Int64 = client == clients[19] ? 40 : 10_000
            model.changeSets[client] = count
            let folder = fabricator.layout.syncChangesDirectory(fabricator.document, client: client)
            try await remote.createDirectory(at: folder)
            for sequence in 1...count {
                // Plain writes: the fabricated tree need not be durable, and 200,000 fsyncs would take minutes.
                let path = remote.url(for: fabricator.changeSetPath(client, sequence)).path
                let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                let bytes = [UInt8](repeating: 0x5A, count: 16 + Int(sequence % 32))
                _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                close(fd)
            }
        }
        let fabricated = Date().timeIntervalSince(clock)

        // Recent syncs: clients 18 and 19 (deleted) have none; 17 (deleted) has one, which vacuum removes.
        for client in clients where client != clients[18] && client != clients[19] {
            var acknowledgement: [String: Int64] = [:]
            for author in clients where author != client {
                if author == clients[19] || random.chance(98) {
                    acknowledgement[author] = Int64(random.int(5_000...10_000))
                }
            }
            model.acknowledgements[client] = acknowledgement
            try await fabricator.recentSync(
                client, acknowledgement: acknowledgement, published: model.changeSets[client]!)
        }
        for client in model.deleted { try await fabricator.deletedClient(client) }

        // Three whole stores with random coverage, a fourth dominated by the first, a fifth unreadable.
        for owner in clients[0...2] {
            var covers: [String: Int64] = [:]
            for author in clients { covers[author] = Int64(random.int(3_000...10_000)) }
            model.stores[owner] = covers
            try await fabricator.wholeStore(owner, covers: covers)
        }
        let dominated = model.stores[clients[0]]!.mapValues { $0 - Int64(random.int(1...500)) }
        model.stores[clients[3]] = dominated
        try await fabricator.wholeStore(clients[3], covers: dominated)
        try await remote.createDirectory(
            at: fabricator.layout.wholeStoreDirectory(fabricator.document, client: clients[4]))
        try await remote.write(
            Data("garbage".utf8),
            to: fabricator.layout.appliedSyncChangeSetsFile(fabricator.document, client: clients[4]))
        let unknown = fabricator.layout.syncChangesDirectory(fabricator.document, client: clients[3]).appending(
            "notes.txt")
        try await remote.write(Data("left by hand".utf8), to: unknown)

        clock = Date()
        let expected = model.removable()
        let modelled = model.heldBackCounts()
        let modelTime = Date().timeIntervalSince(clock)
        let everything = try await remainingChangeSets(remote, fabricator)
        #expect(everything.count == 19 * 10_000 + 40)
        #expect(!expected.isEmpty && expected.count < everything.count)

        let maintenance = try DocumentMaintenance(
            context: DocumentOperationContext(
                fileSystem: remote, layout: fabricator.layout,
                documentIdentifier: fabricator.document, clientIdentifier: "foldersync",
                environment: Fixture.environment()))
        let before = try await everyPath(remote)
        clock = Date()
        let dry = try await maintenance.vacuum(dryRun: true)
        let dryTime = Date().timeIntervalSince(clock)
        #expect(try await everyPath(remote) == before, "the dry run changed the tree")

        clock = Date()
        let real = try await maintenance.vacuum()
        let realTime = Date().timeIntervalSince(clock)

        #expect(Set(dry.removedChangeSets.map(key)) == expected)
        #expect(dry.removed == real.removed && dry.heldBack == real.heldBack && dry.skipped == real.skipped)
        #expect(real.failures.isEmpty)
        let remaining = try await remainingChangeSets(remote, fabricator)
        #expect(remaining == everything.subtracting(expected), "remaining change sets differ from the recomputed rule")
        #expect(real.heldBack.mapValues(\.changeSetCount) == modelled)

        // The rest of the plan: the dominated store, the deleted client's marker and emptied folder go; unreadable and
        // unknown files stay.
        let layout = fabricator.layout
        let document = fabricator.document
        #expect(try await !remote.exists(layout.wholeStoreDirectory(document, client: clients[3])))
        #expect(try await remote.exists(layout.wholeStoreDirectory(document, client: clients[4])))
        #expect(try await !remote.exists(layout.recentSyncFile(document, client: clients[17])))
        #expect(try await !remote.exists(layout.syncChangesDirectory(document, client: clients[19])))
        #expect(try await remote.exists(unknown))
        #expect(real.skipped.contains { $0.path == unknown })
        #expect(real.skipped.contains { $0.path == layout.appliedSyncChangeSetsFile(document, client: clients[4]) })
        #expect(real.bytesFreed == real.removed.reduce(0) { $0 + $1.byteCount } && real.bytesFreed > 0)

        let again = try await maintenance.vacuum()
        #expect(again.removed.isEmpty, "a second vacuum found more to remove: \(again.removed.prefix(3))")
        print(
            "Vacuum of 20 × 10,000 change sets: fabricated in \(String(format: "%.1f", fabricated)) s; brute-force model \(String(format: "%.1f", modelTime)) s; dry run \(String(format: "%.2f", dryTime)) s; "
                + "vacuum \(String(format: "%.2f", realTime)) s removing \(real.removedChangeSets.count) change sets, \(real.removed.count) items, \(real.bytesFreed) bytes"
        )
    }

    @Test(
        "Random small documents on the in-memory remote: the remaining change sets match the recomputed rule",
        arguments: 1...6)
    func randomDocuments(seed: UInt64) async throws {
        let remote = InMemoryFileSystem()
        let fabricator = try DocumentFabricator(remote)
        try await fabricator.createDocumentFolders()
        var random = FolderSyncTesting.SeededGenerator(seed: seed)
        let clients = (0..<random.int(3...8)).map { "c\($0)" }
        var model = RuleModel(clients: clients, changeSets: [:], deleted: [], acknowledgements: [:], stores: [:])
        for client in clients {
            let count = Int64(random.int(0...120))
            model.changeSets[client] = count
            try await remote.createDirectory(
                at: fabricator.layout.syncChangesDirectory(fabricator.document, client: client))
            if count > 0 {
                for sequence in 1...count {
                    try await fabricator.changeSet(client, sequence, bytes: random.int(1...64))
                }
            }
            if random.chance(20) {
                model.deleted.insert(client)
                try await fabricator.deletedClient(client)
            }
        }
        for client in clients where random.chance(80) {
            var acknowledgement: [String: Int64] = [:]
            for author in clients where author != client && random.chance(90) {
                acknowledgement[author] = Int64(random.int(0...Int(model.changeSets[author]! + 5)))
            }
            if !model.deleted.contains(client) { model.acknowledgements[client] = acknowledgement }
            try await fabricator.recentSync(client, acknowledgement: acknowledgement)
        }
        for owner in clients where random.chance(40) {
            var covers: [String: Int64] = [:]
            for author in clients where random.chance(90) { covers[author] = Int64(random.int(0...130)) }
            // Ties would make "dominated" ambiguous in the model; nudge to keep coverage distinct.
            if model.stores.values.contains(where: { $0 == covers }) { covers[owner, default: 0] += 1 }
            model.stores[owner] = covers
            try await fabricator.wholeStore(owner, covers: covers)
        }

        let maintenance = try DocumentMaintenance(
            context: DocumentOperationContext(
                fileSystem: remote, layout: fabricator.layout,
                documentIdentifier: fabricator.document, clientIdentifier: "foldersync",
                environment: Fixture.environment()))
        let everything = try await remainingChangeSets(remote, fabricator)
        let before = await remote.allPaths()
        let dry = try await maintenance.vacuum(dryRun: true)
        #expect(await remote.allPaths() == before)
        let real = try await maintenance.vacuum()
        #expect(dry.removed == real.removed && dry.heldBack == real.heldBack)
        let expected = model.removable()
        #expect(Set(real.removedChangeSets.map(key)) == expected)
        #expect(try await remainingChangeSets(remote, fabricator) == everything.subtracting(expected))
        #expect(real.heldBack.mapValues(\.changeSetCount) == model.heldBackCounts())
        // Whole stores: never the last one; the survivors are exactly the undominated ones.
        let stores = Set(
            try await remote.contentsOfDirectory(at: fabricator.layout.wholeStoreDirectory(fabricator.document)).map(
                \.name))
        #expect(stores.count == model.keptStores.count)
    }

    @Test(
        "Two change sets under one number (a device cloned to a second machine) both stay, whatever acknowledgements and whole stores say"
    )
    func duplicatedSequenceKept() async throws {
        let remote = InMemoryFileSystem()
        let fabricator = try DocumentFabricator(remote)
        try await fabricator.createDocumentFolders()
        for sequence in Int64(1)...3 { try await fabricator.changeSet("c1", sequence) }
        let twin = fabricator.layout.syncChangesDirectory(fabricator.document, client: "c1")
            .appending(RemoteLayout.changeSetFileName(sequence: 2, changeSetIdentifier: "0000beef"))
        try await remote.write(Data(count: 24), to: twin)
        try await fabricator.recentSync("c1", acknowledgement: [:], published: 3)
        try await fabricator.recentSync("c2", acknowledgement: ["c1": 3])
        try await fabricator.wholeStore("c2", covers: ["c1": 3])

        let maintenance = try DocumentMaintenance(
            context: DocumentOperationContext(
                fileSystem: remote, layout: fabricator.layout,
                documentIdentifier: fabricator.document, clientIdentifier: "foldersync",
                environment: Fixture.environment()))
        let report = try await maintenance.vacuum()
        #expect(
            Set(report.removedChangeSets) == [fabricator.changeSetPath("c1", 1), fabricator.changeSetPath("c1", 3)])
        #expect(try await remote.exists(twin))
        #expect(try await remote.exists(fabricator.changeSetPath("c1", 2)))
        let kept = report.skipped.filter { $0.reason.contains("acknowledgements count numbers") }.map(\.path)
        #expect(Set(kept) == [twin, fabricator.changeSetPath("c1", 2)], "\(report.skipped)")
    }

    @Test("Temporaries older than the age limit are removed, younger ones kept; dates decide nothing else")
    func staleTemporaries() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let fabricator = try DocumentFabricator(remote)
        try await fabricator.createDocumentFolders()
        try await fabricator.changeSet("c1", 1)
        try await fabricator.recentSync("c1", acknowledgement: [:], published: 1)
        let now = Date()
        let layout = fabricator.layout
        let document = fabricator.document
        let old = layout.syncChangesDirectory(document, client: "c1").appending(
            TemporaryName.make(for: "000000000002-ab.syncchg"))
        let young = layout.recentSyncsDirectory(document).appending(TemporaryName.make(for: "c1.recentsync"))
        let oldFolder = layout.wholeStoreDirectory(document).appending(TemporaryName.make(for: "c1"))
        try await remote.write(Data(count: 100), to: old)
        try await remote.write(Data(count: 10), to: young)
        try await remote.createDirectory(at: oldFolder)
        try await remote.write(Data(count: 1_000), to: oldFolder.appending("WholeStore.ticdsync"))
        for (path, age) in [(old, 7_200.0), (young, 600.0), (oldFolder, 7_200.0)] {
            try FileManager.default.setAttributes(
                [.modificationDate: now.addingTimeInterval(-age)], ofItemAtPath: remote.url(for: path).path)
        }
        // The change set itself is old too: age never removes anything but temporaries.
        try FileManager.default.setAttributes(
            [.modificationDate: now.addingTimeInterval(-86_400 * 30)],
            ofItemAtPath: remote.url(for: fabricator.changeSetPath("c1", 1)).path)

        var environment = Fixture.environment()
        environment.now = { now }
        let maintenance = try DocumentMaintenance(
            context: DocumentOperationContext(
                fileSystem: remote, layout: layout,
                documentIdentifier: document, clientIdentifier: "foldersync", environment: environment))
        let report = try await maintenance.vacuum()
        #expect(Set(report.removed.map(\.path)) == [old, oldFolder])
        #expect(report.removed.allSatisfy { $0.reason == .staleTemporary })
        #expect(report.bytesFreed == 1_100)
        #expect(try await !remote.exists(old))
        #expect(try await !remote.exists(oldFolder))
        #expect(try await remote.exists(young))
        #expect(try await remote.exists(fabricator.changeSetPath("c1", 1)))

        let shorter = try await maintenance.vacuum(dryRun: true, temporaryFileAge: 60)
        #expect(shorter.removed.map(\.path) == [young])
    }
}
