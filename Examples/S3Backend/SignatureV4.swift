import Crypto
import Foundation

/// Signs S3 requests with AWS Signature Version 4 (the `Authorization` header form, payload in one chunk).
///
/// The algorithm, as AWS documents it: a *canonical request* (method, URI-encoded path, sorted query,
/// the signed headers in lower case, the payload's SHA-256) is hashed into a *string to sign* with the
/// time and the credential scope (`date/region/s3/aws4_request`); the signing key is an HMAC-SHA256 chain
/// of the secret over the date, region, service and `aws4_request`; the signature is the HMAC of the
/// string to sign with that key. `host`, `x-amz-date`, `x-amz-content-sha256` and every header the
/// request sets are signed.
struct SignatureV4: Sendable {
    let credentials: S3Credentials
    let region: String
    let service = "s3"

    /// The payload hash for a body that is streamed from a file and not hashed first (allowed by S3).
    static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// The SHA-256 of `data`, as lower-case hex: the `x-amz-content-sha256` of a body sent from memory.
    static func payloadHash(_ data: Data) -> String { hex(SHA256.hash(data: data)) }

    /// The headers that authorize a request: `x-amz-date`, `x-amz-content-sha256` and `Authorization`.
    ///
    /// - Parameters:
    ///   - encodedPath: the path exactly as it is sent (already percent-encoded, `/`-separated).
    ///   - query: the query items, unencoded; they are sent and signed in the same encoding.
    ///   - headers: the other headers sent, all signed (they must reach the server unchanged).
    func authorization(
        method: String, host: String, encodedPath: String, query: [(String, String)],
        headers: [String: String], payloadHash: String, date: Date
    ) -> [String: String] {
        let (day, time) = Self.timestamps(date)
        var signed: [String: String] = ["host": host, "x-amz-date": time, "x-amz-content-sha256": payloadHash]
        for (name, value) in headers {
            signed[name.lowercased()] = value.trimmingCharacters(in: .whitespaces)
        }
        let names = signed.keys.sorted()
        let canonicalRequest = [
            method,
            encodedPath,
            Self.canonicalQuery(query),
            names.map { "\($0):\(signed[$0]!)\n" }.joined(),
            names.joined(separator: ";"),
            payloadHash,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", time, scope, Self.hex(SHA256.hash(data: Data(canonicalRequest.utf8)))]
            .joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        return [
            "x-amz-date": time,
            "x-amz-content-sha256": payloadHash,
            "Authorization": "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), "
                + "SignedHeaders=\(names.joined(separator: ";")), Signature=\(signature)",
        ]
    }

    /// `key=value` pairs, each part URI-encoded, sorted, joined with `&`: how the query is both sent and signed.
    static func canonicalQuery(_ items: [(String, String)]) -> String {
        items.map { (uriEncode($0.0), uriEncode($0.1)) }.sorted { $0 < $1 }.map { "\($0.0)=\($0.1)" }.joined(
            separator: "&")
    }

    /// Percent-encodes every byte but the unreserved characters `A–Z a–z 0–9 - . _ ~` (and `/` when asked).
    static func uriEncode(_ text: String, keepingSlash: Bool = false) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.append(Character(UnicodeScalar(byte)))
            case UInt8(ascii: "/") where keepingSlash:
                encoded.append("/")
            default:
                encoded += String(format: "%%%02X", byte)
            }
        }
        return encoded
    }

    /// `yyyyMMdd` and `yyyyMMdd'T'HHmmss'Z'` in UTC.
    static func timestamps(_ date: Date) -> (day: String, time: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let day = String(format: "%04d%02d%02d", c.year!, c.month!, c.day!)
        return (day, day + String(format: "T%02d%02d%02dZ", c.hour!, c.minute!, c.second!))
    }

    static func hex<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        digest.map { String(format: "%02x", $0) }.joined()
    }
}
