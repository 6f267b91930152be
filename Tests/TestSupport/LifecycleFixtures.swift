import Foundation

@_spi(Tooling) @testable import FolderSync

extension DocumentFabricator {
    /// The fixtures' application and date.
    init(_ remote: any RemoteFileSystem, document: String = "DOC") throws {
        try self.init(remote, applicationIdentifier: Fixture.application, document: document, date: Fixture.date)
    }
}
