@_spi(ModelAdapter) public import FolderSync

/// Which faults a ``FaultyFileSystem`` injects, and how often (percent of the requests they can hit).
///
/// The presets in ``all`` are the mixes the simulator runs its seeds under; clocks a day off on some clients
/// are part of every simulation already.
public struct FaultMix: Sendable, Hashable, CustomStringConvertible {
    /// The mix's name in test output and seed replays.
    public var name: String
    /// Writes and uploads that fail half-way: half the bytes are left under a temporary name, and the request throws.
    public var halfWrites = 0
    /// Listings that lag behind writes (NFS attribute caching, eventually consistent stores): a file written in
    /// the last ``lagRequests`` requests is left out.
    public var laggingListings = 0
    /// How many requests a write stays out of lagging listings.
    public var lagRequests = 40
    /// Reads and downloads of a file that exists, answered as if it had vanished.
    public var vanishingReads = 0
    /// After a write, upload or move, a copy named `name (1).ext` appears next to the file, as desktop sync agents
    /// make.
    public var duplicateCopies = 0
    /// Requests refused with these errors (`remoteFull` for ENOSPC, `permissionDenied` for EACCES,
    /// `remoteIOFailed` for EIO), each at this rate.
    public var errors: [FolderSyncError.Code: Int] = [:]

    /// A mix named `name` that injects nothing until its rates are set.
    public init(name: String) { self.name = name }

    public var description: String { name }

    /// One mix per fault, then all of them at once.
    public static let all: [FaultMix] = {
        var halfWrites = FaultMix(name: "half-written uploads")
        halfWrites.halfWrites = 10
        var lagging = FaultMix(name: "lagging listings")
        lagging.laggingListings = 50
        var vanishing = FaultMix(name: "vanishing files")
        vanishing.vanishingReads = 10
        var duplicates = FaultMix(name: "name (1) copies")
        duplicates.duplicateCopies = 30
        var full = FaultMix(name: "ENOSPC")
        full.errors = [.remoteFull: 5]
        var denied = FaultMix(name: "EACCES")
        denied.errors = [.permissionDenied: 5]
        var failing = FaultMix(name: "EIO")
        failing.errors = [.remoteIOFailed: 5]
        var everything = FaultMix(name: "everything")
        everything.halfWrites = 5
        everything.laggingListings = 30
        everything.vanishingReads = 5
        everything.duplicateCopies = 10
        everything.errors = [.remoteFull: 2, .permissionDenied: 2, .remoteIOFailed: 2]
        return [halfWrites, lagging, vanishing, duplicates, full, denied, failing, everything]
    }()

    /// The error codes a request can fail with under this mix.
    var injectedCodes: Set<FolderSyncError.Code> {
        var codes = Set(errors.keys)
        if halfWrites > 0 { codes.insert(.remoteIOFailed) }
        if vanishingReads > 0 { codes.insert(.remoteItemNotFound) }
        return codes
    }
}
