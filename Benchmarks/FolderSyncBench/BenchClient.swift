import Foundation

/// A client of a scenario, run as worker processes: its store file, its identity and the shared remote.
struct BenchClient: Sendable {
    let name: String
    let db: URL
    let remote: String
    let document: String
    let schema: BenchSchema
    /// The encryption password the client answers, or nil for an application in clear.
    let password: String?
    /// Whether its store is a `DatabasePool` (scenario 12), not a queue.
    let pool: Bool

    init(
        _ name: String, in folder: URL, remote: String, document: String, schema: BenchSchema, password: String? = nil,
        pool: Bool = false
    ) {
        self.name = name
        self.db = folder.appendingPathComponent("\(name).sqlite")
        self.remote = remote
        self.document = document
        self.schema = schema
        self.password = password
        self.pool = pool
    }

    /// Runs `steps` in one process (see ``Worker``) with the scenario's manual whole-store policy.
    func run(_ steps: String, rows: Int = 0, updatedValues: Int = 0) throws -> WorkerOutput {
        try ChildProcess.worker(
            [
                "client", "--db", db.path, "--remote", remote, "--client", name, "--document", document,
                "--schema", schema.rawValue, "--rows", "\(rows)", "--updated-values", "\(updatedValues)",
                "--manual-policy", "--steps", steps,
            ] + (password.map { ["--password", $0] } ?? [])
                + (pool ? ["--pool"] : []))
    }
}
