import FolderSync
import Foundation
import GRDB

/// What the same work costs without FolderSync: plain SQLite and plain file transfer.
enum Floors {
    /// Inserts the final rows of `items` (or `docs`) into a fresh SQLite file in one transaction with one prepared
    /// statement.
    static func plainInsertSeconds(schema: BenchSchema, rows: Int, version: Int, at url: URL) throws -> Double {
        try? FileManager.default.removeItem(at: url)
        let started = ContinuousClock.now
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try schema.createPlain(db)
            switch schema {
            case .items:
                let columns = BenchSchema.itemColumns
                let insert = try db.makeStatement(
                    sql:
                        "INSERT INTO items(id, \(columns.joined(separator: ", "))) VALUES (?\(String(repeating: ", ?", count: columns.count)))"
                )
                for index in 0..<rows {
                    try insert.execute(
                        arguments: StatementArguments(
                            [BenchSchema.rowID(index)]
                                + columns.indices.map { BenchSchema.itemValue(index, column: $0, version: version) }))
                }
            case .docs:
                let insert = try db.makeStatement(sql: "INSERT INTO docs(id, body) VALUES (?, ?)")
                for index in 0..<rows {
                    try insert.execute(arguments: [BenchSchema.rowID(index), BenchSchema.docBody(index)])
                }
            case .notes:
                let insert = try db.makeStatement(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)")
                for index in 0..<rows {
                    try insert.execute(arguments: [
                        BenchSchema.rowID(index), BenchSchema.noteTitle(index), BenchSchema.noteBody(index),
                    ])
                }
            }
        }
        try queue.close()
        return (ContinuousClock.now - started).seconds
    }

    /// Downloads every file of a remote folder into a local one (untimed preparation of a transfer floor).
    static func fetch(_ folder: RemotePath, from remote: any RemoteFileSystem, into local: URL) async throws -> [URL] {
        try FileManager.default.createDirectory(at: local, withIntermediateDirectories: true)
        var files: [URL] = []
        for item in try await remote.contentsOfDirectory(at: folder)
        where item.kind == .file && !TemporaryName.isTemporary(item.name) {
            let url = local.appendingPathComponent(item.name)
            try await remote.download(folder.appending(item.name), toLocalFile: url)
            files.append(url)
        }
        return files
    }

    /// `cp` of a file or a folder, as one process: its wall time.
    /// Writes every dirty page of the machine to disk (`sync`), so that a timed step does not pay for the write-back
    /// of files an earlier step wrote: on ext4 an fsync waits for the journal commit, which carries the data of
    /// every file written since, so a one-row sync right after copying a 1 GB document took 100 ms more.
    static func flushWrites() throws {
        try ChildProcess.mustRun(["sync"])
    }

    /// Copies `url` to a scratch file beside it and removes the copy, untimed, so that the step timed right after,
    /// which writes about as much into the page cache, finds that much memory the host has backed.
    ///
    /// This machine is a Firecracker VM whose kernel reports free memory to the host (`page_reporting`), which takes
    /// it back: the next touch of such a page costs a fault on the host. Writing 1.3 GB into the page cache took
    /// 0.4 s or 3.4 s by how much of the free memory was still backed (the journal: "Scenario 3: where the spread
    /// came from"). The copy pays those faults; the memory its removal frees is reported only after a delay, so the
    /// step timed at once takes it. A process of its own: memory touched by the bench itself would become every
    /// worker's peak (`posix_spawn` shares it until `exec`).
    static func backPageCache(like url: URL) throws {
        let scratch = url.deletingLastPathComponent().appendingPathComponent(".backing-" + url.lastPathComponent)
        try ChildProcess.mustRun(["cp", url.path, scratch.path])
        try FileManager.default.removeItem(at: scratch)
    }

    /// Reads `url` once, so that its pages are in the page cache for what reads it next.
    static func readThrough(_ url: URL) throws {
        let file = try FileHandle(forReadingFrom: url)
        defer { try? file.close() }
        while let piece = try file.read(upToCount: 4 << 20), !piece.isEmpty {}
    }

    static func copySeconds(_ source: URL, to destination: URL) throws -> Double {
        try? FileManager.default.removeItem(at: destination)
        return try ChildProcess.mustRun(["cp", "-r", source.path, destination.path]).seconds
    }

    /// One `curl` that PUTs every file to `baseURL` (a WebDAV folder URL ending in `/`), on one connection.
    static func curlPutSeconds(_ files: [URL], to baseURL: String) throws -> Double {
        let (arguments, base) = try curl(baseURL)
        return try ChildProcess.mustRun(arguments + files.flatMap { ["-T", $0.path, base + $0.lastPathComponent] })
            .seconds
    }

    /// One `curl` that runs `requests` (each a file to PUT, or `nil` to DELETE, and the URL relative to `baseURL`),
    /// `parallel` at a time, the list in a config file so that its length is not bounded by the command line.
    static func curlParallelSeconds(
        _ requests: [(upload: URL?, path: String)], baseURL: String, parallel: Int, scratch: URL
    ) throws -> Double {
        let (arguments, base) = try curl(baseURL)
        func quoted(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        var config = ""
        for request in requests {
            config += "url = \(quoted(base + request.path))\n"
            config +=
                request.upload.map { "upload-file = \(quoted($0.path))\n" }
                ?? "request = \"DELETE\"\noutput = \"/dev/null\"\n"
        }
        try Data(config.utf8).write(to: scratch)
        defer { try? FileManager.default.removeItem(at: scratch) }
        return try ChildProcess.mustRun(
            arguments + ["--parallel", "--parallel-max", "\(parallel)", "--config", scratch.path]
        ).seconds
    }

    /// One `curl` that GETs `paths` (relative to `baseURL`) one after another on one connection, keeping no byte:
    /// one `curl` per file without a process and a connection each. The list is in a config file (`scratch`).
    static func curlGetSeconds(_ paths: [String], baseURL: String, scratch: URL) throws -> Double {
        let (arguments, base) = try curl(baseURL)
        let config = paths.map { "url = \"\(base + $0)\"\noutput = \"/dev/null\"\n" }.joined()
        try Data(config.utf8).write(to: scratch)
        defer { try? FileManager.default.removeItem(at: scratch) }
        return try ChildProcess.mustRun(arguments + ["--config", scratch.path]).seconds
    }

    /// One `curl` that sends `count` requests with `method` to `url` one after another on one connection: the time of
    /// each, as curl measured it (the first one's includes connecting).
    static func curlRequestTimes(_ count: Int, method: String, url: String) throws -> [Double] {
        let (arguments, base) = try curl(url)
        let requests = (0..<count).flatMap { _ in ["--request", method, "--output", "/dev/null", base] }
        let output = try ChildProcess.mustRun(arguments + ["--write-out", "%{time_total}\\n"] + requests).output
        return output.split(separator: "\n").compactMap { Double($0) }
    }

    /// The arguments of a `curl` for a WebDAV URL with `user:password` in it, and the URL without them.
    private static func curl(_ baseURL: String) throws -> (arguments: [String], base: String) {
        guard let components = URLComponents(string: baseURL), let user = components.user,
            let password = components.password
        else {
            throw BenchError("the WebDAV URL needs user:password")
        }
        var plain = components
        plain.user = nil
        plain.password = nil
        return (
            ["curl", "--silent", "--no-progress-meter", "--show-error", "--fail", "--user", "\(user):\(password)"],
            plain.string ?? baseURL
        )
    }

    static func fileSize(_ url: URL) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Whether a command is on `PATH`.
    static func has(_ command: String) -> Bool {
        (try? ChildProcess.run(["sh", "-c", "command -v \(command)"], quietStandardError: true).status) == 0
    }
}
