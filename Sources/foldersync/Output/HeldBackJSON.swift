@_spi(Tooling) import FolderSync

/// `{"changeSets", "bytes", "exclusiveChangeSets", "exclusiveBytes"}`: what one client's acknowledgement keeps from
/// vacuum; the exclusive counts are what deleting or expiring that client alone would free.
struct HeldBackJSON: Encodable {
    let changeSets: Int
    let bytes: Int64
    let exclusiveChangeSets: Int
    let exclusiveBytes: Int64

    init(_ heldBack: VacuumReport.HeldBack) {
        changeSets = heldBack.changeSetCount
        bytes = heldBack.byteCount
        exclusiveChangeSets = heldBack.exclusiveChangeSetCount
        exclusiveBytes = heldBack.exclusiveByteCount
    }

    /// `3 change sets, 1.2 KiB (2, 812 B by it alone)`.
    static func text(_ heldBack: VacuumReport.HeldBack) -> String {
        guard heldBack.isHoldingBack else { return "no" }
        var text = "\(Formatting.count(heldBack.changeSetCount, "change set")), \(Formatting.bytes(heldBack.byteCount))"
        if heldBack.exclusiveChangeSetCount != heldBack.changeSetCount {
            text +=
                " (\(heldBack.exclusiveChangeSetCount), \(Formatting.bytes(heldBack.exclusiveByteCount)) by it alone)"
        }
        return text
    }
}
