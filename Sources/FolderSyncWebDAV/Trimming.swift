import Foundation

extension StringProtocol {
    /// The text without the characters of `set` around it, as `trimmingCharacters(in:)` gives it, without going
    /// through `NSString`: on Linux that bridging was most of the time spent reading a 10,000-item PROPFIND answer
    /// and the headers of 10,000 answers (perf, scenario 8 of the benchmarks).
    func trimming(_ set: CharacterSet) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !set.contains($0) }),
              let last = scalars.lastIndex(where: { !set.contains($0) }) else { return "" }
        var trimmed = String.UnicodeScalarView()
        trimmed.append(contentsOf: scalars[first...last])
        return String(trimmed)
    }
}
