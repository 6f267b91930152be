import Foundation
import Testing

@testable import FolderSyncWebDAV
@testable import TestSupport

@Suite("HTTP dates")
struct HTTPDateTests {
    @Test(
        "The preferred format read by hand gives the formatter's date, every few hours from 1970 to 2100 (leap days included)"
    )
    func fixdateMatchesFormatter() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var seconds: TimeInterval = 0
        while seconds < 4_102_444_800 {  // 2100-01-01
            let date = Date(timeIntervalSince1970: seconds)
            let text = formatter.string(from: date)
            #expect(HTTPDate.imfFixdate(text) == date, "\(text)")
            seconds += 7 * 3600 + 13 * 60 + 17
        }
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 23:59:59 GMT") == Date(timeIntervalSince1970: 1_709_251_199))
    }

    @Test("What is not the preferred format, or not a date, is left to the formatters")
    func otherTextFallsBack() {
        for text in [
            "Mon, 30 Feb 2026 10:00:00 GMT", "Sun, 06 Nov 1994 24:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Xyz, 06 Nov 1994 08:49:37 GMT", "",
        ] {
            #expect(HTTPDate.imfFixdate(text) == nil, "\(text)")
        }
    }
}
