/// A path inside the shared tree, relative to its root, made of validated components.
///
/// Paths are built by ``RemoteLayout`` and by listing; a component can never
/// be `..`, contain a separator or be empty, so a `RemotePath` cannot point
/// outside the tree whatever a backend does with it.
public struct RemotePath: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The components, from the root down.
    public let components: [String]

    /// The root of the shared tree.
    public static let root = RemotePath(trusted: [])

    init(trusted components: [String]) { self.components = components }

    /// Parses a `/`-separated relative path, refusing anything that could escape the tree.
    public init(_ string: String) throws {
        let parts = string.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        for part in parts {
            if part == "." || part == ".." || part.contains("\0") {
                throw FolderSyncError(
                    .invalidIdentifier, "path component \(String(reflecting: part)) is not allowed", path: string)
            }
        }
        self.components = parts
    }

    /// This path with one more component. The component must be a single, safe name.
    public func appending(_ component: String) -> RemotePath {
        // The slash among the bytes (a slash and a combining mark are one Character, and a separator all the same); a
        // character-level search cost two thousand instructions a component.
        precondition(
            !component.isEmpty && !component.utf8.contains(UInt8(ascii: "/")) && component != "." && component != "..",
            "unsafe path component \(component)")
        return RemotePath(trusted: components + [component])
    }

    /// The last component, or the empty string for the root.
    public var name: String { components.last ?? "" }

    /// The enclosing folder; the root is its own parent.
    public var parent: RemotePath { RemotePath(trusted: Array(components.dropLast())) }

    /// Whether this is the root of the shared folder (no components).
    public var isRoot: Bool { components.isEmpty }

    /// Whether `self` is `other` or lies inside it.
    public func hasPrefix(_ other: RemotePath) -> Bool {
        components.starts(with: other.components)
    }

    /// The `/`-separated form, without a leading slash.
    public var description: String { components.joined(separator: "/") }

    public static func < (lhs: RemotePath, rhs: RemotePath) -> Bool {
        lhs.components.lexicographicallyPrecedes(rhs.components)
    }
}
