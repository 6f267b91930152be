/// An attachment a row references that the remote does not have: deleted there, or its uploader never
/// finished. Reported by the sync that meets it; the sync itself goes on.
public struct GoneAttachment: Hashable, Sendable {
    /// The row and column that reference it.
    public var key: ColumnKey
    /// The missing attachment: its SHA-256, size and app metadata, as the row holds it.
    public var reference: AttachmentReference
    /// Where it should be on the remote.
    public var path: String
}
