import Crypto
import Foundation

@_spi(Tooling) @testable import FolderSync

/// One golden file: what it is, which version of its format, who wrote it, and what it holds.
struct GoldenFile: Sendable, CustomStringConvertible {
    enum Kind: String, Sendable {
        case changeSet = "change set"
        case wholeStore = "whole store"
        case propertyList = "property list"
        case attachment
        case sealedFile = "sealed file"
        case localStore = "local store"
    }

    /// Who wrote the file: today's code (its bytes are pinned: writing the same input again gives them), or the
    /// code of an earlier commit (a format today's code no longer writes, kept to be read).
    enum Writer: Sendable, Equatable {
        case current
        case commit(String)
    }

    /// What the file holds, as its format's specification says; every reader test compares with this.
    enum Content: Sendable {
        case changeSet(ChangeSetHeader, [SyncChange])
        case wholeStore(GoldenWholeStore)
        case propertyList(any PropertyListPayload)
        case attachment(AttachmentReference, contents: Data)
        /// A sealed (encrypted) file: its plaintext is the golden file `plaintext`, published at `remotePath`.
        case sealed(plaintext: String, remotePath: String)
        /// A local store of a bookkeeping version; `expected` is the neutral dump its writer read from it.
        case localStore(bookkeepingVersion: Int, expected: String)
    }

    /// Relative to `RemoteLayouts/v1/golden/fixtures/`.
    var path: String
    var kind: Kind
    /// The format's version, as the file states it (a change set's version byte, a property list's
    /// `formatVersion`, a whole store's version byte, a store's bookkeeping version).
    var version: Int
    var writer: Writer
    var content: Content

    var description: String { path }
}

/// A whole store: its header, its manifest, the neutral dump of its snapshot, and what installing it does.
struct GoldenWholeStore: Sendable {
    enum Install: Sendable, Equatable {
        /// Installed into a fresh store, its rows and merge metadata are the snapshot's.
        case installs
        /// Refused with this typed error, the fresh store left as it was.
        case refused(FolderSyncError.Code)
    }

    var header: WholeStoreFile.Header
    /// The golden manifest written with it.
    var manifest: String
    /// The snapshot's neutral dump (see ``NeutralDump``), written by the store's writer.
    var snapshotDump: String
    var install: Install
}

/// Every golden file, in one place. A new format version is a few lines here: its file, its kind and version,
/// `.current` as its writer, and its content; then `FOLDERSYNC_RECORD_NEW_GOLDEN=1 swift test --filter Golden`
/// writes the file once, and the entry of the version it replaces becomes `.commit("<last commit that wrote it>")`.
enum GoldenCatalog {
    static let changeSetsDirectory = "change-sets"
    static let base = Golden.baseMilliseconds

    static func ts(_ offset: UInt64, _ counter: UInt16 = 0) -> HybridTimestamp { Golden.timestamp(offset, counter) }

    // MARK: Attachments

    /// 1,024 bytes that do not compress (stored as they are).
    static let storedAttachmentContents: Data = {
        var state: UInt32 = 0x2545_F491
        return Data(
            (0..<1024).map { _ -> UInt8 in
                state = state &* 1_664_525 &+ 1_013_904_223
                return UInt8(truncatingIfNeeded: state >> 24)
            })
    }()
    /// 2,048 bytes of text (compressed with zlib).
    static let zlibAttachmentContents = Data(
        String(repeating: "FolderSync golden attachment. ", count: 69).utf8.prefix(2048))

    static func reference(of contents: Data, metadata: [String: String] = [:], inline: Bool = false)
        -> AttachmentReference
    {
        AttachmentReference(
            sha256: AttachmentReference.hex(SHA256.hash(data: contents)), size: Int64(contents.count),
            metadata: metadata, isInlineValue: inline)
    }

    static let storedAttachment = reference(of: storedAttachmentContents, metadata: ["name": "noise.bin"])
    static let zlibAttachment = reference(of: zlibAttachmentContents, metadata: ["name": "text.txt"])

    // MARK: Change sets

    static func header(
        _ client: String, _ sequence: Int64, _ id: String, count: Int, schemaVersion: Int = 1,
        dependencies: [String: Int64] = [:]
    ) -> ChangeSetHeader {
        ChangeSetHeader(
            changeSetIdentifier: id, clientIdentifier: client, sequence: sequence, schemaVersion: schemaVersion,
            changeCount: count, createdAt: Golden.date, dependencies: dependencies)
    }

    /// A's first set: inserts holding every value type, an attachment reference, and rows of both tables.
    static let insertsChanges: [SyncChange] = [
        SyncChange(
            kind: .insert, table: "notes", syncID: "n1",
            columns: [
                ColumnChange(column: "title", value: .text("Hello | é 🎉"), timestamp: ts(1)),
                ColumnChange(column: "n", value: .integer(-2), timestamp: ts(1)),
                ColumnChange(column: "x", value: .real(1.5), timestamp: ts(1)),
                ColumnChange(column: "b", value: .blob(Data([1, 2])), timestamp: ts(1)),
            ]),
        SyncChange(
            kind: .insert, table: "notes", syncID: "n2",
            columns: [
                ColumnChange(column: "title", value: .null, timestamp: ts(2)),
                ColumnChange(column: "n", value: .integer(.max), timestamp: ts(2)),
                ColumnChange(column: "x", value: .real(-1e300), timestamp: ts(2)),
                ColumnChange(column: "b", value: .blob(Data()), timestamp: ts(2)),
            ]),
        SyncChange(
            kind: .insert, table: "notes", syncID: "n7",
            columns: [
                ColumnChange(column: "title", value: .text("attached"), timestamp: ts(3, 1)),
                ColumnChange(column: "n", value: .integer(.min), timestamp: ts(3, 1)),
                ColumnChange(column: "x", value: .null, timestamp: ts(3, 1)),
                ColumnChange(column: "b", value: .blob(storedAttachment.databaseValue), timestamp: ts(3, 1)),
            ]),
        SyncChange(
            kind: .insert, table: "tags", syncID: "t1",
            columns: [
                ColumnChange(column: "name", value: .text("errands"), timestamp: ts(4))
            ]),
        SyncChange(
            kind: .insert, table: "tags", syncID: "t2",
            columns: [
                ColumnChange(column: "name", value: .text(""), timestamp: ts(5))
            ]),
    ]
    static let insertsHeader = header(Golden.clientA, 1, "C5000000-0000-4000-8000-000000000001", count: 5)

    /// A's second set: an update, a delete (delete wins) and a delete of a last-writer-wins row carrying the
    /// write it made before deleting.
    static let updatesChanges: [SyncChange] = [
        SyncChange(
            kind: .update, table: "notes", syncID: "n1",
            columns: [
                ColumnChange(column: "title", value: .text("Hello again"), timestamp: ts(10))
            ]),
        SyncChange(kind: .delete, table: "notes", syncID: "n2", deletionTimestamp: ts(11)),
        SyncChange(
            kind: .delete, table: "tags", syncID: "t1",
            columns: [
                ColumnChange(column: "name", value: .text("errands (last)"), timestamp: ts(12))
            ], deletionTimestamp: ts(13)),
    ]
    static let updatesHeader = header(
        Golden.clientA, 2, "C5000000-0000-4000-8000-000000000002", count: 3,
        dependencies: [Golden.clientB: 3])

    /// B's inserts, split by ``splitPartByteLimit`` into three sets of consecutive sequences.
    static let splitChanges: [SyncChange] = (10...15).map { k in
        SyncChange(
            kind: .insert, table: "notes", syncID: "n\(k)",
            columns: [
                ColumnChange(column: "title", value: .text("row \(k)"), timestamp: ts(UInt64(100 + k))),
                ColumnChange(column: "n", value: .integer(Int64(k)), timestamp: ts(UInt64(100 + k))),
            ])
    }
    static let splitPartByteLimit = 100
    static func splitIdentifier(_ sequence: Int64) -> String { "C5000000-0000-4000-8000-00000000001\(sequence)" }
    static let splitParts: [(header: ChangeSetHeader, changes: [SyncChange])] = [
        (
            header(Golden.clientB, 1, splitIdentifier(1), count: 2, dependencies: [Golden.clientA: 1]),
            Array(splitChanges[0..<2])
        ),
        (
            header(Golden.clientB, 2, splitIdentifier(2), count: 2, dependencies: [Golden.clientA: 1]),
            Array(splitChanges[2..<4])
        ),
        (
            header(Golden.clientB, 3, splitIdentifier(3), count: 2, dependencies: [Golden.clientA: 1]),
            Array(splitChanges[4..<6])
        ),
    ]

    /// B's set from an app at schema version 2 (notes gained a `due` column).
    static let schema2Changes: [SyncChange] = [
        SyncChange(
            kind: .insert, table: "notes", syncID: "n20",
            columns: [
                ColumnChange(column: "title", value: .text("needs schema 2"), timestamp: ts(200)),
                ColumnChange(column: "due", value: .integer(20_260_102), timestamp: ts(200)),
            ]),
        SyncChange(
            kind: .update, table: "notes", syncID: "n10",
            columns: [
                ColumnChange(column: "due", value: .integer(20_260_103), timestamp: ts(201))
            ]),
    ]
    static let schema2Header = header(
        Golden.clientB, 4, "C5000000-0000-4000-8000-000000000020", count: 2, schemaVersion: 2,
        dependencies: [Golden.clientA: 2])

    /// The change sets in the order a reader applies them (each after what its header depends on).
    static let changeSetApplyOrder = [
        "change-sets/v1-inserts.syncchg", "change-sets/v1-split-part1.syncchg",
        "change-sets/v1-split-part2.syncchg", "change-sets/v1-split-part3.syncchg",
        "change-sets/v1-updates-deletes.syncchg",
    ]

    /// The rows of a fresh schema-1 store (notes, tags) after applying ``changeSetApplyOrder``.
    static let rowsAfterChangeSets: [String] =
        ([
            NeutralDump.row(
                "notes", "n1",
                ["title": .text("Hello again"), "n": .integer(-2), "x": .real(1.5), "b": .blob(Data([1, 2]))]),
            NeutralDump.row(
                "notes", "n7",
                ["title": .text("attached"), "n": .integer(.min), "b": .blob(storedAttachment.databaseValue)]),
            NeutralDump.row("tags", "t2", ["name": .text("")]),
        ]
        + (10...15).map { NeutralDump.row("notes", "n\($0)", ["title": .text("row \($0)"), "n": .integer(Int64($0))]) })
        .sorted()

    /// Tombstones (table and sync ID) after applying ``changeSetApplyOrder``.
    static let tombstonesAfterChangeSets = ["notes|n2", "tags|t1"]

    // MARK: Property lists

    static let formatVersion = FormatVersionInfo(
        layoutVersion: 1, createdByClient: Golden.clientA, creationDate: Golden.date, encrypted: nil)
    static let formatVersionEncrypted = FormatVersionInfo(
        layoutVersion: 1, createdByClient: Golden.clientA, creationDate: Golden.date, encrypted: true)
    /// Layout version 2 (the removed areas): the same property list, another number.
    static let formatVersionLayout2 = FormatVersionInfo(
        layoutVersion: 2, createdByClient: Golden.clientA, creationDate: Golden.date,
        encrypted: nil)
    static let formatVersionLayout2Encrypted = FormatVersionInfo(
        layoutVersion: 2, createdByClient: Golden.clientA,
        creationDate: Golden.date, encrypted: true)
    static let removal = RemovalRecord(removedBy: Golden.clientB, operation: .vacuum, removalDate: Golden.date)
    static let deviceInfo = DeviceInfo(
        clientIdentifier: Golden.clientA, clientDescription: "Ann's laptop <&>",
        userInfo: ["model": "test", "ünïcode": "✓"], registrationDate: Golden.date)
    static let documentInfo = DocumentInfo(
        documentIdentifier: Golden.document, documentDescription: "Notes", userInfo: ["kind": "notes"],
        integrityKey: "00000000-0000-4000-8000-000000000001", createdByClient: Golden.clientA,
        creationDate: Golden.date)
    static let deletedDocument = DeletedDocumentInfo(
        documentIdentifier: Golden.document, deletedByClient: Golden.clientB, deletionDate: Golden.date)
    static let deletedClient = DeletedClientInfo(
        clientIdentifier: Golden.clientB, deletedBy: "operator ann", deletionDate: Golden.date)
    static let localRegistration = LocalRegistration(
        applicationIdentifier: "com.example.notes", documentIdentifier: Golden.document,
        clientIdentifier: Golden.clientA, integrityKey: "00000000-0000-4000-8000-000000000001")
    /// Version 2 remembers the application's key file, to unlock an encrypted application at a launch without the
    /// remote.
    static let localRegistrationEncrypted: LocalRegistration = {
        var registration = localRegistration
        registration.encryptionKey = try! PropertyListFile.encode(GoldenWriters.encryptionKeyInfo)
        return registration
    }()
    /// Version 3 remembers the device info the remote holds, so that a launch writes it only when it changed.
    static let localRegistrationWithDevice: LocalRegistration = {
        var registration = localRegistration
        registration.deviceInfo = deviceInfo
        return registration
    }()
    static let localApplicationSeen = LocalApplicationSeen(
        applicationIdentifier: "com.example.notes", clientIdentifier: Golden.clientA)
    static let localReset = LocalReset(
        code: FolderSyncError.Code.integrityKeyMismatch.rawValue,
        message: "the remote document was replaced (integrity key changed)",
        path: "com.example.notes/Documents/\(Golden.document)/IntegrityKey",
        backupPath: "/home/ann/.notes/helper/Backups/backup-001767323045-00000000-0000-4000-8000-000000000002.sqlite",
        date: Golden.date)
    static let localSyncStatus = LocalSyncStatus(
        lastSuccess: Golden.date, lastFailure: Golden.date.addingTimeInterval(60),
        lastErrorCode: FolderSyncError.Code.remoteUnavailable.rawValue,
        lastErrorMessage: "the shared folder holds no application com.example.notes: it is not mounted or not reachable"
    )
    static let recentSyncGeneration1 = RecentSync(
        clientIdentifier: Golden.clientA, lastSyncDate: Golden.date, publishedSequence: 2,
        acknowledgement: [Golden.clientA: 2, Golden.clientB: 2], schemaVersion: 1)
    static let recentSyncGeneration2 = RecentSync(
        clientIdentifier: Golden.clientB, lastSyncDate: Golden.date, publishedSequence: 4,
        acknowledgement: [Golden.clientA: 2, Golden.clientB: 4], schemaVersion: 2,
        recentChangeSets: (1...3).map {
            RemoteLayout.changeSetFileName(sequence: Int64($0), changeSetIdentifier: splitIdentifier(Int64($0)))
        }
            + [RemoteLayout.changeSetFileName(sequence: 4, changeSetIdentifier: schema2Header.changeSetIdentifier)])
    /// Version 2: the marker of a sync that published a small set carries its bytes (the golden inserts set).
    static let recentSyncGeneration3: RecentSync = {
        let name = RemoteLayout.changeSetFileName(sequence: 1, changeSetIdentifier: insertsHeader.changeSetIdentifier)
        return RecentSync(
            clientIdentifier: Golden.clientA, lastSyncDate: Golden.date, publishedSequence: 1,
            acknowledgement: [Golden.clientA: 1], schemaVersion: 1, recentChangeSets: [name],
            changeSetContents: [name: try! Golden.data("change-sets/v1-inserts.syncchg")])
    }()

    /// Version 3: the marker names the installation that wrote it, the change set it waits for, and the identity its
    /// client left.
    static let recentSyncGeneration4 = RecentSync(
        clientIdentifier: Golden.clientA, lastSyncDate: Golden.date, publishedSequence: 1,
        acknowledgement: [Golden.clientA: 1, Golden.clientB: 2], schemaVersion: 1,
        recentChangeSets: [
            RemoteLayout.changeSetFileName(sequence: 1, changeSetIdentifier: insertsHeader.changeSetIdentifier)
        ],
        installation: "1A000000-0000-4000-8000-000000000001", waitingFor: [Golden.clientB: 3],
        formerIdentity: "CCCCCCCC-CCCC-4CCC-8CCC-CCCCCCCCCCCC")
    /// Version 4: the marker of a client that re-joined after a wipe awaits the clients of the old epoch it knew and
    /// has not seen registered since.
    static let recentSyncGeneration5 = RecentSync(
        clientIdentifier: Golden.clientA, lastSyncDate: Golden.date, publishedSequence: 1,
        acknowledgement: [Golden.clientA: 1], schemaVersion: 1,
        recentChangeSets: [
            RemoteLayout.changeSetFileName(sequence: 1, changeSetIdentifier: insertsHeader.changeSetIdentifier)
        ],
        installation: "1A000000-0000-4000-8000-000000000001",
        awaiting: [Golden.clientB, "CCCCCCCC-CCCC-4CCC-8CCC-CCCCCCCCCCCC"])
    /// The helper folder's installation, announced in a marker.
    static let localInstallation = LocalInstallation(
        identifier: "1A000000-0000-4000-8000-000000000001",
        binding: "0f1e2d3c4b5a69788796a5b4c3d2e1f0 2049:1310721 2049:1310722", announced: true)

    // MARK: Encryption

    static let password = "correct horse battery staple (golden)"
    /// The data key of the golden sealed files (bytes 1…32).
    static let dataKey = SymmetricKey(data: Data(1...32))
    static let keySalt = Data(repeating: 0xA5, count: 32)
    static let keyNonce = Data(repeating: 0x5A, count: 12)
    static func fileSalt(_ n: UInt8) -> Data { Data(repeating: n, count: 32) }

    // MARK: Whole stores

    /// A whole store and its manifest (`whole-stores/<name>.ticdsync`, `.manifest.ticdsync`, `.expected.txt`).
    ///
    /// A new whole-store format (say 3, with a snapshot schema number in its header) or manifest version (say 2,
    /// with a checksum of the content): mark the four `.current` lines below with the last commit that wrote
    /// them, add four lines of the new version (`version: 3`, `writer: .current`; the header and manifest built
    /// here gain the new fields), record them once (`FOLDERSYNC_RECORD_NEW_GOLDEN=1`), and set `install:` of the
    /// historical lines to what the new reader does with them (`.installs` when it converts them,
    /// `.refused(.unsupportedFormatVersion)` when it refuses them by their number).
    static func wholeStore(
        _ name: String, version: Int, compression: WholeStoreCompression, attachments: Bool, writer: GoldenFile.Writer,
        countsAttachments: Bool = false, install: GoldenWholeStore.Install
    ) -> [GoldenFile] {
        let path = "whole-stores/\(name).ticdsync"
        let manifestPath = "whole-stores/\(name).manifest.ticdsync"
        let expected = "whole-stores/\(name).expected.txt"
        let identifier = "5C000000-0000-4000-8000-00000000000\(attachments ? 2 : 1)"
        // The header's snapshot length is read from the file itself: it is what its writer's SQLite made.
        let snapshotSize = (try? WholeStoreHeaderPeek.snapshotByteCount(Golden.url(path))) ?? 0
        let covers: [String: Int64] = [Golden.clientA: attachments ? 1 : 2, Golden.clientB: 2]
        // Format 3 says in the file what the snapshot contains and the shape of its bookkeeping (2: packed registers).
        let header = WholeStoreFile.Header(
            wholeStoreIdentifier: identifier, clientIdentifier: Golden.clientA, schemaVersion: 1,
            snapshotByteCount: snapshotSize, compression: compression,
            snapshotSchemaVersion: version >= 3 ? 2 : nil, covers: version >= 3 ? covers : nil)
        let byteCount = Int64(
            (try? FileManager.default.attributesOfItem(atPath: Golden.url(path).path)[.size] as? Int) ?? 0)
        // Manifest version 2 (with format 3) adds the checksum of the content, which the file's trailer holds.
        let manifest = WholeStoreManifest(
            clientIdentifier: Golden.clientA, wholeStoreIdentifier: identifier, creationDate: Golden.date,
            schemaVersion: 1, covers: covers, wholeStoreByteCount: byteCount,
            wholeStoreChecksum: WholeStoreHeaderPeek.checksumWithTrailer(Golden.url(path)),
            contentChecksum: version >= 3 ? WholeStoreHeaderPeek.trailer(Golden.url(path)) : nil,
            attachmentReferenceCount: countsAttachments ? (attachments ? 1 : 0) : nil)
        return [
            GoldenFile(
                path: path, kind: .wholeStore, version: version, writer: writer,
                content: .wholeStore(
                    GoldenWholeStore(header: header, manifest: manifestPath, snapshotDump: expected, install: install))),
            GoldenFile(
                path: manifestPath, kind: .propertyList, version: version >= 3 ? 2 : 1, writer: writer,
                content: .propertyList(manifest)),
        ]
    }

    // MARK: The catalog

    static let files: [GoldenFile] = {
        var files: [GoldenFile] = [
            GoldenFile(
                path: "change-sets/v1-inserts.syncchg", kind: .changeSet, version: 1, writer: .current,
                content: .changeSet(insertsHeader, insertsChanges)),
            GoldenFile(
                path: "change-sets/v1-updates-deletes.syncchg", kind: .changeSet, version: 1, writer: .current,
                content: .changeSet(updatesHeader, updatesChanges)),
            GoldenFile(
                path: "change-sets/v1-schema2.syncchg", kind: .changeSet, version: 1, writer: .current,
                content: .changeSet(schema2Header, schema2Changes)),
        ]
        for (index, part) in splitParts.enumerated() {
            files.append(
                GoldenFile(
                    path: "change-sets/v1-split-part\(index + 1).syncchg", kind: .changeSet, version: 1,
                    writer: .current,
                    content: .changeSet(part.header, part.changes)))
        }
        files += [
            GoldenFile(
                path: "recent-syncs/generation1.recentsync", kind: .propertyList, version: 1,
                writer: .commit("1c87d59"),
                content: .propertyList(recentSyncGeneration1)),
            GoldenFile(
                path: "recent-syncs/generation2.recentsync", kind: .propertyList, version: 1, writer: .current,
                content: .propertyList(recentSyncGeneration2)),
            GoldenFile(
                path: "recent-syncs/generation3.recentsync", kind: .propertyList, version: 2, writer: .current,
                content: .propertyList(recentSyncGeneration3)),
            GoldenFile(
                path: "recent-syncs/generation4.recentsync", kind: .propertyList, version: 3, writer: .current,
                content: .propertyList(recentSyncGeneration4)),
            GoldenFile(
                path: "recent-syncs/generation5.recentsync", kind: .propertyList, version: 4, writer: .current,
                content: .propertyList(recentSyncGeneration5)),
            GoldenFile(
                path: "property-lists/FormatVersion.plist", kind: .propertyList, version: 1, writer: .commit("8a96d90"),
                content: .propertyList(formatVersion)),
            GoldenFile(
                path: "property-lists/FormatVersion-encrypted.plist", kind: .propertyList, version: 1,
                writer: .commit("8a96d90"),
                content: .propertyList(formatVersionEncrypted)),
            GoldenFile(
                path: "property-lists/FormatVersion-layout2.plist", kind: .propertyList, version: 1, writer: .current,
                content: .propertyList(formatVersionLayout2)),
            GoldenFile(
                path: "property-lists/FormatVersion-layout2-encrypted.plist", kind: .propertyList, version: 1,
                writer: .current, content: .propertyList(formatVersionLayout2Encrypted)),
            GoldenFile(
                path: "property-lists/Removal.plist", kind: .propertyList, version: 1, writer: .current,
                content: .propertyList(removal)),
            GoldenFile(
                path: "property-lists/deviceInfo.plist", kind: .propertyList, version: 1, writer: .current,
                content: .propertyList(deviceInfo)),
            GoldenFile(
                path: "property-lists/documentInfo.plist", kind: .propertyList, version: 1, writer: .current,
                content: .propertyList(documentInfo)),
            GoldenFile(
                path: "property-lists/deletedDocument.plist", kind: .propertyList, version: 1, writer: .current,
                content: .propertyList(deletedDocument)),
            GoldenFile(
                path: "property-lists/deletedClient.plist", kind: .propertyList, version: 1, writer: .current,
                content: .propertyList(deletedClient)),
            GoldenFile(
                path: "property-lists/Registration.plist", kind: .propertyList, version: 1, writer: .commit("cc4ba60"),
                content: .propertyList(localRegistration)),
            GoldenFile(
                path: "property-lists/Registration-v2.plist", kind: .propertyList, version: 2, writer: .current,
                content: .propertyList(localRegistration)),
            GoldenFile(
                path: "property-lists/Registration-v2-encrypted.plist", kind: .propertyList, version: 2,
                writer: .current,
                content: .propertyList(localRegistrationEncrypted)),
            GoldenFile(
                path: "property-lists/Registration-v3.plist", kind: .propertyList, version: 3, writer: .current,
                content: .propertyList(localRegistrationWithDevice)),
            GoldenFile(
                path: "property-lists/Application.plist", kind: .propertyList, version: 1, writer: .current,
                content: .propertyList(localApplicationSeen)),
            GoldenFile(
                path: "property-lists/Reset.plist", kind: .propertyList, version: 1, writer: .current,
                content: .propertyList(localReset)),
            GoldenFile(
                path: "property-lists/Status.plist", kind: .propertyList, version: 1, writer: .current,
                content: .propertyList(localSyncStatus)),
            GoldenFile(
                path: "property-lists/Installation.plist", kind: .propertyList, version: 1, writer: .current,
                content: .propertyList(localInstallation)),
            GoldenFile(
                path: "property-lists/EncryptionKey.plist", kind: .propertyList, version: 1, writer: .current,
                content: .propertyList(GoldenWriters.encryptionKeyInfo)),
            GoldenFile(
                path: "attachments/\(storedAttachment.sha256)", kind: .attachment, version: 1, writer: .current,
                content: .attachment(storedAttachment, contents: storedAttachmentContents)),
            GoldenFile(
                path: "attachments/\(zlibAttachment.sha256)", kind: .attachment, version: 1, writer: .current,
                content: .attachment(zlibAttachment, contents: zlibAttachmentContents)),
            GoldenFile(
                path: "sealed/deviceInfo.plist", kind: .sealedFile, version: 1, writer: .current,
                content: .sealed(
                    plaintext: "property-lists/deviceInfo.plist",
                    remotePath: "com.example.notes/ClientDevices/\(Golden.clientA)/deviceInfo.plist")),
            GoldenFile(
                path: "sealed/v1-inserts.syncchg", kind: .sealedFile, version: 1, writer: .current,
                content: .sealed(
                    plaintext: "change-sets/v1-inserts.syncchg",
                    remotePath: "com.example.notes/Documents/\(Golden.document)/SyncChanges/\(Golden.clientA)/"
                        + RemoteLayout.changeSetFileName(
                            sequence: 1, changeSetIdentifier: insertsHeader.changeSetIdentifier))),
            GoldenFile(
                path: "sealed/attachment", kind: .sealedFile, version: 1, writer: .current,
                content: .sealed(
                    plaintext: "attachments/\(zlibAttachment.sha256)",
                    remotePath: "com.example.notes/Documents/\(Golden.document)/Attachments/\(zlibAttachment.sha256)")),
        ]
        // Whole stores: every format and snapshot shape ever written, each with its manifest.
        for (compression, encoding) in [("stored", WholeStoreCompression.none), ("zlib", .zlib)] {
            for attachments in [false, true] {
                let suffix = attachments ? "-attachments" : ""
                files += wholeStore(
                    "format3-\(compression)\(suffix)", version: 3, compression: encoding, attachments: attachments,
                    writer: .current, countsAttachments: true, install: .installs)
                // Format 2 with manifest version 1 as the last commits before format 3 wrote it (the whole-store
                // writer of b07a721, run on this branch at 4ff6da9).
                files += wholeStore(
                    "format2-\(compression)\(suffix)", version: 2, compression: encoding, attachments: attachments,
                    writer: .commit("4ff6da9"), countsAttachments: true, install: .installs)
            }
        }
        for attachments in ["", "-attachments"] {
            files += wholeStore(
                "format1-percolumn-zlib\(attachments)", version: 1, compression: .zlib,
                attachments: !attachments.isEmpty,
                writer: .commit("1c87d59"), install: historicalInstall)
            files += wholeStore(
                "format2-percolumn-stored\(attachments)", version: 2, compression: .none,
                attachments: !attachments.isEmpty,
                writer: .commit("1dca460"), install: historicalInstall)
            files += wholeStore(
                "format2-percolumn-zlib\(attachments)", version: 2, compression: .zlib,
                attachments: !attachments.isEmpty,
                writer: .commit("1dca460"), install: historicalInstall)
            files += wholeStore(
                "format1-packed-nohead-zlib\(attachments)", version: 1, compression: .zlib,
                attachments: !attachments.isEmpty,
                writer: .commit("3188797"), install: .installs)
            files += wholeStore(
                "format1-packed-zlib\(attachments)", version: 1, compression: .zlib, attachments: !attachments.isEmpty,
                writer: .commit("281fefb"), install: .installs)
        }
        // Local stores of every bookkeeping version.
        for (version, commit) in [(1, "1c87d59"), (2, "3188797"), (3, "281fefb"), (4, "f72481c")] {
            files.append(
                GoldenFile(
                    path: "local-stores/bookkeeping-v\(version).sqlite", kind: .localStore, version: version,
                    writer: .commit(commit),
                    content: .localStore(
                        bookkeepingVersion: version, expected: "local-stores/bookkeeping-v\(version).expected.txt")))
        }
        files.append(
            GoldenFile(
                path: "local-stores/bookkeeping-v5.sqlite", kind: .localStore, version: 5, writer: .commit("4ff6da9"),
                content: .localStore(bookkeepingVersion: 5, expected: "local-stores/bookkeeping-v5.expected.txt")))
        // Version 5 as its last writer left it (e578d01, recorded there before version 6 changed the writer).
        files.append(
            GoldenFile(
                path: "local-stores/bookkeeping-v5-e578d01.sqlite", kind: .localStore, version: 5,
                writer: .commit("e578d01"),
                content: .localStore(
                    bookkeepingVersion: 5, expected: "local-stores/bookkeeping-v5-e578d01.expected.txt")))
        // Version 6: registers in their compact encoding, a new row's columns marked `#all` (its last writer, accab24).
        files.append(
            GoldenFile(
                path: "local-stores/bookkeeping-v6.sqlite", kind: .localStore, version: 6, writer: .commit("accab24"),
                content: .localStore(bookkeepingVersion: 6, expected: "local-stores/bookkeeping-v6.expected.txt")))
        // Version 7: capture functions named by their message, the table of tombstones' change sets.
        files.append(
            GoldenFile(
                path: "local-stores/bookkeeping-v7.sqlite", kind: .localStore, version: 7, writer: .commit("fc5d52a"),
                content: .localStore(bookkeepingVersion: 7, expected: "local-stores/bookkeeping-v7.expected.txt")))
        // Version 8: the ledger keyed by change-set identifier, covered runs without rows.
        files.append(
            GoldenFile(
                path: "local-stores/bookkeeping-v8.sqlite", kind: .localStore, version: 8, writer: .commit("1602078"),
                content: .localStore(bookkeepingVersion: 8, expected: "local-stores/bookkeeping-v8.expected.txt")))
        // Version 9: a delete of a delete-wins row recorded in one write (n6: its marks carry its time, no tombstone).
        files.append(
            GoldenFile(
                path: "local-stores/bookkeeping-v9.sqlite", kind: .localStore, version: 9, writer: .current,
                content: .localStore(bookkeepingVersion: 9, expected: "local-stores/bookkeeping-v9.expected.txt")))
        return files
    }()

    /// What installing a whole store of the per-column snapshot shape (snapshot schema 1, files without the number)
    /// does today: the snapshot check refuses its `foldersync_clocks`, whose columns are not the store's
    /// (`corruptFile`), before anything is installed; a new device then joins from change sets.
    static let historicalInstall = GoldenWholeStore.Install.refused(.corruptFile)

    static func file(_ path: String) -> GoldenFile { files.first { $0.path == path }! }
    static func files(of kind: GoldenFile.Kind) -> [GoldenFile] { files.filter { $0.kind == kind } }
}

/// Reads what a whole-store file's header and trailer say without the reader (the catalog is built before any test).
enum WholeStoreHeaderPeek {
    static func snapshotByteCount(_ url: URL) throws -> UInt64 {
        let bytes = [UInt8](try Data(contentsOf: url).prefix(13 + 1024))
        var source = ArrayByteSource(Array(bytes[13...]))
        _ = try source.readString(what: "identifier")
        _ = try source.readString(what: "client")
        _ = try source.readInt64()
        return try source.readUInt64()
    }

    /// The CRC-32 of the whole file, trailer included: what a manifest of format version 1 records.
    static func checksumWithTrailer(_ url: URL) -> UInt32 {
        (try? Data(contentsOf: url)).map { Checksum.crc32($0) } ?? 0
    }

    /// The file's CRC-32 trailer: the checksum of its content, which a manifest of version 2 records.
    static func trailer(_ url: URL) -> UInt32 {
        guard let data = try? Data(contentsOf: url), data.count >= 4 else { return 0 }
        return data.suffix(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}
