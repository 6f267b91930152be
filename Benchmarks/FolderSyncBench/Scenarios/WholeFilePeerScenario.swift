import Foundation

/// Scenario 5: one changed row in the big document, FolderSync against syncing the whole SQLite file.
///
/// FolderSync moves A's change set and recent-sync marker and B reads them; the peers bring B's copy of
/// the file up to date: `rsync` with its delta algorithm (`--no-whole-file`; `--ignore-times`, since a change
/// within the second of the copy keeps size and time alike; bytes are what crosses its
/// pipe, from `--stats`) and `unison` between two local folders (which hashes both copies, then copies a
/// changed file whole).
struct WholeFilePeerScenario: Scenario {
    let number = "5"
    let title = "Peer: whole-file sync of the document"

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        var result = ScenarioResult()
        let big: BigDocument
        if let existing = context.bigDocument {
            big = existing
        } else {
            big = try BigDocument.make(context)
            _ = try big.b.run("sync:bootstrap")
            context.bigDocument = big
        }
        let peers = big.root.appendingPathComponent("peers")
        try? FileManager.default.removeItem(at: peers)
        try FileManager.default.createDirectory(at: peers, withIntermediateDirectories: true)
        let rsyncCopy = peers.appendingPathComponent("rsync-copy.sqlite")
        let unisonA = peers.appendingPathComponent("unison-a")
        let unisonB = peers.appendingPathComponent("unison-b")
        let useUnison = Floors.has("unison")
        context.log("peers: copies of the document before the change")
        try ChildProcess.mustRun(["cp", big.a.db.path, rsyncCopy.path])
        if useUnison {
            for folder in [unisonA, unisonB] {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                // `-p`: the same modification time in both folders; unison (`-times`) otherwise finds a conflict of
                // properties on its first run when copying the document takes more than a second (5,000,000 rows).
                try ChildProcess.mustRun(["cp", "-p", big.a.db.path, folder.appendingPathComponent("doc.sqlite").path])
            }
            setenv("UNISON", peers.appendingPathComponent("unison-state").path, 1)
            try ChildProcess.mustRun(unisonCommand(unisonA, unisonB), quietStandardError: true)
        }

        try Floors.flushWrites()  // the copies above would otherwise be written back during the timed syncs
        context.log("A changes one row and syncs, B syncs")
        let writer = try big.a.run("change-one,sync:publish")
        let reader = try big.b.run("sync:apply")
        guard reader["apply.changesApplied"] == 1 else {
            throw BenchError("B applied \(Int(reader["apply.changesApplied"])) changes, expected 1")
        }
        let seconds = writer["publish.seconds"] + reader["apply.seconds"]
        let bytes = writer["publish.bytesSent"] + reader["apply.bytesReceived"]
        result.note = "document of \(String(format: "%.0f", Double(Floors.fileSize(big.a.db)) / 1_048_576)) MiB"
        result.figure("FolderSync: A's sync + B's sync", seconds * 1000, "ms")
        result.figure("FolderSync: bytes sent by A + received by B", bytes, "B")

        try Floors.flushWrites()
        context.log("rsync of the file")
        let rsync = try ChildProcess.mustRun([
            "rsync", "--no-whole-file", "--inplace", "--ignore-times", "--stats", big.a.db.path, rsyncCopy.path,
        ])
        let rsyncBytes = statsBytes(rsync.output)
        guard try ChildProcess.run(["cmp", "-s", big.a.db.path, rsyncCopy.path]).status == 0 else {
            throw BenchError("rsync did not bring the copy up to date")
        }
        result.figure("rsync --no-whole-file", rsync.seconds * 1000, "ms")
        result.figure("rsync: bytes sent + received", rsyncBytes, "B")
        result.check("rsync bytes / FolderSync bytes", rsyncBytes / bytes, atLeast: 100)
        // round two raised 20× (issue 23)
        result.check("rsync time / FolderSync time", rsync.seconds / seconds, atLeast: 100)

        if useUnison {
            context.log("unison of the folder")
            try ChildProcess.mustRun(["cp", big.a.db.path, unisonA.appendingPathComponent("doc.sqlite").path])
            let unison = try ChildProcess.mustRun(unisonCommand(unisonA, unisonB), quietStandardError: true)
            guard
                try ChildProcess.run(["cmp", "-s", big.a.db.path, unisonB.appendingPathComponent("doc.sqlite").path])
                    .status == 0
            else {
                throw BenchError("unison did not bring the copy up to date")
            }
            let fileBytes = Double(Floors.fileSize(big.a.db))
            result.figure("unison (local folders)", unison.seconds * 1000, "ms")
            result.figure("unison: bytes copied (the whole file)", fileBytes, "B")
            result.check("unison bytes / FolderSync bytes", fileBytes / bytes, atLeast: 100)
            result.check("unison time / FolderSync time", unison.seconds / seconds, atLeast: 20)
        } else {
            result.note = (result.note ?? "") + "; unison not installed (scripts/setup --bench installs it)"
        }
        return result
    }

    private func unisonCommand(_ a: URL, _ b: URL) -> [String] {
        // `-fastcheck false`: unison 2.52's check by inode and time missed a changed file here (a cp over it).
        [
            "unison", a.path, b.path, "-batch", "-auto", "-silent", "-times", "-fastcheck", "false",
            "-confirmbigdel=false",
        ]
    }

    /// "Total bytes sent: 1,234" plus "Total bytes received: 56" from `rsync --stats`.
    private func statsBytes(_ output: String) -> Double {
        output.split(separator: "\n").reduce(0) { total, line in
            guard line.hasPrefix("Total bytes sent:") || line.hasPrefix("Total bytes received:") else { return total }
            let digits = line.split(separator: ":").last?.filter(\.isNumber) ?? ""
            return total + (Double(digits) ?? 0)
        }
    }
}
