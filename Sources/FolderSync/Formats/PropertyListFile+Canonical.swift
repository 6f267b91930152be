import Foundation

/// The fast path of ``PropertyListFile/decode(_:from:path:)`` for the two files a sync reads at every launch or
/// every sync with news: `documentInfo.plist` and the recent-sync markers.
///
/// Foundation's decoder parses a file twice (its header, then its envelope), decodes through `Codable` and encodes
/// the payload again to check its checksum; in a fresh process each new type it meets costs generic metadata and
/// conformance lookups across every loaded image. Reading one marker and `documentInfo.plist` so costs a quarter of
/// a one-row sync's instructions.
///
/// This reads a file as Foundation's `PropertyListEncoder` writes it (XML, sorted keys, tab indentation): it parses
/// the elements once, keeps each value's text as written, checks the checksum on the payload written again from
/// that text in the encoder's layout (no encoder runs), and builds the payload from the parsed values. Anything else
/// (another layout, an entity or element it does not know, a checksum that does not match, a value of another type,
/// a kind or version it does not expect) returns `nil`, and the caller goes the whole way through Foundation, which
/// reads or refuses it as it always did. So this path accepts only what that one accepts, the same way.
enum CanonicalPropertyList {
    /// The payload of `data`, when it is a file of `Payload`'s kind written by `PropertyListEncoder`; `nil` otherwise.
    static func decode<Payload: PropertyListPayload>(_ type: Payload.Type, from data: Data) -> Payload? {
        // Metatype comparisons, not casts to a protocol: a cast looks the conformance up across every image.
        if Payload.self == RecentSync.self {
            return envelope(data, kind: RecentSync.kind, formatVersion: RecentSync.formatVersion)
                .flatMap(RecentSync.init(canonical:)) as? Payload
        }
        if Payload.self == DocumentInfo.self {
            return envelope(data, kind: DocumentInfo.kind, formatVersion: DocumentInfo.formatVersion)
                .flatMap(DocumentInfo.init(canonical:)) as? Payload
        }
        return nil
    }

    /// A parsed value, with its text as written (escaped) where it has text.
    indirect enum Node {
        case dict([(key: Text, value: Node)])
        case array([Node])
        case string(Text)
        case integer(Text)
        case real(Text)
        case date(Text)
        /// Its base64 digits, whitespace removed.
        case data([UInt8])
        case bool(Bool)
    }

    /// Text as written between two tags, and as read (entities replaced).
    struct Text {
        var raw: ArraySlice<UInt8>
        var value: String
    }

    static let header = Array(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """.utf8)
    static let trailer = Array("\n</plist>\n".utf8)

    /// The payload of an envelope of `kind`, of a version this build reads, whose checksum matches.
    static func envelope(_ data: Data, kind: String, formatVersion: Int) -> [String: Node]? {
        let bytes = [UInt8](data)
        guard bytes.count > header.count + trailer.count, bytes.starts(with: header),
            bytes.suffix(trailer.count).elementsEqual(trailer)
        else { return nil }
        var parser = Parser(bytes: bytes, index: header.count, end: bytes.count - trailer.count)
        guard let root = parser.value(), parser.atEnd(), let fields = dictionary(root),
            case .string(let fileKind)? = fields["kind"], fileKind.value == kind,
            case .integer(let version)? = fields["formatVersion"], let number = Int(version.value),
            number <= formatVersion,
            case .string(let checksum)? = fields["checksum"], let payload = fields["payload"], case .dict = payload
        else { return nil }
        var written = header
        write(payload, depth: 0, into: &written)
        written += trailer
        guard "crc32:" + Checksum.hex(Checksum.crc32(Data(written))) == checksum.value else { return nil }
        return dictionary(payload)
    }

    /// A dictionary's entries by key; `nil` for another node, or a key written twice.
    static func dictionary(_ node: Node) -> [String: Node]? {
        guard case .dict(let entries) = node else { return nil }
        var result: [String: Node] = [:]
        result.reserveCapacity(entries.count)
        for (key, value) in entries {
            guard result.updateValue(value, forKey: key.value) == nil else { return nil }
        }
        return result
    }

    /// `node` as `PropertyListEncoder` writes it at `depth` (its first line not indented).
    static func write(_ node: Node, depth: Int, into out: inout [UInt8]) {
        func indent(_ level: Int) { out += repeatElement(UInt8(ascii: "\t"), count: level) }
        func element(_ name: String, _ text: ArraySlice<UInt8>) {
            out += Array("<\(name)>".utf8)
            out += text
            out += Array("</\(name)>".utf8)
        }
        switch node {
        case .dict(let entries):
            guard !entries.isEmpty else {
                out += Array("<dict/>".utf8)
                return
            }
            out += Array("<dict>\n".utf8)
            for (key, value) in entries {
                indent(depth + 1)
                element("key", key.raw)
                out.append(UInt8(ascii: "\n"))
                indent(depth + 1)
                write(value, depth: depth + 1, into: &out)
                out.append(UInt8(ascii: "\n"))
            }
            indent(depth)
            out += Array("</dict>".utf8)
        case .array(let items):
            guard !items.isEmpty else {
                out += Array("<array/>".utf8)
                return
            }
            out += Array("<array>\n".utf8)
            for item in items {
                indent(depth + 1)
                write(item, depth: depth + 1, into: &out)
                out.append(UInt8(ascii: "\n"))
            }
            indent(depth)
            out += Array("</array>".utf8)
        case .string(let text): element("string", text.raw)
        case .integer(let text): element("integer", text.raw)
        case .real(let text): element("real", text.raw)
        case .date(let text): element("date", text.raw)
        case .bool(let flag): out += Array((flag ? "<true/>" : "<false/>").utf8)
        case .data(let digits):
            // Lines of 76 columns, less 8 per level of indentation (as measured on Foundation's encoder).
            let width = max(4, 76 - 8 * min(depth, 8))
            out += Array("<data>\n".utf8)
            var start = 0
            while start < digits.count {
                indent(depth)
                out += digits[start..<min(start + width, digits.count)]
                out.append(UInt8(ascii: "\n"))
                start += width
            }
            indent(depth)
            out += Array("</data>".utf8)
        }
    }

    /// Parses the elements of a property list: whitespace between them, text with the five entities of XML and
    /// character references; nothing else (no comments, CDATA, attributes or carriage returns).
    struct Parser {
        let bytes: [UInt8]
        var index: Int
        let end: Int
        private var depth = 0

        init(bytes: [UInt8], index: Int, end: Int) {
            self.bytes = bytes
            self.index = index
            self.end = end
        }

        mutating func atEnd() -> Bool {
            skipSpace()
            return index == end
        }

        private mutating func skipSpace() {
            while index < end, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A { index += 1 }
        }

        /// The tag at `index` (`<name>`, `</name>` or `<name/>`): its name, whether it closes, whether it is empty.
        private mutating func tag() -> (name: ArraySlice<UInt8>, closing: Bool, empty: Bool)? {
            skipSpace()
            guard index < end, bytes[index] == UInt8(ascii: "<") else { return nil }
            var cursor = index + 1
            let closing = cursor < end && bytes[cursor] == UInt8(ascii: "/")
            if closing { cursor += 1 }
            let start = cursor
            while cursor < end, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[cursor]) { cursor += 1 }
            let name = bytes[start..<cursor]
            guard !name.isEmpty, cursor < end else { return nil }
            var empty = false
            if bytes[cursor] == UInt8(ascii: "/") {
                guard !closing else { return nil }
                empty = true
                cursor += 1
            }
            guard cursor < end, bytes[cursor] == UInt8(ascii: ">") else { return nil }
            index = cursor + 1
            return (name, closing, empty)
        }

        private static func named(_ name: ArraySlice<UInt8>, _ expected: StaticString) -> Bool {
            name.count == expected.utf8CodeUnitCount
                && name.elementsEqual(UnsafeBufferPointer(start: expected.utf8Start, count: expected.utf8CodeUnitCount))
        }

        /// The text up to `</name>`, which it consumes.
        private mutating func text(closing name: StaticString) -> Text? {
            let start = index
            var decoded: [UInt8] = []
            while index < end, bytes[index] != UInt8(ascii: "<") {
                let byte = bytes[index]
                guard byte >= 0x20 || byte == 0x09 || byte == 0x0A else { return nil }
                if byte == UInt8(ascii: "&") {
                    guard let semicolon = bytes[index..<min(end, index + 12)].firstIndex(of: UInt8(ascii: ";")) else {
                        return nil
                    }
                    let entity = bytes[(index + 1)..<semicolon]
                    switch String(decoding: entity, as: UTF8.self) {
                    case "amp": decoded.append(UInt8(ascii: "&"))
                    case "lt": decoded.append(UInt8(ascii: "<"))
                    case "gt": decoded.append(UInt8(ascii: ">"))
                    case "quot": decoded.append(UInt8(ascii: "\""))
                    case "apos": decoded.append(UInt8(ascii: "'"))
                    case let reference where reference.hasPrefix("#"):
                        let digits = reference.dropFirst()
                        let scalar =
                            digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
                        guard let scalar, let unicode = Unicode.Scalar(scalar),
                            scalar >= 0x20 || scalar == 0x09 || scalar == 0x0A
                        else { return nil }
                        decoded += Array(String(Character(unicode)).utf8)
                    default: return nil
                    }
                    index = semicolon + 1
                } else {
                    decoded.append(byte)
                    index += 1
                }
            }
            let raw = bytes[start..<index]
            guard let closing = tag(), closing.closing, !closing.empty, Self.named(closing.name, name),
                let value = String(validating: decoded, as: UTF8.self)
            else { return nil }
            return Text(raw: raw, value: value)
        }

        mutating func value() -> Node? {
            guard let open = tag(), !open.closing else { return nil }
            let name = open.name
            if Self.named(name, "true"), open.empty { return .bool(true) }
            if Self.named(name, "false"), open.empty { return .bool(false) }
            if Self.named(name, "dict") {
                if open.empty { return .dict([]) }
                return dict()
            }
            if Self.named(name, "array") {
                if open.empty { return .array([]) }
                return array()
            }
            guard !open.empty else { return nil }
            if Self.named(name, "string") { return text(closing: "string").map(Node.string) }
            if Self.named(name, "integer") { return text(closing: "integer").map(Node.integer) }
            if Self.named(name, "real") { return text(closing: "real").map(Node.real) }
            if Self.named(name, "date") { return text(closing: "date").map(Node.date) }
            if Self.named(name, "data") {
                guard let text = text(closing: "data") else { return nil }
                return .data(text.raw.filter { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A })
            }
            return nil
        }

        private mutating func dict() -> Node? {
            depth += 1
            defer { depth -= 1 }
            guard depth <= 32 else { return nil }
            var entries: [(key: Text, value: Node)] = []
            while true {
                guard let next = tag() else { return nil }
                if next.closing {
                    return Self.named(next.name, "dict") ? .dict(entries) : nil
                }
                guard Self.named(next.name, "key"), !next.empty, let key = text(closing: "key") else { return nil }
                guard let value = value() else { return nil }
                entries.append((key, value))
            }
        }

        private mutating func array() -> Node? {
            depth += 1
            defer { depth -= 1 }
            guard depth <= 32 else { return nil }
            var items: [Node] = []
            while true {
                let mark = index
                guard let next = tag() else { return nil }
                if next.closing {
                    return Self.named(next.name, "array") ? .array(items) : nil
                }
                index = mark
                guard let item = value() else { return nil }
                items.append(item)
            }
        }
    }

    // MARK: Writing, as PropertyListEncoder writes (anything it might write otherwise: nil, and Foundation writes it)

    /// A marker's file, byte for byte what `PropertyListEncoder` writes in ``PropertyListFile/encode(_:)``; `nil` when
    /// a value is outside what this writer is known to write alike: a key that is not ASCII, a string with a control
    /// character other than tab and line feed, a date outside 1970–9999. Writing a marker with Foundation's encoder was
    /// a tenth of a publishing sync's instructions in a fresh process.
    static func encode(_ recent: RecentSync) -> Data? {
        guard let payload = node(recent) else { return nil }
        return file(payload, kind: RecentSync.kind, formatVersion: recent.writtenFormatVersion)
    }

    /// The helper folder's `Status.plist`, written after every sync, as ``encode(_:)-(RecentSync)`` writes a marker.
    static func encode(_ status: LocalSyncStatus) -> Data? {
        var entries: [(String, Node)] = []
        for (key, date) in [("lastFailure", status.lastFailure), ("lastSuccess", status.lastSuccess)] {
            guard let date else { continue }
            guard let text = dateText(date) else { return nil }
            entries.append((key, .date(plain(text))))
        }
        if let code = status.lastErrorCode { entries.append(("lastErrorCode", .integer(plain(String(code))))) }
        if let message = status.lastErrorMessage {
            guard let text = escaped(message) else { return nil }
            entries.append(("lastErrorMessage", .string(text)))
        }
        guard let payload = dict(entries) else { return nil }
        return file(payload, kind: LocalSyncStatus.kind, formatVersion: status.writtenFormatVersion)
    }

    /// The file of `payload` in its envelope: the checksum is of the payload written as a property list of its own.
    private static func file(_ payload: Node, kind: String, formatVersion: Int) -> Data? {
        var standalone = header
        write(payload, depth: 0, into: &standalone)
        standalone += trailer
        let checksum = "crc32:" + Checksum.hex(Checksum.crc32(Data(standalone)))
        guard
            let envelope = dict([
                ("checksum", .string(plain(checksum))), ("formatVersion", .integer(plain(String(formatVersion)))),
                ("kind", .string(plain(kind))), ("payload", payload),
            ])
        else { return nil }
        var file = header
        write(envelope, depth: 0, into: &file)
        file += trailer
        return Data(file)
    }

    /// The payload's node, keys as its `Codable` conformance names them (optionals left out when `nil`).
    private static func node(_ recent: RecentSync) -> Node? {
        guard let client = escaped(recent.clientIdentifier), let date = dateText(recent.lastSyncDate),
            let acknowledgement = dict(recent.acknowledgement.map { ($0.key, Node.integer(plain(String($0.value)))) })
        else { return nil }
        var entries: [(String, Node)] = [
            ("acknowledgement", acknowledgement), ("clientIdentifier", .string(client)),
            ("lastSyncDate", .date(plain(date))),
            ("publishedSequence", .integer(plain(String(recent.publishedSequence)))),
            ("schemaVersion", .integer(plain(String(recent.schemaVersion)))),
        ]
        if let names = recent.recentChangeSets {
            guard let items = strings(names) else { return nil }
            entries.append(("recentChangeSets", items))
        }
        if let contents = recent.changeSetContents {
            guard let sets = dict(contents.map { ($0.key, Node.data(Array($0.value.base64EncodedData()))) }) else {
                return nil
            }
            entries.append(("changeSetContents", sets))
        }
        if let installation = recent.installation {
            guard let text = escaped(installation) else { return nil }
            entries.append(("installation", .string(text)))
        }
        if let waiting = recent.waitingFor {
            guard let sets = dict(waiting.map { ($0.key, Node.integer(plain(String($0.value)))) }) else { return nil }
            entries.append(("waitingFor", sets))
        }
        if let former = recent.formerIdentity {
            guard let text = escaped(former) else { return nil }
            entries.append(("formerIdentity", .string(text)))
        }
        if let awaiting = recent.awaiting {
            guard let items = strings(awaiting) else { return nil }
            entries.append(("awaiting", items))
        }
        return dict(entries)
    }

    /// A dictionary node, its keys sorted as the encoder sorts them (byte order, for ASCII keys); `nil` for a key that
    /// is not ASCII.
    private static func dict(_ entries: [(String, Node)]) -> Node? {
        var keyed: [(key: Text, value: Node)] = []
        keyed.reserveCapacity(entries.count)
        for (key, value) in entries {
            guard key.utf8.allSatisfy({ $0 < 0x80 }), let text = escaped(key) else { return nil }
            keyed.append((text, value))
        }
        keyed.sort { $0.key.raw.lexicographicallyPrecedes($1.key.raw) }
        return .dict(keyed)
    }

    /// An array node of `texts`, each escaped (``escaped(_:)``); `nil` when one cannot be written.
    private static func strings(_ texts: [String]) -> Node? {
        var items: [Node] = []
        items.reserveCapacity(texts.count)
        for text in texts {
            guard let escaped = escaped(text) else { return nil }
            items.append(.string(escaped))
        }
        return .array(items)
    }

    private static func plain(_ text: String) -> Text { Text(raw: ArraySlice(text.utf8), value: text) }

    /// `text` as the encoder writes it between tags: `&`, `<` and `>` escaped; `nil` for a control character other than
    /// tab and line feed.
    private static func escaped(_ text: String) -> Text? {
        var raw: [UInt8] = []
        raw.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): raw += Array("&amp;".utf8)
            case UInt8(ascii: "<"): raw += Array("&lt;".utf8)
            case UInt8(ascii: ">"): raw += Array("&gt;".utf8)
            case 0x09, 0x0A: raw.append(byte)
            case 0..<0x20, 0x7F: return nil
            default: raw.append(byte)
            }
        }
        return Text(raw: raw[...], value: text)
    }

    /// `yyyy-MM-ddTHH:mm:ssZ` of a date from 1970 to 9999, `nil` otherwise. A fraction of a second is dropped as the
    /// encoder drops it: the second at or before the date's interval since 2001 (what `Date` holds), which for a date
    /// just before a whole second of 1970's count can be that second (rounded when the interval was made).
    private static func dateText(_ date: Date) -> String? {
        let sinceReference = date.timeIntervalSinceReferenceDate.rounded(.down)
        guard sinceReference.isFinite else { return nil }
        let interval = sinceReference + Date.timeIntervalBetween1970AndReferenceDate
        guard interval >= 0, interval < 253_402_300_800 else { return nil }
        let seconds = Int(interval)
        let days = seconds / 86_400
        let time = seconds % 86_400
        // The civil date of a day count from 1970-01-01 (the proleptic Gregorian calendar).
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        let yearText = String(year)
        return String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText + "-" + two(month) + "-" + two(day)
            + "T" + two(time / 3600) + ":" + two(time / 60 % 60) + ":" + two(time % 60) + "Z"
    }

    // MARK: Values, as PropertyListDecoder reads them (anything else: nil, and the caller asks Foundation)

    static func string(_ node: Node?) -> String? {
        guard case .string(let text)? = node else { return nil }
        return text.value
    }

    static func integer(_ node: Node?) -> Int64? {
        guard case .integer(let text)? = node else { return nil }
        return Int64(text.value)
    }

    /// A date as the encoder writes it: `yyyy-MM-ddTHH:mm:ssZ`, UTC, years 1970 to 9999.
    static func date(_ node: Node?) -> Date? {
        guard case .date(let text)? = node else { return nil }
        let digits = Array(text.value.utf8)
        guard digits.count == 20, digits[4] == UInt8(ascii: "-"), digits[7] == UInt8(ascii: "-"),
            digits[10] == UInt8(ascii: "T"),
            digits[13] == UInt8(ascii: ":"), digits[16] == UInt8(ascii: ":"), digits[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digits[index]) else { return nil }
                value = value * 10 + Int(digits[index] - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            year >= 1970, (1...12).contains(month), hour < 24, minute < 60, second < 60
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...lengths[month - 1]).contains(day) else { return nil }
        // Days from 1970-01-01 to the date (the proleptic Gregorian calendar, as ISO 8601 counts).
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    static func data(_ node: Node?) -> Data? {
        guard case .data(let digits)? = node else { return nil }
        return Data(base64Encoded: Data(digits))
    }

    static func strings(_ node: Node?) -> [String]? {
        guard case .array(let items)? = node else { return nil }
        var result: [String] = []
        result.reserveCapacity(items.count)
        for item in items {
            guard let text = string(item) else { return nil }
            result.append(text)
        }
        return result
    }

    static func values<T>(_ node: Node?, _ read: (Node?) -> T?) -> [String: T]? {
        guard let node, let entries = dictionary(node) else { return nil }
        var result: [String: T] = [:]
        result.reserveCapacity(entries.count)
        for (key, value) in entries {
            guard let converted = read(value) else { return nil }
            result[key] = converted
        }
        return result
    }
}

extension RecentSync {
    /// The marker in a canonical payload (``CanonicalPropertyList``), keys as its `Codable` conformance names them.
    init?(canonical payload: [String: CanonicalPropertyList.Node]) {
        typealias Read = CanonicalPropertyList
        guard let client = Read.string(payload["clientIdentifier"]), let date = Read.date(payload["lastSyncDate"]),
            let published = Read.integer(payload["publishedSequence"]),
            let acknowledgement = Read.values(payload["acknowledgement"], Read.integer),
            let schema = Read.integer(payload["schemaVersion"]), let schemaVersion = Int(exactly: schema)
        else { return nil }
        var recent: [String]?
        if let node = payload["recentChangeSets"] {
            guard let names = Read.strings(node) else { return nil }
            recent = names
        }
        var contents: [String: Data]?
        if let node = payload["changeSetContents"] {
            guard let sets = Read.values(node, Read.data) else { return nil }
            contents = sets
        }
        var installation: String?
        if let node = payload["installation"] {
            guard let text = Read.string(node) else { return nil }
            installation = text
        }
        var waiting: [String: Int64]?
        if let node = payload["waitingFor"] {
            guard let sets = Read.values(node, Read.integer) else { return nil }
            waiting = sets
        }
        var former: String?
        if let node = payload["formerIdentity"] {
            guard let text = Read.string(node) else { return nil }
            former = text
        }
        var awaiting: [String]?
        if let node = payload["awaiting"] {
            guard let clients = Read.strings(node) else { return nil }
            awaiting = clients
        }
        self.init(
            clientIdentifier: client, lastSyncDate: date, publishedSequence: published,
            acknowledgement: acknowledgement,
            schemaVersion: schemaVersion, recentChangeSets: recent, changeSetContents: contents,
            installation: installation,
            waitingFor: waiting, formerIdentity: former, awaiting: awaiting)
    }
}

extension DocumentInfo {
    /// The document's information in a canonical payload (``CanonicalPropertyList``).
    init?(canonical payload: [String: CanonicalPropertyList.Node]) {
        typealias Read = CanonicalPropertyList
        guard let document = Read.string(payload["documentIdentifier"]),
            let description = Read.string(payload["documentDescription"]),
            let userInfo = Read.values(payload["userInfo"], Read.string),
            let key = Read.string(payload["integrityKey"]),
            let creator = Read.string(payload["createdByClient"]), let created = Read.date(payload["creationDate"])
        else { return nil }
        self.init(
            documentIdentifier: document, documentDescription: description, userInfo: userInfo, integrityKey: key,
            createdByClient: creator, creationDate: created)
    }
}
