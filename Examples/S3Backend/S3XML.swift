import FolderSync
import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// One page of a `ListObjectsV2` answer.
struct S3ListPage: Sendable {
    struct Object: Sendable {
        var key: String
        var size: Int64?
        var etag: String?
        var lastModified: Date?
    }

    var objects: [Object] = []
    /// Common prefixes (the "folders" one level down, with their trailing delimiter).
    var prefixes: [String] = []
    var nextContinuationToken: String?
}

/// Reads the XML S3 answers with: `ListBucketResult` pages and `Error` documents.
///
/// `XMLParser` reports character data in pieces and returns `true` for a truncated document, so text is
/// accumulated per element and the parser's error is checked as well.
final class S3XML: NSObject, XMLParserDelegate {
    private var page = S3ListPage()
    private var object: S3ListPage.Object?
    private var inPrefixes = false
    private var text = ""
    private var fields: [String: String] = [:]
    private var truncated = false

    /// Parses a `ListBucketResult`.
    static func listPage(_ data: Data, path: RemotePath) throws -> S3ListPage {
        let reader = S3XML()
        try reader.parse(data, path: path)
        var page = reader.page
        if !reader.truncated { page.nextContinuationToken = nil }
        return page
    }

    /// The `Code` and `Message` of an S3 error document, when the body is one.
    static func error(_ data: Data) -> (code: String, message: String)? {
        let reader = S3XML()
        guard (try? reader.parse(data, path: .root)) != nil, let code = reader.fields["Code"] else { return nil }
        return (code, reader.fields["Message"] ?? "")
    }

    private func parse(_ data: Data, path: RemotePath) throws {
        let parser = XMLParser(data: data)
        parser.delegate = self
        guard parser.parse(), parser.parserError == nil else {
            throw FolderSyncError(.remoteIOFailed, "the server's XML answer is malformed", path: path.description)
        }
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        text = ""
        if name == "Contents" { object = .init(key: "") }
        if name == "CommonPrefixes" { inPrefixes = true }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        switch name {
        case "Contents":
            if let object { page.objects.append(object) }
            object = nil
        case "CommonPrefixes": inPrefixes = false
        case "Key" where object != nil: object?.key = text
        case "Size" where object != nil: object?.size = Int64(text)
        case "ETag" where object != nil: object?.etag = text.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        case "LastModified" where object != nil: object?.lastModified = Self.date(text)
        case "Prefix" where inPrefixes: page.prefixes.append(text)
        case "NextContinuationToken": page.nextContinuationToken = text
        case "IsTruncated": truncated = text == "true"
        default: fields[name] = text
        }
        text = ""
    }

    private static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
