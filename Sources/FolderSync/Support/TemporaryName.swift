/// Names for files being written, so that every tool recognises a half-written temporary.
///
/// A temporary lives in the folder of the file it becomes, under
/// `.foldersync-tmp-<random>-<final name>`. Sync ignores such names; `doctor`
/// reports and removes old ones.
public enum TemporaryName {
    /// The prefix of every temporary file name.
    public static let prefix = ".foldersync-tmp-"

    /// A new, random temporary name for a file that will be renamed to `finalName` (truncated to 250 bytes).
    public static func make(for finalName: String) -> String {
        let random = UInt64.random(in: 0...UInt64.max)
        let hex = String(random, radix: 16)
        let name = prefix + String(repeating: "0", count: 16 - hex.count) + hex + "-" + finalName
        return String(decoding: name.utf8.prefix(250), as: UTF8.self)
    }

    /// Whether `name` is a temporary's name, which sync ignores.
    public static func isTemporary(_ name: String) -> Bool { name.hasPrefix(prefix) }

    /// The name a temporary made by ``make(for:)`` becomes once published, or `nil` for any other name.
    static func finalName(of name: String) -> String? {
        guard isTemporary(name) else { return nil }
        let rest = name.dropFirst(prefix.count)
        guard rest.count > 17, rest.dropFirst(16).first == "-" else { return nil }
        return String(rest.dropFirst(17))
    }
}
