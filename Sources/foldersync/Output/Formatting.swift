import Foundation

/// How the tables show sizes, dates and ages to people (JSON keeps exact numbers and ISO 8601 dates).
enum Formatting {
    /// `0 B`, `812 B`, `1.2 KiB`, `3.4 MiB`: binary units, because file systems count that way.
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while abs(value) >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// `2026-01-02 03:04:05Z`, UTC, so operators in different time zones read the same value; `-` when unknown.
    static func date(_ date: Date?) -> String {
        guard let date else { return "-" }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss'Z'"
        return formatter.string(from: date)
    }

    /// A date and how long ago it was, in the units `--expire-clients-after` takes (`… (12d ago)`),
    /// so an operator can read off the expiry that would catch it. A date ahead of this computer's clock says so
    /// (`… (400d ahead of this computer's clock)`): one of the two clocks is wrong.
    static func dateAndAge(_ date: Date?, now: Date = Date()) -> String {
        guard let date else { return "-" }
        let interval = now.timeIntervalSince(date)
        guard interval > -futureTolerance else {
            return "\(self.date(date)) (\(age(-interval)) ahead of this computer's clock)"
        }
        return "\(self.date(date)) (\(age(interval)) ago)"
    }

    /// How far ahead a date may be and still count as now: markers keep whole seconds, and clocks differ a little.
    static let futureTolerance: TimeInterval = 60

    /// The largest whole unit among s, m, h, d: `45s`, `3m`, `5h`, `12d`.
    static func age(_ interval: TimeInterval) -> String {
        let seconds = Int64(max(0, interval))
        for (unit, size) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds >= size {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }

    /// `1–30, 32, 40–41`: sorted, consecutive numbers joined.
    static func ranges(_ numbers: [Int64]) -> String {
        var parts: [String] = []
        var start: Int64?
        var end: Int64 = 0
        func close() {
            guard let first = start else { return }
            parts.append(first == end ? "\(first)" : "\(first)–\(end)")
        }
        for number in Set(numbers).sorted() {
            if start != nil && number == end + 1 {
                end = number
            } else {
                close()
                start = number
                end = number
            }
        }
        close()
        return parts.joined(separator: ", ")
    }

    /// `1 document`, `3 documents`.
    static func count(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(n) " + (n == 1 ? singular : plural ?? singular + "s")
    }
}
