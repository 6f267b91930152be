import FolderSync
import FolderSyncTesting
import Foundation
import GRDB
import TestProcesses

/// The kill torture: rounds of client processes writing and syncing on one folder, each killed with SIGKILL at
/// a seeded random point, while an operator's `foldersync vacuum` runs beside them (vacuums from several processes and
/// the tool at once), then a settle (every client syncs twice, in turn, unharmed) and the checks.
///
/// Some rounds play during an outage: the folder is moved away, or replaced by an empty folder (an unmounted share's
/// mount point). Clients keep writing; their syncs, transfers and vacuums must say `remoteUnavailable`, and nothing may
/// be written where the folder was. The folder comes back for the next round.
///
/// First, a document's creation is killed at each of its steps in turn, each on a folder of its own
/// (``killCreationAtEveryStep()``), with the same checks.
///
/// Checks: every committed write is present or superseded (own rows hold exactly their last committed value,
/// shared rows one of their committed values, no row of an aborted transaction appears), every replica holds
/// the same rows, and `foldersync doctor` finds the folder healthy. Prints the figures; exits 1 on any failure.
struct Torture {
    var kills: Int
    var clients: Int
    var seed: UInt64
    var directory: URL
    var stepsPerRun = 12

    var root: URL { directory.appendingPathComponent("remote") }
    var executable: URL { URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath() }
    var names: [String] { (0..<clients).map { "client-\(Character(UnicodeScalar(UInt8(65 + $0))))" } }

    struct Outcome {
        var killed: String?
        var events: Int?
        var error: String?
    }

    /// How the folder is away during an outage round.
    enum Outage: String, CaseIterable {
        case movedAway = "moved away"
        case emptyFolder = "an empty folder"
    }

    /// Starts one client process, which runs to its end (a kill, or its last step). `outage`: the folder is away.
    func start(_ client: String, seed: UInt64, killAfter: Int?, steps: Int, settle: Bool, outage: Bool = false) throws
        -> Subprocess
    {
        try Subprocess.start(
            executable.path,
            [
                "torture-client", "--root", root.path, "--client", client, "--dir", directory.path,
                "--seed", String(seed), "--steps", String(steps),
                "--kill-after", killAfter.map(String.init) ?? "none", "--settle", settle ? "yes" : "no",
                "--outage", outage ? "yes" : "no",
            ])
    }

    var awayFolder: URL { directory.appendingPathComponent("remote-away") }

    /// Takes the folder away for a round.
    func begin(_ outage: Outage) throws {
        try FileManager.default.moveItem(at: root, to: awayFolder)
        if outage == .emptyFolder {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
        }
    }

    /// Brings the folder back; says what a client wrote where the folder was, if anything.
    func end(_ outage: Outage) throws -> String? {
        var written: String?
        if outage == .emptyFolder {
            let contents = try FileManager.default.contentsOfDirectory(atPath: root.path)
            if !contents.isEmpty { written = "wrote into the empty folder: \(contents.sorted())" }
            try FileManager.default.removeItem(at: root)
        } else if FileManager.default.fileExists(atPath: root.path) {
            written =
                "created the moved folder again: \(try FileManager.default.contentsOfDirectory(atPath: root.path).sorted())"
            try FileManager.default.removeItem(at: root)
        }
        try FileManager.default.moveItem(at: awayFolder, to: root)
        return written
    }

    /// Reads what a client said and waits for its end. Whether it died at the kill point is read from its last
    /// words ("crashing at …"), which name the point, not from its exit status.
    func finish(_ process: Subprocess) -> Outcome {
        let result = process.finish()
        if let line = result.output.split(separator: "\n").first(where: { $0.hasPrefix("crashing at ") }) {
            return Outcome(killed: String(line.dropFirst("crashing at ".count)))
        }
        if result.status == 0, let line = result.output.split(separator: "\n").last(where: { $0.hasPrefix("events ") })
        {
            return Outcome(events: Int(line.dropFirst("events ".count)))
        }
        return Outcome(
            error: "status \(result.status): \(result.errors.trimmingCharacters(in: .whitespacesAndNewlines))")
    }

    func run() throws -> Bool {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        var random = SeededGenerator(seed: seed)
        var killed = 0
        var runs = 0
        var completed = 0
        var round = 0
        var byPoint: [String: Int] = [:]
        var byAction: [String: Int] = [:]
        var errors: [String] = []
        var eventsPerRun = 150  // learnt from runs that finish, so kill points spread over whole runs
        var toolVacuums = 0
        var outages = 0
        let started = Date()
        let creation = try killCreationAtEveryStep()
        errors += creation.errors
        while killed < kills {
            round += 1
            // After the first round (every client registered), one round in six plays with the folder away.
            let outage = round > 1 && random.int(0...5) == 0 ? random.pick(Outage.allCases) : nil
            if let outage {
                try begin(outage)
                outages += 1
            }
            let processes = try names.map { name in
                try start(
                    name, seed: random.next(), killAfter: random.int(0...eventsPerRun), steps: stepsPerRun,
                    settle: false,
                    outage: outage != nil)
            }
            // The operator's vacuum, from cron, at the same time as the clients' own.
            let vacuum = try Subprocess.start(
                foldersync, ["vacuum", "--remote", root.path, "--app", TortureClient.application])
            for (name, outcome) in zip(names, processes.map(finish)) {
                runs += 1
                if let point = outcome.killed {
                    killed += 1
                    let action = point.firstIndex(of: "[").map { String(point[$0...].dropFirst().dropLast()) } ?? "-"
                    let name = point.firstIndex(of: "[").map { String(point[..<$0].dropLast()) } ?? point
                    byPoint[name, default: 0] += 1
                    byAction[action, default: 0] += 1
                } else if let events = outcome.events {
                    completed += 1
                    eventsPerRun = max(eventsPerRun, events)
                } else {
                    errors.append("round \(round) \(name): \(outcome.error ?? "?")")
                }
            }
            // Exit 2 is a removal that raced another vacuum or a client (the next vacuum tries again); anything else is
            // a failure.
            let vacuumed = vacuum.finish()
            toolVacuums += 1
            if let outage {
                // The tool finds no application there, and says so: a failure, and nothing written.
                if vacuumed.status == 0 {
                    errors.append("round \(round) foldersync vacuum succeeded with the folder \(outage.rawValue)")
                }
                if let written = try end(outage) {
                    errors.append("round \(round), folder \(outage.rawValue): \(written)")
                }
            } else if vacuumed.status != 0 && vacuumed.status != 2 {
                errors.append("round \(round) foldersync vacuum: status \(vacuumed.status): \(vacuumed.errors)")
            }
        }
        // Settle: every client syncs twice, in turn, with no kill and no new write.
        for _ in 0..<2 {
            for name in names {
                let outcome = finish(try start(name, seed: 0, killAfter: nil, steps: 1, settle: true))
                if let error = outcome.error { errors.append("settle \(name): \(error)") }
            }
        }
        let check = try verify()
        let doctor = runDoctor()
        let seconds = Int(Date().timeIntervalSince(started).rounded())
        print(
            """
            kill torture: seed \(seed), \(clients) clients, \(round) rounds (\(outages) with the folder away), \(runs) client runs, \(toolVacuums) vacuums by the tool, \(seconds) s
            kills: \(killed + creation.kills) (runs that finished before their kill point: \(completed))
            document creation killed at each of its \(creation.kills) steps, then rejoined by its creator and a second \
            client: lost writes \(creation.lost), phantom writes \(creation.phantoms), divergent replicas \(creation.divergent), \
            unhealthy folders \(creation.unhealthy)
            creation kills by point: \(creation.byPoint.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            kills by action: \(byAction.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            kills by point: \(byPoint.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            committed transactions: \(check.committed), aborted by a kill before commit: \(check.aborted)
            lost writes: \(check.lost.count), phantom writes: \(check.phantoms.count), divergent replicas: \(check.divergent), client errors: \(errors.count)
            doctor: \(doctor.healthy ? "healthy" : "unhealthy")
            """)
        for line in (errors + check.lost + check.phantoms).prefix(20) { print("  " + line) }
        if !doctor.healthy { print(doctor.output) }
        return errors.isEmpty && check.lost.isEmpty && check.phantoms.isEmpty && check.divergent == 0 && doctor.healthy
    }

    struct Check {
        var lost: [String] = []
        var phantoms: [String] = []
        var divergent = 0
        var committed = 0
        var aborted = 0
    }

    func verify() throws -> Check {
        var check = Check()
        var replicas: [String: [String: String]] = [:]
        for name in names {
            let queue = try DatabaseQueue(path: directory.appendingPathComponent("\(name).sqlite").path)
            replicas[name] = try queue.read { db in
                Dictionary(
                    uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, value FROM items").map {
                        ($0[0], $0[1])
                    })
            }
        }
        var shared: [String: Set<String>] = [:]
        for name in names {
            let journal = try TortureJournal(client: name, url: directory.appendingPathComponent("\(name).journal"))
            guard journal.open == nil else {
                throw TortureFailure("\(name)'s journal has an open transaction after the settle")
            }
            check.committed += journal.committed
            check.aborted += journal.transactions - journal.committed
            shared.merge(journal.shared) { $0.union($1) }
            for (replica, rows) in replicas {
                for (row, expected) in journal.own where rows[row] != expected {
                    check.lost.append(
                        "\(replica): \(row) is \(rows[row] ?? "absent"), committed \(expected ?? "deleted") by \(name)")
                }
                for row in rows.keys where row.hasPrefix(name + "-") && journal.own[row] == nil {
                    check.phantoms.append("\(replica): \(row) = \(rows[row]!) was never committed")
                }
            }
        }
        for (replica, rows) in replicas {
            for (row, value) in rows
            where row.hasPrefix(TortureJournal.sharedPrefix) && shared[row]?.contains(value) != true {
                check.phantoms.append("\(replica): \(row) = \(value) was never committed")
            }
            for row in shared.keys where rows[row] == nil {
                check.lost.append("\(replica): \(row) is absent, though committed")
            }
        }
        let first = replicas[names[0]]
        check.divergent = names.dropFirst().filter { replicas[$0] != first }.count
        return check
    }

    var foldersync: String { executable.deletingLastPathComponent().appendingPathComponent("foldersync").path }

    func runDoctor() -> (healthy: Bool, output: String) {
        do {
            let result = try Subprocess.run(
                foldersync, ["doctor", "--remote", root.path, "--app", TortureClient.application],
                standardError: .sameAsOutput)
            return (result.status == 0, result.output)
        } catch {
            return (false, "cannot run foldersync: \(error)")
        }
    }
}
