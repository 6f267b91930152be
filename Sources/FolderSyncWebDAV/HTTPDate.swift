import Foundation

/// HTTP dates (`Date`, `Retry-After`, `getlastmodified`).
enum HTTPDate {
    static func parse(_ text: String) -> Date? {
        if let date = imfFixdate(text) { return date }
        // A formatter per call: DateFormatter is not Sendable. Building one costs about 0.2 ms here, which a listing
        // paid per item before the format every server sends was read by hand (above): only the obsolete formats
        // RFC 9110 still asks readers to accept come here.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return ISO8601DateFormatter().date(from: text)
    }

    private static let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { Array($0.utf8) }
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].map
    { Array($0.utf8) }

    /// The preferred format, `Sun, 06 Nov 1994 08:49:37 GMT` (RFC 9110, 5.6.7), read without a formatter; `nil` for
    /// anything else, including a date that does not exist, which the formatters then judge.
    static func imfFixdate(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20, bytes[11] == 0x20,
            bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == 0x20,
            bytes[26...] == [UInt8(ascii: "G"), UInt8(ascii: "M"), UInt8(ascii: "T")],
            days.contains(where: { $0[...] == bytes[0..<3] }),
            let month = months.firstIndex(where: { $0[...] == bytes[8..<11] })
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let day = number(5..<7), let year = number(12..<16), let hour = number(17..<19),
            let minute = number(20..<22),
            let second = number(23..<25), hour < 24, minute < 60, second < 60, year >= 1970
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day >= 1, day <= lengths[month] else { return nil }
        // Days since 1970-01-01 of the civil date (Howard Hinnant's days_from_civil).
        let y = month < 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 10) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let daysSinceEpoch = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(daysSinceEpoch * 86_400 + hour * 3600 + minute * 60 + second))
    }
}
