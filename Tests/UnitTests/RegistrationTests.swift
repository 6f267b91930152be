import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

@Suite("Registration")
struct RegistrationTests {
    @Test("The first client creates the whole tree; the second writes only its own folder")
    func firstAndSecondClient() async throws {
        let remote = InMemoryFileSystem()
        let helpers = TemporaryDirectory()
        try await Fixture.register(remote, client: Fixture.clientA, helper: helpers.subdirectory("A"))
        let afterFirst = Set(await remote.allPaths())
        let layout = try RemoteLayout(applicationIdentifier: Fixture.application)
        #expect(afterFirst.contains(layout.readMeFile))
        #expect(afterFirst.contains(layout.formatVersionFile))
        #expect(afterFirst.contains(layout.deletedDocumentsDirectory))
        #expect(afterFirst.contains(layout.documentInfoFile(Fixture.document)))

        try await Fixture.register(remote, client: Fixture.clientB, helper: helpers.subdirectory("B"))
        let added = Set(await remote.allPaths()).subtracting(afterFirst)
        let document = Fixture.document
        #expect(
            added == [
                layout.clientDeviceDirectory(Fixture.clientB), layout.deviceInfoFile(Fixture.clientB),
                layout.syncChangesDirectory(document, client: Fixture.clientB),
                layout.syncCommandsDirectory(document, client: Fixture.clientB),
                layout.temporaryWholeStoreDirectory(document, client: Fixture.clientB),
            ])
        for path in added {
            #expect(path.components.contains(Fixture.clientB), "client B wrote outside its own names: \(path)")
        }
    }

    @Test("Both clients adopt the one integrity key, and state reaches ableToSync")
    func sharedIntegrityKey() async throws {
        let remote = InMemoryFileSystem()
        let helpers = TemporaryDirectory()
        let a = try await Fixture.register(remote, client: Fixture.clientA, helper: helpers.subdirectory("A"))
        let b = try await Fixture.register(remote, client: Fixture.clientB, helper: helpers.subdirectory("B"))
        #expect(a.integrityKey != nil)
        #expect(a.integrityKey == b.integrityKey)
        #expect(a.state == .ableToSync && b.state == .ableToSync)
        #expect(a.applicationSyncManager.state == .ableToSync)
        let keys = try await remote.contentsOfDirectory(at: a.layout.integrityKeyDirectory(Fixture.document))
        #expect(keys.map(\.name) == [a.integrityKey])
    }

    @Test("Registering again keeps the key and rewrites only the device info")
    func reRegistration() async throws {
        let remote = InMemoryFileSystem()
        let helpers = TemporaryDirectory()
        let helper = helpers.subdirectory("A")
        let first = try await Fixture.register(remote, client: Fixture.clientA, helper: helper)
        let before = await remote.allPaths()
        let documentInfo = try await remote.read(first.layout.documentInfoFile(Fixture.document))
        let again = try await Fixture.register(remote, client: Fixture.clientA, helper: helper)
        #expect(again.integrityKey == first.integrityKey)
        #expect(await remote.allPaths() == before)
        #expect(try await remote.read(first.layout.documentInfoFile(Fixture.document)) == documentInfo)
    }

    @Test("A missing remote document pauses registration; the handler's yes creates it")
    func missingDocumentYes() async throws {
        let remote = InMemoryFileSystem()
        let helpers = TemporaryDirectory()
        let (app, configuration) = Fixture.application(remote, client: Fixture.clientA)
        try await app.register(configuration)
        let document = try DocumentSyncManager(
            applicationSyncManager: app,
            configuration: Fixture.documentConfiguration(helper: helpers.url))
        let asked = Locked<[RemoteDocumentCreationRequest]>([])
        document.remoteDocumentCreationHandler = { request in
            asked.withLock { $0.append(request) }
            return true
        }
        try await document.registerConfigured()
        #expect(
            asked.current == [
                RemoteDocumentCreationRequest(documentIdentifier: Fixture.document, reason: .documentDoesNotExist)
            ])
        #expect(try await remote.exists(document.relativePathToThisDocumentInfoPlistFile))
        #expect(document.state == .ableToSync)
    }

    @Test("The delegate answers when there is no handler")
    func missingDocumentDelegate() async throws {
        final class Delegate: DocumentSyncManagerDelegate, @unchecked Sendable {
            var began = false, finished = false
            func documentSyncManagerDidBeginRegistering(_ manager: DocumentSyncManager) { began = true }
            func documentSyncManager(
                _ manager: DocumentSyncManager,
                shouldCreateRemoteDocumentFor request: RemoteDocumentCreationRequest
            ) async -> Bool { true }
            func documentSyncManagerDidFinishRegistering(_ manager: DocumentSyncManager) { finished = true }
        }
        let remote = InMemoryFileSystem()
        let helpers = TemporaryDirectory()
        let (app, configuration) = Fixture.application(remote, client: Fixture.clientA)
        try await app.register(configuration)
        let delegate = Delegate()
        let document = try await DocumentSyncManager(
            applicationSyncManager: app,
            registering: Fixture.documentConfiguration(helper: helpers.url),
            delegate: delegate)
        #expect(delegate.began && delegate.finished)
        #expect(document.integrityKey != nil)
    }

    @Test("No to creating the remote document fails with registrationCancelled and writes nothing of the document")
    func missingDocumentNo() async throws {
        let remote = InMemoryFileSystem()
        let helpers = TemporaryDirectory()
        let (app, configuration) = Fixture.application(remote, client: Fixture.clientA)
        try await app.register(configuration)
        let document = try DocumentSyncManager(
            applicationSyncManager: app,
            configuration: Fixture.documentConfiguration(helper: helpers.url))
        document.remoteDocumentCreationHandler = { _ in false }
        await #expect { try await document.registerConfigured() } throws: { error in
            (error as? FolderSyncError)?.code == .registrationCancelled
        }
        #expect(!(try await remote.exists(document.relativePathToThisDocumentDirectory)))
        guard case .failed(let error) = document.state else {
            Issue.record("state is \(document.state)")
            return
        }
        #expect(error.code == .registrationCancelled)
        #expect(!FileManager.default.fileExists(atPath: document.localLayout.registrationFile.path))
    }

    @Test("A deleted document is offered for re-creation, with the deletion as the reason")
    func deletedDocumentRecreated() async throws {
        let remote = InMemoryFileSystem()
        let helpers = TemporaryDirectory()
        let environment = Fixture.environment()
        let a = try await Fixture.register(
            remote, client: Fixture.clientA, helper: helpers.subdirectory("A"), environment: environment)
        let deletion = DeletedDocumentInfo(
            documentIdentifier: Fixture.document, deletedByClient: Fixture.clientA,
            deletionDate: Fixture.date)
        try await remote.write(
            try PropertyListFile.encode(deletion), to: a.layout.deletedDocumentFile(Fixture.document))

        // A client that knew the document is told it was deleted at its first sync, and keeps its key.
        await #expect {
            try await Fixture.relaunchAndSync(remote, client: Fixture.clientA, helper: helpers.subdirectory("A"))
        } throws: {
            ($0 as? FolderSyncError)?.code == .documentDeleted
        }
        // A new client is asked, and "yes" starts a new epoch.
        let (app, configuration) = Fixture.application(remote, client: Fixture.clientB, environment: environment)
        try await app.register(configuration)
        let asked = Locked<RemoteDocumentCreationRequest.Reason?>(nil)
        let b = try await DocumentSyncManager(
            applicationSyncManager: app,
            registering: Fixture.documentConfiguration(helper: helpers.subdirectory("B")),
            remoteDocumentCreationHandler: { request in
                asked.withLock { $0 = request.reason }
                return true
            })
        #expect(asked.current == .documentWasDeleted(deletion))
        #expect(b.integrityKey != a.integrityKey)
        #expect(!(try await remote.exists(a.layout.deletedDocumentFile(Fixture.document))))
    }

    @Test("A remote tree with a newer format version is refused")
    func formatVersionTooNew() async throws {
        let remote = InMemoryFileSystem()
        let layout = try RemoteLayout(applicationIdentifier: Fixture.application)
        try await remote.createDirectory(at: layout.applicationDirectory)
        let future = FormatVersionInfo(
            layoutVersion: RemoteLayout.formatVersion + 1, createdByClient: "X", creationDate: Fixture.date)
        try await remote.write(try PropertyListFile.encode(future), to: layout.formatVersionFile)
        let (app, configuration) = Fixture.application(remote, client: Fixture.clientA)
        await #expect { try await app.register(configuration) } throws: { error in
            let error = error as? FolderSyncError
            return error?.code == .unsupportedFormatVersion && error?.path == layout.formatVersionFile.description
        }
        #expect(!(try await remote.exists(layout.clientDevicesDirectory)))
        guard case .failed = app.state else {
            Issue.record("state is \(app.state)")
            return
        }
    }

    @Test(
        "A remote whose document was replaced (new integrity key) gives integrityKeyMismatch and keeps the local registration"
    )
    func integrityKeyMismatch() async throws {
        let remote = InMemoryFileSystem()
        let helpers = TemporaryDirectory()
        let helperA = helpers.subdirectory("A")
        let environment = Fixture.environment()
        let a = try await Fixture.register(remote, client: Fixture.clientA, helper: helperA, environment: environment)
        let remembered = try Data(contentsOf: a.localLayout.registrationFile)

        // Someone wipes the document and another client creates it anew.
        try await remote.remove(a.layout.documentDirectory(Fixture.document))
        let b = try await Fixture.register(
            remote, client: Fixture.clientB, helper: helpers.subdirectory("B"), environment: environment)
        #expect(b.integrityKey != a.integrityKey)
        await #expect {
            try await Fixture.relaunchAndSync(
                remote, client: Fixture.clientA, helper: helperA, environment: environment)
        } throws: {
            ($0 as? FolderSyncError)?.code == .integrityKeyMismatch
        }
        #expect(try Data(contentsOf: a.localLayout.registrationFile) == remembered)
    }

    @Test("A remote document that vanished is never silently re-created for a client that knew it")
    func vanishedDocument() async throws {
        let remote = InMemoryFileSystem()
        let helpers = TemporaryDirectory()
        let helperA = helpers.subdirectory("A")
        let a = try await Fixture.register(remote, client: Fixture.clientA, helper: helperA)
        try await remote.remove(a.layout.documentDirectory(Fixture.document))
        await #expect { try await Fixture.relaunchAndSync(remote, client: Fixture.clientA, helper: helperA) } throws: {
            ($0 as? FolderSyncError)?.code == .integrityKeyMismatch
        }
        #expect(!(try await remote.exists(a.layout.documentDirectory(Fixture.document))))
    }

    @Test("A client deleted from the document is told so")
    func deletedClient() async throws {
        let remote = InMemoryFileSystem()
        let helpers = TemporaryDirectory()
        let a = try await Fixture.register(remote, client: Fixture.clientA, helper: helpers.subdirectory("A"))
        let marker = DeletedClientInfo(
            clientIdentifier: Fixture.clientA, deletedBy: "operator", deletionDate: Fixture.date)
        try await remote.write(
            try PropertyListFile.encode(marker), to: a.relativePathToThisDocumentDeletedClientsThisClientPlistFile)
        await #expect {
            try await Fixture.relaunchAndSync(remote, client: Fixture.clientA, helper: helpers.subdirectory("A"))
        } throws: {
            ($0 as? FolderSyncError)?.code == .clientDeleted
        }
    }

    @Test(
        "Hostile identifiers are refused before anything is written",
        arguments: [
            "", ".", "..", "../escape", "a/b", "nul\0byte", "tab\there", "line\nbreak", "trailing.", "trailing ",
            ".hidden", "back\\slash", "colon:", String(repeating: "x", count: 256), String(repeating: "é", count: 128),
        ])
    func hostileIdentifiers(identifier: String) async throws {
        let remote = InMemoryFileSystem()
        let helpers = TemporaryDirectory()
        for role in ["application", "client", "document"] {
            let app = ApplicationSyncManager(remote: remote, environment: Fixture.environment())
            let configuration = ApplicationSyncManager.Configuration(
                applicationIdentifier: role == "application" ? identifier : Fixture.application,
                clientIdentifier: role == "client" ? identifier : Fixture.clientA, clientDescription: "x")
            do {
                try await app.register(configuration)
                _ = try await DocumentSyncManager(
                    applicationSyncManager: app,
                    registering: Fixture.documentConfiguration(
                        helper: helpers.url, document: role == "document" ? identifier : Fixture.document),
                    remoteDocumentCreationHandler: { _ in true })
                Issue.record("\(role) identifier \(identifier.debugDescription) was accepted")
            } catch let error as FolderSyncError {
                #expect(error.code == .invalidIdentifier, "\(role): \(error)")
            }
            if role != "document" { #expect(await remote.allPaths().isEmpty, "\(role): something was written") }
        }
    }

    @Test("Valid identifiers with spaces and Unicode are accepted")
    func portableIdentifiers() throws {
        for identifier in ["com.example.notes", "Notes de Zoé", "日本語", "a-b_c", String(repeating: "x", count: 255)] {
            #expect(try Identifier.validate(identifier, role: "test") == identifier)
        }
    }

    @Test("A read-only remote gives permissionDenied, not a crash")
    func readOnlyRemote() async throws {
        let remote = InMemoryFileSystem()
        await remote.setReadOnly(true)
        let (app, configuration) = Fixture.application(remote, client: Fixture.clientA)
        await #expect { try await app.register(configuration) } throws: {
            ($0 as? FolderSyncError)?.code == .permissionDenied
        }

        // Registered tree, then the remote turns read-only: the document registration of a new client fails cleanly.
        await remote.setReadOnly(false)
        try await Fixture.register(remote, client: Fixture.clientA, helper: TemporaryDirectory().url)
        await remote.setReadOnly(true)
        await #expect {
            try await Fixture.register(remote, client: Fixture.clientB, helper: TemporaryDirectory().url)
        } throws: {
            ($0 as? FolderSyncError)?.code == .permissionDenied
        }
    }

    @Test("A truncated, garbage or tampered plist gives corruptFile naming the file")
    func corruptPlists() async throws {
        let remote = InMemoryFileSystem()
        let helpers = TemporaryDirectory()
        let a = try await Fixture.register(remote, client: Fixture.clientA, helper: helpers.subdirectory("A"))
        let infoPath = a.relativePathToThisDocumentInfoPlistFile
        let original = try await remote.read(infoPath)
        let text = String(decoding: original, as: UTF8.self)
        let damaged: [String: Data] = [
            "truncated": original.prefix(original.count / 2),
            "garbage": Data("not a plist at all \u{1}\u{2}".utf8),
            "empty": Data(),
            "tampered": Data(
                text.replacingOccurrences(of: "<string>Notes</string>", with: "<string>Nodes</string>").utf8),
            "other kind": try PropertyListFile.encode(
                DeletedClientInfo(clientIdentifier: "x", deletedBy: "y", deletionDate: Fixture.date)),
        ]
        for (name, data) in damaged {
            #expect(data != original, "\(name) did not change the file")
            try await remote.write(data, to: infoPath)
            await #expect(throws: FolderSyncError.self, "\(name)") {
                do {
                    try await Fixture.register(
                        remote, client: Fixture.clientB, helper: helpers.subdirectory("B-\(name)"))
                } catch let error as FolderSyncError {
                    #expect(error.code == .corruptFile, "\(name): \(error)")
                    #expect(error.path == infoPath.description, "\(name): \(error)")
                    throw error
                }
            }
        }
    }

    @Test("Document registration waits for its application manager")
    func documentWaitsForApplication() async throws {
        let remote = InMemoryFileSystem()
        let helpers = TemporaryDirectory()
        let (app, configuration) = Fixture.application(remote, client: Fixture.clientA)
        try app.configure(configuration)
        let document = try DocumentSyncManager(
            applicationSyncManager: app,
            configuration: Fixture.documentConfiguration(helper: helpers.url))
        document.remoteDocumentCreationHandler = { _ in true }
        async let registered: Void = document.registerConfigured()
        // The document cannot finish before the application has registered: its tree does not exist yet.
        try await app.registerConfigured()
        try await registered
        #expect(document.state == .ableToSync)
        #expect(try await remote.exists(document.relativePathToThisDocumentInfoPlistFile))
    }

    @Test("A document whose application registration fails fails with the same error")
    func documentFailsWithApplication() async throws {
        let remote = InMemoryFileSystem()
        await remote.setReadOnly(true)
        let (app, configuration) = Fixture.application(remote, client: Fixture.clientA)
        try app.configure(configuration)
        let document = try DocumentSyncManager(
            applicationSyncManager: app,
            configuration: Fixture.documentConfiguration(helper: TemporaryDirectory().url))
        let registered = Task { try await document.registerConfigured() }
        await #expect(throws: FolderSyncError.self) { try await app.registerConfigured() }
        await #expect { try await registered.value } throws: { ($0 as? FolderSyncError)?.code == .permissionDenied }
    }

    @Test("A document manager needs a configured application manager")
    func unconfiguredApplication() {
        let app = ApplicationSyncManager(remote: InMemoryFileSystem())
        #expect {
            try DocumentSyncManager(
                applicationSyncManager: app,
                configuration: Fixture.documentConfiguration(helper: URL(fileURLWithPath: "/tmp")))
        } throws: { ($0 as? FolderSyncError)?.code == .invalidConfiguration }
    }
}
