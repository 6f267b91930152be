import FolderSync
import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// One `<D:response>` of a PROPFIND answer: the properties a listing needs.
struct MultistatusEntry: Equatable, Sendable {
    var href: String
    var isCollection = false
    var contentLength: Int64?
    var etag: String?
    var lastModified: Date?
}

/// Parses a `207 Multi-Status` body into entries, with `XMLParser`.
///
/// Namespaces are processed, so `D:`, `d:`, `lp1:` or default-namespace
/// styles all read the same; only properties of a `200` propstat count;
/// character data is accumulated because it arrives in pieces; and a
/// truncated or malformed document is an error even when `parse()` returns
/// `true`, by checking `parserError` too.
enum MultistatusParser {
    static func parse(_ data: Data, path: RemotePath) throws -> [MultistatusEntry] {
        // FoundationXML stops the process (not a thrown error) on element names that are not valid UTF-8, and on a
        // processing instruction without data, such as a bare `<?xml?>`: such answers, and any with a NUL byte, are
        // refused before they reach it. A multistatus answer has no processing instruction but the XML declaration,
        // which is dropped here; any other is refused (the text is UTF-8, checked, which is also XMLParser's default).
        // Checked byte by byte: Foundation's String search would copy the whole answer to UTF-16 first (on Linux).
        guard String(validating: data, as: UTF8.self) != nil, Self.find([0], in: data) == nil else {
            throw FolderSyncError(
                .remoteIOFailed, "the server's PROPFIND answer cannot be read: it is not UTF-8 text",
                path: path.description)
        }
        var body = data[...]
        if body.starts(with: "<?xml".utf8), let end = Self.find(Array("?>".utf8), in: body) {
            body = body[(end + 2)...]
        }
        guard Self.find(Array("<?".utf8), in: body) == nil else {
            throw FolderSyncError(
                .remoteIOFailed, "the server's PROPFIND answer cannot be read: it has a processing instruction",
                path: path.description)
        }
        let parser = XMLParser(data: Data(body))
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        let delegate = Delegate()
        parser.delegate = delegate
        let finished = parser.parse()
        if !finished || parser.parserError != nil || !delegate.sawMultistatus || delegate.depth != 0 {
            // In words: XMLParser's NSError prints as `NSXMLParserErrorDomain Code=5 "(null)"`.
            let reason =
                parser.parserError == nil
                ? "it is cut off or is not a complete multistatus document"
                : "it is cut off or is not well-formed XML (XML error \((parser.parserError! as NSError).code) at line \(parser.lineNumber))"
            throw FolderSyncError(
                .remoteIOFailed, "the server's PROPFIND answer cannot be read: \(reason)", path: path.description)
        }
        return delegate.entries
    }

    /// Where `pattern` first occurs in `data` (which may be a slice), as an index of `data`.
    static func find(_ pattern: [UInt8], in data: Data) -> Data.Index? {
        data.withUnsafeBytes { bytes -> Int? in
            guard let first = pattern.first, bytes.count >= pattern.count else { return nil }
            var offset = 0
            while offset + pattern.count <= bytes.count {
                guard
                    let found = memchr(
                        bytes.baseAddress! + offset, Int32(first), bytes.count - pattern.count + 1 - offset)
                else { return nil }
                let at = bytes.baseAddress!.distance(to: UnsafeRawPointer(found))
                if pattern.indices.allSatisfy({ bytes[at + $0] == pattern[$0] }) { return at }
                offset = at + 1
            }
            return nil
        }.map { data.startIndex + $0 }
    }

    private final class Delegate: NSObject, XMLParserDelegate {
        var entries: [MultistatusEntry] = []
        var sawMultistatus = false
        var depth = 0
        private var stack: [String] = []
        private var text = ""
        private var response: MultistatusEntry?
        private var propstat = MultistatusEntry(href: "")
        private var propstatOK = true
        private var responseOK = true

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            depth += 1
            let name = namespaceURI == "DAV:" ? elementName : "?" + elementName
            stack.append(name)
            text = ""
            switch name {
            case "multistatus": sawMultistatus = true
            case "response":
                response = MultistatusEntry(href: "")
                responseOK = true
            case "propstat":
                propstat = MultistatusEntry(href: "")
                propstatOK = true
            case "collection" where stack.dropLast().last == "resourcetype": propstat.isCollection = true
            default: break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, foundCDATA block: Data) {
            text += String(decoding: block, as: UTF8.self)
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
        ) {
            depth -= 1
            let name = stack.popLast() ?? ""
            // Trimmed only for the elements read below, not for every container.
            var value: String { text.trimming(.whitespacesAndNewlines) }
            let parent = stack.last
            switch name {
            case "href" where parent == "response": response?.href = value
            case "status" where parent == "propstat":
                // "HTTP/1.1 200 OK": only a 2xx propstat carries real values.
                let code = value.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
                propstatOK = (200..<300).contains(code)
            case "status" where parent == "response":
                let code = value.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
                responseOK = (200..<300).contains(code)
            case "getcontentlength" where parent == "prop": propstat.contentLength = Int64(value)
            case "getetag" where parent == "prop": propstat.etag = Self.unquoted(value)
            case "getlastmodified" where parent == "prop": propstat.lastModified = HTTPDate.parse(value)
            case "propstat":
                if propstatOK, var current = response {
                    current.isCollection = current.isCollection || propstat.isCollection
                    current.contentLength = current.contentLength ?? propstat.contentLength
                    current.etag = current.etag ?? propstat.etag
                    current.lastModified = current.lastModified ?? propstat.lastModified
                    response = current
                }
            case "response":
                if let response, responseOK, !response.href.isEmpty { entries.append(response) }
                response = nil
            default: break
            }
            text = ""
        }

        /// ETags compare without quotes or the weak marker: wsgidav quotes its header but not its PROPFIND value.
        static func unquoted(_ etag: String) -> String? {
            var value = Substring(etag)
            if value.hasPrefix("W/") { value = value.dropFirst(2) }
            value = value.drop { $0 == "\"" }
            while value.hasSuffix("\"") { value = value.dropLast() }
            return value.isEmpty ? nil : String(value)
        }
    }
}
