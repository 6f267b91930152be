import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Every byte of every golden file, flipped: the reader answers with the documented typed error, or (where the
/// format allows bytes that carry nothing, such as a property list's layout) with exactly the same content.
/// Never a crash, never another content.
@Suite("Golden files with one byte flipped")
struct GoldenByteFlipTests {
    /// Local stores are SQLite files: SQLite keeps no checksum, so a flipped byte there is SQLite's to find or not.
    static let flippable = GoldenCatalog.files.filter { $0.kind != .localStore }

    /// The typed errors a damaged file of each kind may give (RemoteLayouts/README.md, "Damaged files").
    static func documentedCodes(_ kind: GoldenFile.Kind) -> Set<FolderSyncError.Code> {
        switch kind {
        case .sealedFile: [.tamperedFile, .unsupportedFormatVersion]
        case .wholeStore: [.corruptFile, .unsupportedFormatVersion, .localStoreFailed]
        default: [.corruptFile, .unsupportedFormatVersion]
        }
    }

    /// The offsets of a whole store's snapshot length (UInt64 after the identifier, the client and the schema version).
    static func snapshotLengthOffsets(_ data: Data) -> Range<Int> {
        let bytes = [UInt8](data)
        let identifierLength = Int(bytes[13])
        let clientLength = Int(bytes[14 + identifierLength])
        let start = 13 + 1 + identifierLength + 1 + clientLength + 8
        return start..<(start + 8)
    }

    /// The byte offsets whose change may read as a newer version: the version field of each binary format.
    static func versionOffsets(_ kind: GoldenFile.Kind) -> Set<Int>? {
        switch kind {
        case .changeSet, .wholeStore, .attachment: [8]
        case .sealedFile: [8, 9, 10, 11]
        case .propertyList, .localStore: nil  // text: the formatVersion integer may sit anywhere
        }
    }

    /// Every offset of a file of up to 1 KiB; of a larger one, its first and last 256 bytes and every 61st byte
    /// between.
    static func offsets(count: Int) -> [Int] {
        guard count > 1024 else { return Array(0..<count) }
        return Array(
            Set(Array(0..<256) + Array(stride(from: 256, to: count - 256, by: 61)) + Array((count - 256)..<count))
        ).sorted()
    }

    @Test(
        "Each golden file with any one byte flipped gives its documented typed error, or the same content",
        arguments: flippable)
    func flippedByte(_ file: GoldenFile) throws {
        let scratch = TemporaryDirectory()
        let original = try Golden.data(file.path)
        let content = try GoldenReading.read(file, data: original, scratch: scratch.url)
        let offsets = Self.offsets(count: original.count)
        #expect(offsets.count >= min(original.count, 512))
        var refused = 0
        var unchanged = 0
        for offset in offsets {
            for mask: UInt8 in [0x01, 0xFF] {
                var damaged = original
                damaged[offset] ^= mask
                do {
                    let read = try GoldenReading.read(file, data: damaged, scratch: scratch.url)
                    #expect(read == content, "\(file.path): byte \(offset) ^ \(mask) read as other content")
                    unchanged += 1
                } catch let error as FolderSyncError {
                    #expect(
                        Self.documentedCodes(file.kind).contains(error.code),
                        "\(file.path): byte \(offset) ^ \(mask) gave \(error.code): \(error.message)")
                    if error.code == .unsupportedFormatVersion, let versions = Self.versionOffsets(file.kind) {
                        #expect(
                            versions.contains(offset), "\(file.path): byte \(offset) ^ \(mask) read as a newer version")
                    }
                    if error.code == .localStoreFailed {
                        // A whole store's header is read before its trailer is checked: a snapshot length grown past
                        // what the local disk can take is refused as such before anything is written.
                        let lengthField = file.kind == .wholeStore ? Self.snapshotLengthOffsets(original) : 0..<0
                        #expect(
                            lengthField.contains(offset),
                            "\(file.path): byte \(offset) ^ \(mask) gave localStoreFailed: \(error.message)")
                    }
                    refused += 1
                } catch {
                    Issue.record("\(file.path): byte \(offset) ^ \(mask) gave an untyped error: \(error)")
                }
            }
        }
        #expect(refused + unchanged == offsets.count * 2)
        // Binary formats cover every byte with a checksum or a tag: no flip goes unnoticed.
        if file.kind != .propertyList {
            #expect(unchanged == 0, "\(file.path): \(unchanged) flips went unnoticed")
        } else {
            #expect(refused > offsets.count, "\(file.path): most flips of a property list must be refused")
        }
    }
}
