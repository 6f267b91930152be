public import Foundation

/// One removal a removed area keeps: who made it, how and when, and what it holds (``DocumentMaintenance/removals()``).
public struct RemovalListing: Sendable, Hashable {
    /// `Removed/<day>/<removal>/`, in the document's removed area or the application's.
    public var folder: RemotePath
    /// Its record; `nil` when missing or unreadable (a removal interrupted before its record was written cannot be:
    /// the record is written first; a damaged one can).
    public var record: RemovalRecord?
    /// When it was made, by the folder's clock (its record's date as the folder records it): the grace period runs
    /// from here. `nil` when the folder records no dates (then no vacuum purges it).
    public var date: Date?
    /// What it holds.
    public var files: [RemovedFile]

    /// The bytes of its files.
    public var byteCount: Int64 { files.reduce(0) { $0 + $1.byteCount } }
}

/// A file a removal holds.
public struct RemovedFile: Sendable, Hashable {
    /// Where it is in the removed area.
    public var path: RemotePath
    /// Where it was: where a restore puts it back.
    public var originalPath: RemotePath
    /// Its size.
    public var byteCount: Int64
}

/// What ``DocumentMaintenance/restoreRemoved(client:since:)`` put back, and what it left.
public struct RemovalRestoreReport: Sendable, Hashable {
    /// Files put back, by the path they are at again.
    public var restored: [RemotePath] = []
    /// Files left in the removed area, with why.
    public var skipped: [VacuumReport.Skipped] = []
}
