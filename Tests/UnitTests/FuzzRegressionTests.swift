import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import FolderSyncWebDAV
@testable import TestSupport

/// Inputs that crashed a parser under libFuzzer (scripts/fuzz), kept in Fuzz/regressions/: each now gets a typed
/// error. Foundation's property-list decoder and XMLParser stop the process on some text that is not UTF-8.
@Suite("Fuzzer findings")
struct FuzzRegressionTests {
    static func input(_ name: String) throws -> Data {
        try Data(contentsOf: repositoryRoot.appendingPathComponent("Fuzz/regressions").appendingPathComponent(name))
    }

    @Test("A recent-sync marker with bytes that are not UTF-8 in an integer is a corrupt file, not a crash")
    func propertyListNotUTF8() throws {
        let data = try Self.input("recent-sync-invalid-utf8-integer.plist")
        #expect { try PropertyListFile.decode(RecentSync.self, from: data, path: "x.recentsync") } throws: {
            ($0 as? FolderSyncError)?.code == .corruptFile && ($0 as? FolderSyncError)?.path == "x.recentsync"
        }
        #expect(PropertyListFile.kind(of: data) == nil)
        // Binary property lists are not text, and still decode.
        let binary = try PropertyListSerialization.data(
            fromPropertyList: ["kind": "recentSync", "formatVersion": 1] as [String: Any], format: .binary, options: 0)
        #expect(PropertyListFile.kind(of: binary) == "recentSync")
    }

    @Test(
        "A PROPFIND answer with an element name that is not UTF-8, a processing instruction or a bare `<?xml?>` declaration is refused with a typed error, not a crash",
        arguments: [
            "propfind-invalid-utf8-element.xml", "propfind-empty-processing-instruction.xml",
            "propfind-bare-xml-declaration.xml",
        ])
    func propfind(input: String) throws {
        let data = try Self.input(input)
        #expect { try MultistatusParser.parse(data, path: try RemotePath("com.example.notes/Documents")) } throws: {
            ($0 as? FolderSyncError)?.code == .remoteIOFailed
        }
    }

    @Test("A well-formed PROPFIND answer with its XML declaration still parses")
    func propfindSeed() throws {
        let data = try Data(contentsOf: repositoryRoot.appendingPathComponent("Fuzz/corpus/propfind/apache.xml"))
        let entries = try MultistatusParser.parse(data, path: try RemotePath("com.example.notes/Documents"))
        #expect(entries.count == 2)
    }
}
