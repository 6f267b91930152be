import Foundation

/// The sync state's JSON, read and written without `JSONDecoder` and `JSONEncoder`.
///
/// The state is read and written by every sync, and a sync is often the first thing a process does: Foundation's
/// coders then instantiate their generic machinery for each type the first time (metadata, conformance lookups
/// across every loaded image), which costs a sixth of a one-row sync's instructions. These write the same JSON object,
/// key for key and value for value (dates as `JSONEncoder`'s default, seconds since 2001; absent optionals left out),
/// so that every version reads what any other wrote; only the order of keys, which `JSONEncoder` does not fix either,
/// differs. Anything this reader does not take (a shape it does not expect) goes to `JSONDecoder`, which says what it
/// says today: `LocalSyncState`'s `Codable` conformance stays the definition.
extension LocalSyncState {
    /// The state in `data`, as `JSONDecoder` would read it.
    static func decodeJSON(_ data: Data) throws -> LocalSyncState {
        if let state = try? StateJSON.read(data) { return state }
        return try JSONDecoder().decode(LocalSyncState.self, from: data)
    }

    /// The state as a JSON object, as `JSONEncoder` writes it (keys in another order).
    func encodedJSON() -> Data {
        var out = StateJSON.Writer()
        out.object { object in
            object.int("nextSequence", progress.nextSequence)
            object.int("publishedSequence", progress.publishedSequence)
            if let after = progress.ownChangeSetsToReapplyAfter { object.int("ownChangeSetsToReapplyAfter", after) }
            object.bool("hasBootstrapped", progress.hasBootstrapped)
            object.key("knownRecentSyncs")
            object.writer.object { known in
                for (client, marker) in remote.knownRecentSyncs {
                    known.key(client)
                    known.writer.object { fields in
                        if let etag = marker.etag { fields.string("etag", etag) }
                        fields.int("publishedSequence", marker.publishedSequence)
                        if let names = marker.recentChangeSets { fields.strings("recentChangeSets", names) }
                        if let installation = marker.installation { fields.string("installation", installation) }
                    }
                }
            }
            object.int("changeSetsSinceWholeStore", Int64(remote.changeSetsSinceWholeStore))
            object.int("bytesSinceWholeStore", remote.bytesSinceWholeStore)
            object.int("announcedSequence", remote.announcedSequence)
            object.sequences("announcedAcknowledgement", remote.announcedAcknowledgement)
            if let date = remote.announcedAt { object.date("announcedAt", date) }
            if let etag = remote.ownRecentSyncEtag { object.string("ownRecentSyncEtag", etag) }
            object.bool("owesWholeStore", remote.owesWholeStore)
            object.sequences("acknowledgedByOthers", remote.acknowledgedByOthers)
            object.bool("hasListedClients", remote.hasListedClients)
            object.strings("recentlyPublished", remote.recentlyPublished)
            if let tag = remote.ownWholeStoreTag { object.string("ownWholeStoreTag", tag) }
            if !remote.announcedWaitingFor.isEmpty {
                object.sequences("announcedWaitingFor", remote.announcedWaitingFor)
            }
            if let former = remote.formerIdentity { object.string("formerIdentity", former) }
            if !remote.awaitedClients.isEmpty { object.strings("awaitedClients", remote.awaitedClients) }
            if !remote.announcedAwaiting.isEmpty { object.strings("announcedAwaiting", remote.announcedAwaiting) }
        }
        return Data(out.bytes)
    }
}

/// A small JSON reader and writer for ``LocalSyncState``: the grammar of RFC 8259, values kept as parsed.
enum StateJSON {
    struct Malformed: Error {}

    indirect enum Value {
        case object([(String, Value)])
        case array([Value])
        case string(String)
        /// The number's text, converted when its field says to what.
        case number(String)
        case bool(Bool)
        case null
    }

    /// The state in `data`; throws ``Malformed`` for anything `JSONDecoder` should judge.
    static func read(_ data: Data) throws -> LocalSyncState {
        let value = try data.withUnsafeBytes { buffer in
            var parser = Parser(bytes: buffer.bindMemory(to: UInt8.self))
            let value = try parser.value()
            parser.skipSpace()
            guard parser.index == parser.bytes.count else { throw Malformed() }
            return value
        }
        guard case .object(let fields) = value else { throw Malformed() }
        var state = LocalSyncState()
        var seen = Set<String>()
        for (key, value) in fields {
            guard seen.insert(key).inserted else { throw Malformed() }  // duplicate keys: JSONDecoder decides
            switch key {
            case "nextSequence": state.progress.nextSequence = try int(value)
            case "publishedSequence": state.progress.publishedSequence = try int(value)
            case "ownChangeSetsToReapplyAfter": state.progress.ownChangeSetsToReapplyAfter = try optional(value, int)
            case "hasBootstrapped": state.progress.hasBootstrapped = try optional(value, bool) ?? false
            case "knownRecentSyncs": state.remote.knownRecentSyncs = try optional(value, knownRecentSyncs) ?? [:]
            case "changeSetsSinceWholeStore":
                state.remote.changeSetsSinceWholeStore = Int(try optional(value, int) ?? 0)
            case "bytesSinceWholeStore": state.remote.bytesSinceWholeStore = try optional(value, int) ?? 0
            case "announcedSequence": state.remote.announcedSequence = try optional(value, int) ?? 0
            case "announcedAcknowledgement":
                state.remote.announcedAcknowledgement = try optional(value, sequences) ?? [:]
            case "announcedAt": state.remote.announcedAt = try optional(value, date)
            case "ownRecentSyncEtag": state.remote.ownRecentSyncEtag = try optional(value, string)
            case "owesWholeStore": state.remote.owesWholeStore = try optional(value, bool) ?? false
            case "acknowledgedByOthers": state.remote.acknowledgedByOthers = try optional(value, sequences) ?? [:]
            case "hasListedClients": state.remote.hasListedClients = try optional(value, bool) ?? false
            case "recentlyPublished": state.remote.recentlyPublished = try optional(value, strings) ?? []
            case "ownWholeStoreTag": state.remote.ownWholeStoreTag = try optional(value, string)
            case "announcedWaitingFor": state.remote.announcedWaitingFor = try optional(value, sequences) ?? [:]
            case "formerIdentity": state.remote.formerIdentity = try optional(value, string)
            case "awaitedClients": state.remote.awaitedClients = try optional(value, strings) ?? []
            case "announcedAwaiting": state.remote.announcedAwaiting = try optional(value, strings) ?? []
            default: continue  // a key of a newer version: ignored, as JSONDecoder ignores it
            }
        }
        // The two keys every version wrote.
        guard seen.contains("nextSequence"), seen.contains("publishedSequence") else { throw Malformed() }
        return state
    }

    private static func optional<T>(_ value: Value, _ read: (Value) throws -> T) throws -> T? {
        if case .null = value { return nil }
        return try read(value)
    }

    private static func int(_ value: Value) throws -> Int64 {
        guard case .number(let text) = value, let number = Int64(text) else { throw Malformed() }
        return number
    }

    private static func bool(_ value: Value) throws -> Bool {
        guard case .bool(let flag) = value else { throw Malformed() }
        return flag
    }

    private static func string(_ value: Value) throws -> String {
        guard case .string(let text) = value else { throw Malformed() }
        return text
    }

    private static func date(_ value: Value) throws -> Date {
        guard case .number(let text) = value, let seconds = Double(text), seconds.isFinite else { throw Malformed() }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    private static func strings(_ value: Value) throws -> [String] {
        guard case .array(let items) = value else { throw Malformed() }
        return try items.map(string)
    }

    private static func sequences(_ value: Value) throws -> [String: Int64] {
        guard case .object(let fields) = value else { throw Malformed() }
        var result: [String: Int64] = [:]
        for (key, value) in fields {
            guard result.updateValue(try int(value), forKey: key) == nil else { throw Malformed() }
        }
        return result
    }

    private static func knownRecentSyncs(_ value: Value) throws -> [String: LocalSyncState.KnownRecentSync] {
        guard case .object(let clients) = value else { throw Malformed() }
        var result: [String: LocalSyncState.KnownRecentSync] = [:]
        for (client, value) in clients {
            guard case .object(let fields) = value else { throw Malformed() }
            var etag: String?
            var published: Int64?
            var names: [String]?
            var installation: String?
            var seen = Set<String>()
            for (key, value) in fields {
                guard seen.insert(key).inserted else { throw Malformed() }
                switch key {
                case "etag": etag = try optional(value, string)
                case "publishedSequence": published = try int(value)
                case "recentChangeSets": names = try optional(value, strings)
                case "installation": installation = try optional(value, string)
                default: continue
                }
            }
            guard let published else { throw Malformed() }
            guard
                result.updateValue(
                    .init(
                        etag: etag, publishedSequence: published, recentChangeSets: names, installation: installation),
                    forKey: client) == nil
            else { throw Malformed() }
        }
        return result
    }

    /// A recursive-descent parser over UTF-8 bytes.
    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// Objects and arrays nested deeper than this are left to JSONDecoder.
        private var depth = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        private mutating func expect(_ byte: UInt8) throws {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { throw Malformed() }
            index += 1
        }

        private mutating func literal(_ text: StaticString) throws {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw Malformed() }
            for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { throw Malformed() }
            index += count
        }

        mutating func value() throws -> Value {
            skipSpace()
            guard index < bytes.count else { throw Malformed() }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object()
            case UInt8(ascii: "["): return try array()
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            default: return .number(try number())
            }
        }

        private mutating func object() throws -> Value {
            depth += 1
            defer { depth -= 1 }
            guard depth <= 16 else { throw Malformed() }
            index += 1
            var fields: [(String, Value)] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(fields)
            }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Malformed() }
                let key = try string()
                try expect(UInt8(ascii: ":"))
                fields.append((key, try value()))
                skipSpace()
                guard index < bytes.count else { throw Malformed() }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard bytes[index] == UInt8(ascii: "}") else { throw Malformed() }
                index += 1
                return .object(fields)
            }
        }

        private mutating func array() throws -> Value {
            depth += 1
            defer { depth -= 1 }
            guard depth <= 16 else { throw Malformed() }
            index += 1
            var items: [Value] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                items.append(try value())
                skipSpace()
                guard index < bytes.count else { throw Malformed() }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard bytes[index] == UInt8(ascii: "]") else { throw Malformed() }
                index += 1
                return .array(items)
            }
        }

        /// A string at `index` (its opening quote), unescaped; UTF-8 checked.
        private mutating func string() throws -> String {
            index += 1
            var out: [UInt8] = []
            while true {
                guard index < bytes.count else { throw Malformed() }
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    guard let text = String(validating: out, as: UTF8.self) else { throw Malformed() }
                    return text
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { throw Malformed() }
                    let escaped = bytes[index]
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            // A surrogate pair: the low half must follow.
                            try literal("\\u")
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw Malformed() }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw Malformed() }
                        out.append(contentsOf: Array(String(Character(unicode)).utf8))
                    default: throw Malformed()
                    }
                default:
                    guard byte >= 0x20 else { throw Malformed() }
                    out.append(byte)
                }
            }
        }

        private mutating func hex4() throws -> UInt32 {
            guard index + 4 <= bytes.count else { throw Malformed() }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                index += 1
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw Malformed()
                }
                value = value << 4 | digit
            }
            return value
        }

        /// A number's text, checked against JSON's grammar.
        private mutating func number() throws -> String {
            let start = index
            func digits() -> Int {
                let first = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                return index - first
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let integer = digits()
            guard integer > 0, integer == 1 || bytes[index - integer] != UInt8(ascii: "0") else { throw Malformed() }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw Malformed() }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard digits() > 0 else { throw Malformed() }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        }
    }

    /// Writes a JSON object as `JSONEncoder` does: no spaces, `/` escaped.
    struct Writer {
        var bytes: [UInt8] = []

        mutating func object(_ body: (inout ObjectWriter) -> Void) {
            bytes.append(UInt8(ascii: "{"))
            var object = ObjectWriter(writer: self)
            bytes = []
            body(&object)
            self = object.writer
            bytes.append(UInt8(ascii: "}"))
        }

        mutating func string(_ text: String) {
            bytes.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
                case UInt8(ascii: "/"): bytes.append(contentsOf: [0x5C, 0x2F])
                case 0x08: bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
                case 0x0C: bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
                case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [
                        0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)],
                        hex[Int(byte & 0xF)],
                    ])
                default: bytes.append(byte)
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }

    /// The members of an object being written.
    struct ObjectWriter {
        var writer: Writer
        private var first = true

        init(writer: Writer) { self.writer = writer }

        mutating func key(_ name: String) {
            if !first { writer.bytes.append(UInt8(ascii: ",")) }
            first = false
            writer.string(name)
            writer.bytes.append(UInt8(ascii: ":"))
        }

        mutating func int(_ name: String, _ value: Int64) {
            key(name)
            writer.bytes.append(contentsOf: Array(String(value).utf8))
        }

        mutating func bool(_ name: String, _ value: Bool) {
            key(name)
            writer.bytes.append(contentsOf: Array((value ? "true" : "false").utf8))
        }

        mutating func string(_ name: String, _ value: String) {
            key(name)
            writer.string(value)
        }

        mutating func strings(_ name: String, _ values: [String]) {
            key(name)
            writer.bytes.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { writer.bytes.append(UInt8(ascii: ",")) }
                writer.string(value)
            }
            writer.bytes.append(UInt8(ascii: "]"))
        }

        mutating func sequences(_ name: String, _ values: [String: Int64]) {
            key(name)
            writer.object { object in
                for (key, value) in values { object.int(key, value) }
            }
        }

        /// A date as `JSONEncoder` writes it by default: seconds since 2001 (whole ones without a fraction).
        mutating func date(_ name: String, _ value: Date) {
            key(name)
            let seconds = value.timeIntervalSinceReferenceDate
            if seconds == seconds.rounded(), abs(seconds) < 1e15 {
                writer.bytes.append(contentsOf: Array(String(Int64(seconds)).utf8))
            } else {
                writer.bytes.append(contentsOf: Array(seconds.description.utf8))
            }
        }
    }
}
