import Foundation

/// RFC 1123 dates, as in `Last-Modified`, `getlastmodified` and `Retry-After`.
enum HTTPDate {
    static func parse(_ text: String) -> Date? {
        // A formatter per call: DateFormatter is not Sendable, and dates are parsed once per listed item at most.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return ISO8601DateFormatter().date(from: text)
    }
}
