import Foundation
@testable import FolderSyncWebDAV
import Testing

/// PROPFIND values and header lines are trimmed without `NSString` (``Swift/StringProtocol/trimming(_:)``).
@Suite("WebDAV text trimmed")
struct TrimmingTests {
    @Test("Text is trimmed of exactly what trimmingCharacters(in:) trims, for every Unicode scalar and both sets used",
          arguments: [CharacterSet.whitespacesAndNewlines, .whitespaces])
    func trimMatchesFoundation(set: CharacterSet) throws {
        var checked = 0
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "\(scalar)a\(scalar)b\(scalar)"
            #expect(text.trimming(set) == text.trimmingCharacters(in: set), "U+\(String(value, radix: 16))")
            #expect(text.dropFirst(0).trimming(set) == text.trimmingCharacters(in: set), "U+\(String(value, radix: 16)) (a substring)")
            checked += 1
        }
        #expect(checked == 0x10F800)   // every scalar: all code points but the 2,048 surrogates
        for text in ["", " ", "\r\n\t ", "  /dav/a b/ \n", "\u{3000}\"etag\"\u{2028}", "é", " \u{0085}x\u{00A0}"] {
            #expect(text.trimming(set) == text.trimmingCharacters(in: set))
        }
    }
}
