public import Foundation
public import Logging

/// What FolderSync takes from the outside world: time, randomness for identifiers, and a logger.
///
/// Tests and the simulator inject deterministic ones; apps use ``live``.
public struct SyncEnvironment: Sendable {
    /// The wall clock. Only ever used as a hint for hybrid logical clocks and for display, never to order changes.
    public var now: @Sendable () -> Date
    /// Makes a new unique identifier (client, document, change set, integrity key).
    public var makeIdentifier: @Sendable () -> String
    /// Where FolderSync logs. It never logs passwords or credentials.
    public var logger: Logger

    /// An environment of your own, for deterministic tests.
    /// - Parameters:
    ///   - now: The wall clock.
    ///   - makeIdentifier: Returns a new unique identifier at each call, safe as a file name (UUID strings are).
    ///   - logger: Where FolderSync logs.
    public init(now: @escaping @Sendable () -> Date, makeIdentifier: @escaping @Sendable () -> String, logger: Logger) {
        self.now = now
        self.makeIdentifier = makeIdentifier
        self.logger = logger
    }

    /// The system clock, random UUIDs, and a logger labelled `FolderSync`.
    public static var live: SyncEnvironment {
        SyncEnvironment(now: { Date() }, makeIdentifier: { UUID().uuidString }, logger: Logger(label: "FolderSync"))
    }
}
