import Foundation
import GRDBSQLite

/// The arguments of one call of an SQL function, read where SQLite keeps them (valid during the call only).
struct FunctionArguments {
    let count: Int
    let values: UnsafeMutablePointer<OpaquePointer?>?

    /// The bytes of a BLOB or TEXT argument; empty for NULL, a number or an empty value.
    func bytes(_ index: Int) -> UnsafeRawBufferPointer {
        guard index < count, let value = values?[index] else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        // The pointer first, then the size: asking for the bytes may convert the value.
        switch sqlite3_value_type(value) {
        case SQLITE_BLOB:
            return UnsafeRawBufferPointer(start: sqlite3_value_blob(value), count: Int(sqlite3_value_bytes(value)))
        case SQLITE_TEXT:
            return UnsafeRawBufferPointer(start: sqlite3_value_text(value), count: Int(sqlite3_value_bytes(value)))
        default:
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
    }

    /// The UTF-8 bytes of a TEXT argument, or `nil` when it is not text (a NULL name is skipped).
    func text(_ index: Int) -> UnsafeRawBufferPointer? {
        guard index < count, let value = values?[index], sqlite3_value_type(value) == SQLITE_TEXT else { return nil }
        return UnsafeRawBufferPointer(start: sqlite3_value_text(value), count: Int(sqlite3_value_bytes(value)))
    }
}

/// A captured row's new pending marks and registers, as ``CaptureWriter`` makes them once per row: read in place
/// and written into buffers kept from call to call, so a captured row costs no boxed value, string or array.
/// They give the same bytes as ``PendingMarks`` and ``RowRegisters/encoded``,
/// which stay the one description of both formats; registers naming other clients (installed from a snapshot, or
/// merged from remote changes) go through ``RowRegisters`` itself. Names are compared byte for byte, as SQLite
/// compares column names.
///
/// One instance per connection: SQLite calls a connection's functions one at a time.
final class CaptureBuffers {
    // Only this connection's functions touch them, one call at a time: no exclusivity check per access.
    @exclusivity(unchecked) private var output: [UInt8] = []
    @exclusivity(unchecked) private var registers: [(column: UnsafeRawBufferPointer, timestamp: UInt64)] = []

    /// ``StoreSchema/allColumnsMarker``'s bytes.
    private static var all: UnsafeRawBufferPointer {
        let marker: StaticString = "#all"
        return UnsafeRawBufferPointer(start: marker.utf8Start, count: marker.utf8CodeUnitCount)
    }

    /// `marks` with each of `names` not in it yet appended, handed to `result` (the same value when every name is
    /// marked, by its name or by ``StoreSchema/allColumnsMarker``).
    func mark(
        _ marks: UnsafeRawBufferPointer, names: ArraySlice<UnsafeRawBufferPointer>,
        _ result: (UnsafeRawBufferPointer) -> Void
    ) throws {
        // Reads the whole value (and checks its shape, as decoding it would).
        if try Self.marks(marks, contain: Self.all) { return result(marks) }
        // Worked on as a local (and put back), so that its accesses need no exclusivity check each.
        var output = take(&self.output)
        defer { self.output = output }
        var copied = false
        for name in names {
            let present =
                copied
                ? try output.withUnsafeBytes { try Self.marks($0, contain: name) }
                : try Self.marks(marks, contain: name)
            if present { continue }
            if !copied {
                output.append(contentsOf: marks)
                copied = true
            }
            Self.append(name, to: &output)
        }
        if copied { return output.withUnsafeBytes(result) }
        result(marks)
    }

    /// Whether the encoded marks hold `name`; the whole value is read when they do not, and its shape checked.
    private static func marks(_ marks: UnsafeRawBufferPointer, contain name: UnsafeRawBufferPointer) throws -> Bool {
        var reader = BlobReader(bytes: marks)
        while reader.remaining > 0 {
            if same(try reader.lengthPrefixed(what: "pending mark"), name) { return true }
        }
        return false
    }

    /// The registers `stamps` with each of `names` written now by this client, each with the next timestamp in
    /// turn, handed to `result` in version 2 (``RowRegisters/encoded``).
    func stamp(
        _ stamps: UnsafeRawBufferPointer, names: ArraySlice<UnsafeRawBufferPointer>, clock: StoreClock, now: () -> Date,
        _ result: (UnsafeRawBufferPointer) -> Void
    ) throws {
        var (output, registers) = (take(&self.output), take(&self.registers))
        defer { (self.output, self.registers) = (output, registers) }
        // Either version, no client identifier: only this client's registers (or none).
        guard stamps.isEmpty || (stamps.count >= 10 && (stamps[0] == 1 || stamps[0] == 2) && stamps[9] == 0) else {
            var decoded = try RowRegisters(Data(stamps))
            var next = names.startIndex
            try clock.ticks(names.count, now: now) { timestamp in
                decoded.set(String(decoding: names[next], as: UTF8.self), timestamp: timestamp.rawValue, client: nil)
                next += 1
            }
            return decoded.encoded.withUnsafeBytes(result)
        }
        if !stamps.isEmpty {
            let version = stamps[0]
            let head = UnsafeRawBufferPointer(rebasing: stamps[1..<9]).loadUnaligned(as: UInt64.self).bigEndian
            var newestSeen = version == 1
            var reader = BlobReader(bytes: UnsafeRawBufferPointer(rebasing: stamps[10...]))
            while reader.remaining > 0 {
                let column = try reader.lengthPrefixed(what: "register column")
                if version == 1 {
                    let timestamp = try reader.bytes(8).loadUnaligned(as: UInt64.self).littleEndian
                    guard try reader.varint() == 0 else { throw FormatViolation("register client is out of range") }
                    registers.append((column, timestamp))
                } else {
                    let age = try reader.varint()
                    guard age <= head else { throw FormatViolation("register age \(age) is older than time") }
                    newestSeen = newestSeen || age == 0
                    registers.append((column, head - age))
                }
            }
            guard newestSeen || registers.isEmpty else {
                throw FormatViolation("no register is as new as the registers' head")
            }
        }
        var next = names.startIndex
        // A new row's names are its table's columns, each once: appended without looking for them.
        let fresh = registers.isEmpty
        try clock.ticks(names.count, now: now) { timestamp in
            let name = names[next]
            next += 1
            if !fresh, let existing = registers.firstIndex(where: { same($0.column, name) }) {
                registers[existing].timestamp = timestamp.rawValue
            } else {
                registers.append((name, timestamp.rawValue))
            }
        }
        let newest = registers.reduce(0) { max($0, $1.timestamp) }
        output.append(2)
        withUnsafeBytes(of: newest.bigEndian) { output.append(contentsOf: $0) }
        output.append(0)  // no client identifier: every register is this client's, and names none
        for register in registers {
            Self.append(register.column, to: &output)
            Self.appendVarint(newest - register.timestamp, to: &output)
        }
        output.withUnsafeBytes(result)
    }

    /// The buffer, emptied (its storage kept), leaving an empty one in its place.
    private func take<Element>(_ buffer: inout [Element]) -> [Element] {
        var taken: [Element] = []
        swap(&taken, &buffer)
        taken.removeAll(keepingCapacity: true)
        return taken
    }

    /// Appends a varint length and the bytes, as ``ByteSink/appendBytes(_:)`` does.
    private static func append(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        appendVarint(UInt64(bytes.count), to: &output)
        output.append(contentsOf: bytes)
    }

    /// Appends a varint, as ``ByteSink/appendVarint(_:)`` does.
    private static func appendVarint(_ value: UInt64, to output: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            output.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        output.append(UInt8(value))
    }
}

/// Whether two names hold the same bytes.
@inline(__always)
func same(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
}

extension BlobReader {
    /// A varint length and that many bytes, in place (not checked as UTF-8).
    mutating func lengthPrefixed(what: String) throws -> UnsafeRawBufferPointer {
        let length = try varint()
        guard length <= UInt64(remaining) else { throw FormatViolation("\(what) runs past the end of its value") }
        return try bytes(Int(length))
    }
}
