import Foundation
import Testing

@testable import FolderSyncWebDAV
@testable import TestSupport

/// PROPFIND values, header lines, `href`s and request paths are read and made without `NSString` (Foundation's
/// string methods bridge through it on Linux): the same results as Foundation's, faster.
@Suite("WebDAV text without NSString")
struct TrimmingTests {
    @Test(
        "Text is trimmed of exactly what trimmingCharacters(in:) trims, for every Unicode scalar and both sets used",
        arguments: [CharacterSet.whitespacesAndNewlines, .whitespaces])
    func trimMatchesFoundation(set: CharacterSet) throws {
        var checked = 0
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "\(scalar)a\(scalar)b\(scalar)"
            #expect(text.trimming(set) == text.trimmingCharacters(in: set), "U+\(String(value, radix: 16))")
            #expect(
                text.dropFirst(0).trimming(set) == text.trimmingCharacters(in: set),
                "U+\(String(value, radix: 16)) (a substring)")
            checked += 1
        }
        #expect(checked == 0x10F800)  // every scalar: all code points but the 2,048 surrogates
        for text in ["", " ", "\r\n\t ", "  /dav/a b/ \n", "\u{3000}\"etag\"\u{2028}", "é", " \u{0085}x\u{00A0}"] {
            #expect(text.trimming(set) == text.trimmingCharacters(in: set))
        }
    }

    @Test("A path component is encoded as addingPercentEncoding encodes it, for every ASCII character and some others")
    func encodingMatchesFoundation() {
        var allowed = CharacterSet()
        allowed.insert(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        let components =
            (0..<128).map { String(UnicodeScalar(UInt8($0))) }
            + [
                "0000000000000001-ABCDEF01-2345-6789-ABCD-EF0123456789.syncchg", "a b", "é", "semi;colon=equals", "%41",
                "日本",
            ]
        for component in components {
            #expect(
                WebDAVAddress.encode(component) == component.addingPercentEncoding(withAllowedCharacters: allowed),
                "\(component)")
        }
    }

    @Test("An href is read the same given as a path, as a full URL (with a port), or with a colon in a name")
    func hrefs() throws {
        let address = try WebDAVAddress(baseURL: URL(string: "http://127.0.0.1:8080/dav/")!)
        #expect(address.path(forHref: " /dav/a/b%20c \n") == ["a", "b c"])
        #expect(address.path(forHref: "http://127.0.0.1:8080/dav/a/b") == ["a", "b"])
        #expect(address.path(forHref: "https://other/dav/a:b/c") == ["a:b", "c"])
        #expect(address.path(forHref: "/dav/a:b/c://d") == ["a:b", "c:", "d"])
        #expect(address.path(forHref: "http://host") == [])
        #expect(address.path(forHref: "/elsewhere/a") == nil)
    }

    @Test("A byte pattern is found where it first starts, in a whole answer and in a slice of one, or not at all")
    func find() {
        let data = Data("ab??>c<?d?>".utf8)
        #expect(MultistatusParser.find(Array("?>".utf8), in: data) == 3)
        #expect(MultistatusParser.find(Array("<?".utf8), in: data) == 6)
        #expect(MultistatusParser.find(Array("ab".utf8), in: data) == 0)
        #expect(MultistatusParser.find(Array("?>".utf8), in: data[5...]) == 9)  // an index of the whole
        #expect(MultistatusParser.find(Array("?>".utf8), in: data[10...]) == nil)  // only its first byte is there
        #expect(MultistatusParser.find([0], in: data) == nil)
        #expect(MultistatusParser.find([0], in: Data([1, 0, 2])) == 1)
        #expect(MultistatusParser.find(Array("<?".utf8), in: Data()) == nil)
    }
}
