import Foundation

/// One synced row's last-writer-wins registers, packed into the `stamps` BLOB of its `foldersync_clocks` row.
///
/// One row per synced row, not one per column: a bulk sync writes and reads a tenth of the B-tree rows it
/// would with a row per register. Registers are named by column, not by position, so a migration that adds, drops or
/// reorders columns leaves them meaning what they meant.
///
/// Two encodings, told by their first byte; both start with the same head, so that SQL finds the newest
/// register of all (`max(substr(stamps, 2, 8))`) without decoding one:
/// ```
/// version            1 byte: 1 or 2
/// newest             UInt64 big-endian: the newest register's timestamp
/// client count       varint; then each client identifier, varint length + UTF-8
/// per register       version 1: column (varint length + UTF-8), timestamp (UInt64 LE),
///                               client (varint: 0 this client, k the k-th identifier above)
///                    version 2: column (varint length + UTF-8), age (varint: newest − timestamp),
///                               client (varint, as version 1) only when the client count is above 0
/// ```
/// Version 2 (``encoded``, bookkeeping version 6) is what a store writes: a row's registers come from a few
/// writes, whose timestamps are close (a write's columns are ticked in turn, one counter step apart), so their
/// ages take a byte or a few where version 1 spent eight, and this client's own registers need no client byte:
/// a new row of ten columns keeps 50 bytes of registers instead of 130. At least one register of a version-2 value is
/// as old as its head. Version 1 (``snapshotEncoded``) is what a snapshot carries, as every earlier version wrote it,
/// so whole stores keep their format; a store reads both (stores of earlier bookkeeping versions, and installed
/// snapshots, keep version 1 until a row is written again).
///
/// "This client" is stored without an identifier: local writes not yet published are the registers with no
/// client, and a snapshot names the client in every register (``owned(by:)``).
struct RowRegisters: Equatable {
    struct Register: Equatable {
        var column: String
        var timestamp: UInt64
        /// `nil` for this client's own writes.
        var client: String?
    }

    private(set) var registers: [Register] = []

    init() {}

    /// Decodes a `stamps` value of either encoding; `nil` or an empty blob is a row with no register.
    init(_ blob: Data?) throws {
        guard let blob, !blob.isEmpty else { return }
        registers = try blob.withUnsafeBytes { bytes in
            var reader = BlobReader(bytes: bytes)
            let version = try reader.byte()
            guard version == 1 || version == 2 else { throw FormatViolation("registers of unknown version \(version)") }
            // The newest timestamp: derived from the registers in version 1, what their ages count from in version 2.
            let newest = try reader.bytes(8).loadUnaligned(as: UInt64.self).bigEndian
            let clientCount = try reader.varint()
            // Each identifier takes at least one byte: a hostile count runs out of input before memory.
            guard clientCount <= UInt64(reader.remaining) else {
                throw FormatViolation("register client count \(clientCount) is out of range")
            }
            var clients: [String] = []
            clients.reserveCapacity(Int(clientCount))
            for _ in 0..<clientCount { clients.append(try reader.string(what: "register client")) }
            var registers: [Register] = []
            // A register takes at least 3 bytes: one allocation for a row's registers, not one per doubling (a bulk
            // staging decodes every staged row's registers).
            registers.reserveCapacity(min(reader.remaining / 3, 1024))
            var newestSeen = version == 1
            while reader.remaining > 0 {
                let column = try reader.string(what: "register column")
                let timestamp: UInt64
                if version == 1 {
                    timestamp = try reader.bytes(8).loadUnaligned(as: UInt64.self).littleEndian
                } else {
                    let age = try reader.varint()
                    guard age <= newest else { throw FormatViolation("register age \(age) is older than time") }
                    timestamp = newest - age
                    newestSeen = newestSeen || age == 0
                }
                let index = version == 1 || clientCount > 0 ? try reader.varint() : 0
                guard index <= UInt64(clients.count) else {
                    throw FormatViolation("register client \(index) is out of range")
                }
                registers.append(
                    Register(column: column, timestamp: timestamp, client: index == 0 ? nil : clients[Int(index) - 1]))
            }
            guard newestSeen || registers.isEmpty else {
                throw FormatViolation("no register is as new as the registers' head")
            }
            return registers
        }
    }

    /// The `stamps` value a store writes: version 2.
    var encoded: Data {
        let clients = referencedClients
        let newest = newestTimestamp
        var sink = Self.head(version: 2, newest: newest, clients: clients, bodyCapacity: registers.count * 8)
        for register in registers {
            sink.appendString(register.column)
            sink.appendVarint(newest - register.timestamp)
            if !clients.isEmpty { sink.appendVarint(Self.clientIndex(register.client, in: clients)) }
        }
        return Data(sink.bytes)
    }

    /// The `stamps` value a snapshot carries: version 1, byte for byte what every version before bookkeeping
    /// version 6 wrote.
    var snapshotEncoded: Data {
        let clients = referencedClients
        var sink = Self.head(version: 1, newest: newestTimestamp, clients: clients, bodyCapacity: registers.count * 16)
        for register in registers {
            sink.appendString(register.column)
            sink.appendUInt64(register.timestamp)
            sink.appendVarint(Self.clientIndex(register.client, in: clients))
        }
        return Data(sink.bytes)
    }

    /// The clients the registers name, each once, in the order of their first register.
    private var referencedClients: [String] {
        var clients: [String] = []
        for register in registers {
            if let client = register.client, !clients.contains(client) { clients.append(client) }
        }
        return clients
    }

    /// A register's client as its value stores it: 0 for this client, k for the k-th of `clients`.
    private static func clientIndex(_ client: String?, in clients: [String]) -> UInt64 {
        guard let client, let index = clients.firstIndex(of: client) else { return 0 }
        return UInt64(index + 1)
    }

    /// A `stamps` value up to its registers: version, newest timestamp, client identifiers.
    private static func head(version: UInt8, newest: UInt64, clients: some Collection<String>, bodyCapacity: Int)
        -> ByteSink
    {
        var sink = ByteSink()
        sink.bytes.reserveCapacity(10 + clients.reduce(0) { $0 + 1 + $1.utf8.count } + bodyCapacity)
        sink.bytes.append(version)
        withUnsafeBytes(of: newest.bigEndian) { sink.bytes.append(contentsOf: $0) }
        sink.appendVarint(UInt64(clients.count))
        for client in clients { sink.appendString(client) }
        return sink
    }

    /// The `stamps` value of one register per column of `columns`, all written by `client`: the same bytes as
    /// ``encoded`` of those registers, without building them first (once per new row of a bulk apply).
    static func encoded(_ columns: [ColumnChange], client: String) -> [UInt8] {
        guard !columns.isEmpty else { return [UInt8](RowRegisters().encoded) }
        let newest = columns.reduce(0) { max($0, $1.timestamp.rawValue) }
        var sink = head(version: 2, newest: newest, clients: CollectionOfOne(client), bodyCapacity: columns.count * 16)
        for column in columns {
            sink.appendString(column.column)
            sink.appendVarint(newest - column.timestamp.rawValue)
            sink.appendVarint(1)
        }
        return sink.bytes
    }

    /// The newest timestamp stored at the head of a `stamps` value (`max(substr(stamps, 2, 8))`), or 0.
    static func newestTimestamp(ofHead head: Data?) -> UInt64 {
        guard let head, head.count == 8 else { return 0 }
        return head.reduce(0) { $0 << 8 | UInt64($1) }
    }

    var isEmpty: Bool { registers.isEmpty }

    subscript(column: String) -> Register? {
        registers.first { $0.column == column }
    }

    /// Sets `column`'s register, replacing the one it had.
    mutating func set(_ column: String, timestamp: UInt64, client: String?) {
        if let index = registers.firstIndex(where: { $0.column == column }) {
            registers[index].timestamp = timestamp
            registers[index].client = client
        } else {
            registers.append(Register(column: column, timestamp: timestamp, client: client))
        }
    }

    /// Removes the registers `remove` picks.
    mutating func removeAll(where remove: (Register) -> Bool) {
        registers.removeAll(where: remove)
    }

    /// The stamp of `column`'s register; a register with no client is `localClient`'s.
    func stamp(of column: String, localClient: String) -> ChangeStamp? {
        self[column].map { $0.stamp(localClient: localClient) }
    }

    /// The newest stamp of the row, or `nil` when it has no register.
    func newest(localClient: String) -> ChangeStamp? {
        registers.map { $0.stamp(localClient: localClient) }.max()
    }

    /// The newest timestamp of the row, or 0.
    var newestTimestamp: UInt64 { registers.reduce(0) { max($0, $1.timestamp) } }

    /// The same registers with this client's named `client`: how they travel in a snapshot.
    func owned(by client: String) -> RowRegisters {
        var copy = self
        for index in copy.registers.indices where copy.registers[index].client == nil {
            copy.registers[index].client = client
        }
        return copy
    }
}

extension RowRegisters.Register {
    func stamp(localClient: String) -> ChangeStamp {
        ChangeStamp(timestamp: HybridTimestamp(rawValue: timestamp), clientIdentifier: client ?? localClient)
    }
}
