@_spi(ModelAdapter) import FolderSync
import Foundation

/// The outage steps (``ConvergenceSimulator/Configuration/outages``): the shared folder goes away for a stretch of
/// steps (an empty mount point, the folder moved away, a server that does not answer) while clients keep writing,
/// syncing and relaunching, then comes back.
///
/// While it is away, every write and every relaunch must work, every sync must say
/// ``FolderSyncError/Code/remoteUnavailable`` and leave the store and its backups as they were, and nothing may be
/// written into the folder. No outage is a reset: when the folder is back, every replica converges with no write lost.
extension SimulationRun {
    /// Starts an outage now and then, and ends the current one when its stretch is over.
    func beginOrEndOutage() throws {
        guard let outages else { return }
        if let end = outageEnd {
            guard step >= end else { return }
            try endOutage()
        } else if random.chance(4) {
            let outage = random.pick(OutageFileSystem.Outage.allCases)!
            let length = random.int(3...30)
            outages.outage = outage
            outageEnd = step + length
            summary.outages += 1
            log("the shared folder goes away (\(outage.rawValue)) for \(length) steps")
        }
    }

    /// Brings the folder back; fails the run if anything was written into it while it was away.
    func endOutage() throws {
        guard let outages, outageEnd != nil else { return }
        outages.outage = nil
        outageEnd = nil
        log("the shared folder is back")
        if let write = outages.writesWhileAway.first {
            throw SimulationFailure.Detail("a client wrote into the shared folder while it was away: \(write)")
        }
    }

    /// One step while the folder is away: writes, syncs and relaunches, as an app away from its share goes on.
    func outageStep(_ roll: Int, _ client: SimulatedClient) async throws {
        switch roll {
        case 0..<55: try write(on: client)
        case 55..<90: try await syncWhileAway(client)
        default: try await restart(client)
        }
    }

    /// A sync while the folder is away: `remoteUnavailable` (or the reset the client is stopped on), with the
    /// store and its backups as they were.
    private func syncWhileAway(_ client: SimulatedClient) async throws {
        let before = try localState(client)
        let backups = try backupCount(client)
        do {
            _ = try await client.synchronize()
            throw SimulationFailure.Detail("\(client.name) synced while the shared folder was away")
        } catch let error as FolderSyncError
            where error.code == .remoteUnavailable
            || (client.reset != nil && error.isReset)
        {
            guard try localState(client) == before else {
                throw SimulationFailure.Detail("\(client.name)'s sync while the folder was away changed its store")
            }
            guard try backupCount(client) == backups else {
                throw SimulationFailure.Detail("\(client.name)'s sync while the folder was away made a backup")
            }
            summary.unavailableSyncs += 1
            log("\(client.name) syncs: \(error.code), nothing changed")
        } catch let failure as SimulationFailure.Detail {
            throw failure
        } catch {
            throw SimulationFailure.Detail(
                "\(client.name)'s sync while the folder was away failed with \(error), not remoteUnavailable")
        }
    }

    private func backupCount(_ client: SimulatedClient) throws -> Int {
        let backups = LocalLayout(helperDirectory: client.helperFolder).backupsDirectory
        guard FileManager.default.fileExists(atPath: backups.path) else { return 0 }
        return try FileManager.default.contentsOfDirectory(atPath: backups.path).count
    }
}

/// What the simulated user knows of the shared folder, for the clients'
/// ``ApplicationSyncManager/remoteReplacementHandler``: the application's folder was wiped (the user replaced the
/// share), and the share is there now.
final class ReplacedRemoteAnswer: Sendable {
    private let wiped = Locked(false)
    private let outages: OutageFileSystem?

    init(outages: OutageFileSystem?) { self.outages = outages }

    /// Called when the application's whole folder is wiped.
    func applicationFolderWiped() { wiped.withLock { $0 = true } }

    /// Whether a client that finds the application's folder gone is told the remote was replaced.
    var remoteWasReplaced: Bool { wiped.current && outages?.outage == nil }
}
