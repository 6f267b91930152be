import ArgumentParser
@_spi(Tooling) import FolderSync
import Foundation

/// A duration written as a positive whole number and a unit: `90d`, `36h`, `2w`, `1440m`.
///
/// `m` is minutes, never months: a month has no fixed length, and an expiry policy must be exact. An expiry is
/// a day at the soonest (``VacuumOperation/minimumClientExpiry``), so the examples shown are all accepted.
struct ExpiryDuration: ExpressibleByArgument, Hashable, CustomStringConvertible {
    let seconds: TimeInterval
    let description: String

    private static let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces)
        guard let unit = text.last, let scale = Self.units[unit] else { return nil }
        let digits = text.dropLast()
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
            let count = Int64(digits), count > 0
        else { return nil }
        let (total, overflow) = count.multipliedReportingOverflow(by: scale)
        guard !overflow else { return nil }
        seconds = TimeInterval(total)
        description = text
    }

    /// What `--help` says of a duration.
    static let help =
        "DURATION is a whole number and a unit: s, m (minutes), h, d or w, of 1d or more, "
        + "as in 90d, 36h or 2w."

    /// For `@Option(transform:)` of `--expire-clients-after`: the same parse, with an error that says what is expected.
    static func parse(_ argument: String) throws -> ExpiryDuration {
        let duration = try parsed(argument)
        guard duration.seconds >= VacuumOperation.minimumClientExpiry else {
            throw ValidationError(
                "'\(argument)' is too short: a client can be expired after 1d of silence at the soonest "
                    + "(a client that syncs says so at least once an hour)")
        }
        return duration
    }

    /// For `@Option(transform:)` of `--keep-removed`: a day at the least.
    static func parseGracePeriod(_ argument: String) throws -> ExpiryDuration {
        let duration = try parsed(argument)
        guard duration.seconds >= VacuumOperation.minimumRemovedFileGracePeriod else {
            throw ValidationError(
                "'\(argument)' is too short: removed files are kept for 1d at the least "
                    + "(a device that syncs once a day must still find what a wrong removal took)")
        }
        return duration
    }

    private static func parsed(_ argument: String) throws -> ExpiryDuration {
        guard let duration = ExpiryDuration(argument: argument) else {
            throw ValidationError(
                "'\(argument)' is not a duration: expected a positive whole number and a unit "
                    + "(s, m, h, d, w), like 90d, 36h or 2w")
        }
        return duration
    }
}
