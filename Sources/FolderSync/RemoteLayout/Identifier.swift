/// Checks identifiers (application, client, document) before they become file names.
///
/// An identifier is refused when it could escape the remote tree or is not a
/// portable file name on the file systems and servers FolderSync supports:
/// empty, `.`/`..`, a leading dot (reserved for FolderSync's temporary
/// files), path separators, NUL or other control characters, characters
/// Windows and SMB shares refuse, a trailing space or dot, or more than 255
/// bytes of UTF-8.
enum Identifier {
    static let maximumByteCount = 255
    private static let forbidden: Set<Character> = ["/", "\\", ":", "*", "?", "\"", "<", ">", "|"]

    /// Returns `value` unchanged, or throws ``FolderSyncError/Code/invalidIdentifier`` naming the cause.
    @discardableResult
    static func validate(_ value: String, role: String) throws -> String {
        func refuse(_ reason: String) -> FolderSyncError {
            FolderSyncError(.invalidIdentifier, "\(role) \(String(reflecting: value.prefix(64).description)) \(reason)")
        }
        if value.isEmpty { throw refuse("is empty") }
        if value.utf8.count > maximumByteCount { throw refuse("is longer than \(maximumByteCount) bytes") }
        if value.hasPrefix(".") { throw refuse("starts with a dot") }
        if value.hasSuffix(" ") || value.hasSuffix(".") { throw refuse("ends with a space or a dot") }
        for scalar in value.unicodeScalars where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
            throw refuse("contains the control character U+\(String(scalar.value, radix: 16, uppercase: true))")
        }
        if let bad = value.first(where: { forbidden.contains($0) }) {
            throw refuse("contains the character \(String(reflecting: String(bad)))")
        }
        return value
    }
}
