@_spi(ModelAdapter) public import FolderSync
public import Foundation

/// A remote that injects the faults of a ``FaultMix`` into the requests of one client, over any backend.
///
/// Faults are drawn from a seeded generator, so a seed replays them. Clients of one simulation share a
/// ``Faults`` record of recent writes, so that a listing can lag behind another client's write. Faults strike
/// only while ``Faults/isEnabled``; a simulation turns them off for its final rounds, where every client must converge.
///
/// `@unchecked Sendable` as its base class is (Swift asks a subclass to say so again): its own state is a `let` of a
/// checked `Sendable` type.
public final class FaultyFileSystem: ForwardingFileSystem, @unchecked Sendable {
    /// What the clients of one simulation share: the request clock and when each path was last written.
    public final class Faults: Sendable {
        let mix: FaultMix
        private struct State {
            var random: SeededGenerator
            var requests = 0
            var written: [RemotePath: Int] = [:]
            var enabled = true
            var injected: [String: Int] = [:]
        }
        private let state: Locked<State>

        /// Faults injected so far, by kind.
        public var injected: [String: Int] { state.current.injected }

        /// Faults of `mix`, drawn from a generator seeded with `seed` so that a run replays.
        public init(mix: FaultMix, seed: UInt64) {
            self.mix = mix
            state = Locked(State(random: SeededGenerator(seed: seed)))
        }

        /// Whether faults strike now; turned off for the final rounds, where every client must converge.
        public var isEnabled: Bool {
            get { state.current.enabled }
            set { state.withLock { $0.enabled = newValue } }
        }

        /// Counts a request; `true` with probability `percent` when enabled (and records the fault as `kind`).
        func strikes(_ percent: Int, _ kind: String) -> Bool {
            state.withLock { state in
                guard state.enabled, percent > 0, state.random.chance(percent) else { return false }
                state.injected[kind, default: 0] += 1
                return true
            }
        }

        func tick() { state.withLock { $0.requests += 1 } }
        func noteWritten(_ path: RemotePath) { state.withLock { $0.written[path] = $0.requests } }
        func isRecent(_ path: RemotePath) -> Bool {
            state.withLock { state in state.written[path].map { state.requests - $0 < mix.lagRequests } ?? false }
        }
        func pickError() -> FolderSyncError.Code? {
            for (code, percent) in mix.errors.sorted(by: { $0.key.rawValue < $1.key.rawValue })
            where strikes(percent, "\(code)") {
                return code
            }
            return nil
        }
    }

    /// The shared fault record this remote draws from.
    public let faults: Faults

    /// Injects `faults` into the requests to `base`.
    public init(_ base: any RemoteFileSystem, faults: Faults) {
        self.faults = faults
        super.init(base)
    }

    public override func willForward(_ request: Request, path: RemotePath) async throws {
        faults.tick()
        if let code = faults.pickError() {
            throw FolderSyncError(code, "injected fault: \(code) on \(request.rawValue)", path: path.description)
        }
    }

    public override func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        let items = try await super.contentsOfDirectory(at: path)
        return items.filter { item in
            !(item.kind == .file && faults.isRecent(path.appending(item.name))
                && faults.strikes(faults.mix.laggingListings, "lagging listing"))
        }
    }

    public override func read(_ path: RemotePath) async throws -> Data {
        try vanish(path)
        return try await super.read(path)
    }

    public override func download(_ path: RemotePath, toLocalFile url: URL) async throws {
        try vanish(path)
        try await super.download(path, toLocalFile: url)
    }

    public override func readPieces(of path: RemotePath, size: Int, _ body: (Data) throws -> Void) async throws {
        try vanish(path)
        try await super.readPieces(of: path, size: size, body)
    }

    public override func write(_ data: Data, to path: RemotePath) async throws {
        try await halfWrite(data, to: path)
        try await super.write(data, to: path)
        try await written(path)
    }

    public override func upload(fromLocalFile url: URL, to path: RemotePath) async throws {
        try await halfWrite(try Data(contentsOf: url), to: path)
        try await super.upload(fromLocalFile: url, to: path)
        try await written(path)
    }

    public override func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws {
        try await super.move(from: source, to: destination, replacing: replacing)
        try await written(destination)
    }

    private func vanish(_ path: RemotePath) throws {
        if faults.strikes(faults.mix.vanishingReads, "vanishing file") {
            throw FolderSyncError(.remoteItemNotFound, "injected fault: the file vanished", path: path.description)
        }
    }

    /// Leaves half of `data` under a temporary name, as a writer that stopped half-way does, and fails.
    private func halfWrite(_ data: Data, to path: RemotePath) async throws {
        guard faults.strikes(faults.mix.halfWrites, "half write") else { return }
        try? await base.write(
            data.prefix(data.count / 2), to: path.parent.appending(TemporaryName.make(for: path.name)))
        throw FolderSyncError(.remoteIOFailed, "injected fault: the write stopped half-way", path: path.description)
    }

    /// Records the write for lagging listings, and sometimes leaves a desktop sync agent's `name (1)` copy.
    private func written(_ path: RemotePath) async throws {
        faults.noteWritten(path)
        guard !TemporaryName.isTemporary(path.name), faults.strikes(faults.mix.duplicateCopies, "name (1) copy") else {
            return
        }
        let name = path.name
        let copy = name.lastIndex(of: ".").map { "\(name[..<$0]) (1)\(name[$0...])" } ?? "\(name) (1)"
        if let data = try? await base.read(path) { try? await base.write(data, to: path.parent.appending(copy)) }
    }
}
