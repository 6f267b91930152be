import Foundation

/// Scenario 6: scenario 1's bulk sync through a local folder, once in clear and once encrypted, in the same run.
///
/// The encrypted clients answer a password; the key file and PBKDF2 belong to registration, which is not timed.
/// As in scenario 1, the time is A's sync plus B's sync. Target: encrypted ≤ 1.25× clear.
struct EncryptionOverheadScenario: Scenario {
    let number = "6"
    let title = "Encryption overhead"

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        var result = ScenarioResult()
        result.note =
            "scenario 1 (\(context.sizes.bulkRows) rows × 10 columns, then \(context.sizes.bulkUpdatedValues) column values updated) "
            + "in clear, then encrypted"
        var endToEnd: [Double] = []
        for password in [nil, "bench password"] as [String?] {
            let label = password == nil ? "clear" : "encrypted"
            let root = try context.folder("encryption-\(label)")
            let remote = root.appendingPathComponent("remote")
            try FileManager.default.createDirectory(at: remote, withIntermediateDirectories: true)
            context.log("\(label):")
            let (writer, reader) = try BulkSyncScenario.endToEnd(
                context, root: root, remote: remote.path,
                document: "bulk-\(UUID().uuidString.prefix(8))", password: password)
            let sealed = try Self.sealedFiles(under: remote)
            guard (sealed > 0) == (password != nil) else {
                throw BenchError("the \(label) remote holds \(sealed) sealed files")
            }
            endToEnd.append(writer["publish.seconds"] + reader["apply.seconds"])
            result.figure("\(label): A's sync (stage and publish)", writer["publish.seconds"], "s")
            result.figure("\(label): B's sync (download, verify, apply)", reader["apply.seconds"], "s")
            result.figure("\(label): end to end", endToEnd.last!, "s")
            result.figure("\(label): bytes published", writer["publish.bytesSent"], "B")
            result.figure("\(label): sealed files on the remote", Double(sealed), "")
        }
        result.check("encrypted / clear end to end", endToEnd[1] / endToEnd[0], atMost: 1.25)
        return result
    }

    /// The files under `folder` that begin with the sealed-file magic `FSYNCENC`.
    static func sealedFiles(under folder: URL) throws -> Int {
        let magic = Data("FSYNCENC".utf8)
        var count = 0
        for case let url as URL in FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
            ?? .init()
        {
            if (try? FileHandle(forReadingFrom: url)).flatMap({ try? $0.read(upToCount: magic.count) }) == magic {
                count += 1
            }
        }
        return count
    }
}
