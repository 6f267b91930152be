import Foundation

/// How the tool writes JSON: sorted keys, ISO 8601 dates, non-finite reals as strings, so output is stable.
enum JSONOutput {
    static func encoder(pretty: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(isoString(date))
        }
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }

    /// Pretty-printed, followed by a newline.
    static func print(_ value: some Encodable) throws {
        write(try encoder(pretty: true).encode(value) + Data("\n".utf8))
    }

    /// One line, no newline.
    static func line(_ value: some Encodable) throws -> String {
        String(decoding: try encoder(pretty: false).encode(value), as: UTF8.self)
    }

    /// Through `print`, so JSON and text share one buffered standard output and never interleave out of order.
    static func write(_ data: Data) {
        Swift.print(String(decoding: data, as: UTF8.self), terminator: "")
    }

    /// `2026-01-02T03:04:05.123Z`: milliseconds, UTC.
    static func isoString(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
