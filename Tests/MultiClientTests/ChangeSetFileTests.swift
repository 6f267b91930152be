import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

// MARK: Helpers

/// Runs `body` with a fresh temporary folder that is removed afterwards (tests run in parallel).
private func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("ChangeSetFileTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url)
}

private let testPath = "App/Documents/D/SyncChanges/C/000000000001-X.syncchg"

private func timestamp(_ milliseconds: UInt64, _ counter: UInt16 = 0) -> HybridTimestamp {
    HybridTimestamp(milliseconds: milliseconds, counter: counter)
}

/// Writes `changes` as one change set and returns the header `finish()` reported.
@discardableResult
private func writeChangeSet(_ changes: [SyncChange], to url: URL, sequence: Int64 = 1) throws -> ChangeSetHeader {
    let writer = try ChangeSetWriter(
        url: url, changeSetIdentifier: "5B8E6C1A-0000-4000-8000-00000000000\(sequence % 10)",
        clientIdentifier: "C1D2E3F4-1111-4222-8333-444455556666", sequence: sequence,
        schemaVersion: 7, createdAt: Date(timeIntervalSince1970: 1_717_000_000.1234))
    for change in changes { try writer.append(change) }
    return try writer.finish()
}

private func readAll(_ url: URL, path: String = testPath) throws -> [SyncChange] {
    var changes: [SyncChange] = []
    try ChangeSetReader.forEachChange(at: url, path: path) { changes.append($0) }
    return changes
}

/// A mix of every kind of change and every kind of value.
private func sampleChanges() -> [SyncChange] {
    [
        SyncChange(
            kind: .insert, table: "notes", syncID: "a",
            columns: [
                ColumnChange(column: "null", value: .null, timestamp: timestamp(1)),
                ColumnChange(column: "min", value: .integer(.min), timestamp: timestamp(2, 1)),
                ColumnChange(column: "max", value: .integer(.max), timestamp: timestamp(2, 2)),
                ColumnChange(column: "zero", value: .integer(0), timestamp: timestamp(2, 3)),
                ColumnChange(column: "minusOne", value: .integer(-1), timestamp: timestamp(2, 4)),
                ColumnChange(column: "real", value: .real(3.141592653589793), timestamp: timestamp(3)),
                ColumnChange(column: "tiny", value: .real(.leastNonzeroMagnitude), timestamp: timestamp(3)),
                ColumnChange(column: "huge", value: .real(-.greatestFiniteMagnitude), timestamp: timestamp(3)),
                ColumnChange(column: "infinity", value: .real(.infinity), timestamp: timestamp(3)),
                ColumnChange(column: "emptyText", value: .text(""), timestamp: timestamp(4)),
                ColumnChange(column: "unicode", value: .text("héllo wörld — 日本語 🇫🇷👩‍👩‍👧 \u{0}nul"), timestamp: timestamp(4)),
                ColumnChange(column: "emptyBlob", value: .blob(Data()), timestamp: timestamp(5)),
                ColumnChange(
                    column: "blob", value: .blob(Data((0...255).map { UInt8($0) })), timestamp: .init(rawValue: .max)),
            ]),
        SyncChange(kind: .insert, table: "notes", syncID: "b", columns: []),
        SyncChange(
            kind: .update, table: "tâches", syncID: "ü-🙂",
            columns: [
                ColumnChange(
                    column: "title", value: .text(String(repeating: "long ", count: 10_000)), timestamp: timestamp(9))
            ]),
        SyncChange(kind: .delete, table: "notes", syncID: "c", deletionTimestamp: timestamp(10, 65535)),
        SyncChange(kind: .delete, table: "other", syncID: "a", deletionTimestamp: .zero),
    ]
}

/// The offset of the first byte after the header block (preamble, fields, header CRC).
private func headerByteCount(of bytes: [UInt8]) -> Int {
    let fields = Int(bytes[9]) | Int(bytes[10]) << 8 | Int(bytes[11]) << 16 | Int(bytes[12]) << 24
    return ChangeSetFile.preambleByteCount + fields + 4
}

private func writeBytes(_ bytes: [UInt8], to url: URL) throws {
    try Data(bytes).write(to: url)
}

private func readBytes(_ url: URL) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: url))
}

private func littleEndian(_ value: UInt32) -> [UInt8] {
    (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
}

/// Deterministic, fast pseudo-random bytes (splitmix64), so large files are reproducible and incompressible.
private struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func bytes(_ count: Int) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < count {
                var word = next()
                let take = min(8, count - offset)
                withUnsafeBytes(of: &word) {
                    buffer.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: take)
                }
                offset += take
            }
        }
        return data
    }
}

// MARK: Hybrid timestamps

/// Nested in ``ChangeSetFileTests`` so `--filter ChangeSet` runs it with the format tests.
extension ChangeSetFileTests {
    @Suite struct HybridTimestamps {
        @Test func packsMillisecondsAndCounter() throws {
            let stamp = HybridTimestamp(milliseconds: 1_717_000_000_123, counter: 42)
            #expect(stamp.rawValue == 1_717_000_000_123 << 16 | 42)
            #expect(stamp.milliseconds == 1_717_000_000_123)
            #expect(stamp.counter == 42)
            #expect(HybridTimestamp(rawValue: stamp.rawValue) == stamp)
            #expect(HybridTimestamp.zero.rawValue == 0)
            #expect(timestamp(5, 65535) < timestamp(6, 0))
            #expect(timestamp(5, 1) < timestamp(5, 2))
            #expect(stamp.description == "2024-05-29T16:26:40.123Z#42", "a time people read, and the counter")
        }

        @Test func codesAsASingleInteger() throws {
            let stamp = HybridTimestamp(milliseconds: 1_717_000_000_123, counter: 7)
            let json = try JSONEncoder().encode([stamp])
            #expect(String(decoding: json, as: UTF8.self) == "[\(stamp.rawValue)]")
            #expect(try JSONDecoder().decode([HybridTimestamp].self, from: json) == [stamp])
        }

        @Test func clockStaysMonotonicWhenTheWallClockGoesBackADay() {
            var clock = HybridLogicalClock()
            let now = Date(timeIntervalSince1970: 1_717_000_000)
            var previous = clock.tick(now: now)
            #expect(previous.milliseconds == 1_717_000_000_000)
            for step in 1...1000 {
                // The clock jumps a day back, then wanders; timestamps must still strictly increase.
                let wall = now.addingTimeInterval(-86_400 + Double(step % 7))
                let next = clock.tick(now: wall)
                #expect(next > previous)
                #expect(next.milliseconds == previous.milliseconds || next.milliseconds == previous.milliseconds + 1)
                previous = next
            }
            // Once the wall clock passes the last timestamp again, physical time takes over.
            let later = clock.tick(now: now.addingTimeInterval(60))
            #expect(later == HybridTimestamp(milliseconds: 1_717_000_060_000, counter: 0))
        }

        @Test func observingARemoteTimestampMakesTheNextTickGreater() {
            var clock = HybridLogicalClock()
            let now = Date(timeIntervalSince1970: 1_717_000_000)
            let local = clock.tick(now: now)
            // A remote client whose clock runs two days ahead.
            let remote = HybridTimestamp(milliseconds: local.milliseconds + 2 * 86_400_000, counter: 3)
            clock.observe(remote)
            #expect(clock.last >= remote)
            let next = clock.tick(now: now)
            #expect(next > remote)
            #expect(next == HybridTimestamp(milliseconds: remote.milliseconds, counter: 4))
            // An older remote timestamp changes nothing.
            clock.observe(local)
            #expect(clock.last == next)
        }

        @Test func counterOverflowAdvancesTheMillisecond() {
            var clock = HybridLogicalClock(last: HybridTimestamp(milliseconds: 1000, counter: .max))
            let next = clock.tick(now: Date(timeIntervalSince1970: 0.5))
            #expect(next == HybridTimestamp(milliseconds: 1001, counter: 0))
            #expect(next > HybridTimestamp(milliseconds: 1000, counter: .max))
        }

        @Test func clockToleratesAHostileMaximumTimestamp() {
            var clock = HybridLogicalClock()
            clock.observe(HybridTimestamp(rawValue: .max))
            #expect(clock.tick(now: Date()) == HybridTimestamp(rawValue: .max))
        }

        @Test func changeStampsOrderByTimestampThenClient() {
            let a = ChangeStamp(timestamp: timestamp(10), clientIdentifier: "B")
            let b = ChangeStamp(timestamp: timestamp(10), clientIdentifier: "A")
            let c = ChangeStamp(timestamp: timestamp(10, 1), clientIdentifier: "A")
            #expect(b < a)
            #expect(a < c)
            #expect([c, a, b].sorted() == [b, a, c])
            #expect(!(a < a))
        }
    }
}

// MARK: Change-set files

@Suite struct ChangeSetFileTests {
    @Test func roundTripsEveryKindOfValue() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("set.syncchg")
            let changes = sampleChanges()
            let written = try writeChangeSet(changes, to: url, sequence: 3)
            #expect(written.changeCount == changes.count)
            #expect(written.sequence == 3)
            #expect(written.schemaVersion == 7)
            #expect(written.clientIdentifier == "C1D2E3F4-1111-4222-8333-444455556666")
            #expect(written.createdAt.timeIntervalSince1970 == 1_717_000_000.123)
            #expect(try ChangeSetReader.readHeader(at: url, path: testPath) == written)
            #expect(try ChangeSetReader.verify(at: url, path: testPath) == written)
            #expect(try readAll(url) == changes)
        }
    }

    @Test func preservesTheBitsOfReals() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("set.syncchg")
            let values: [Double] = [-0.0, .nan, .signalingNaN, .ulpOfOne, -.infinity]
            let change = SyncChange(
                kind: .insert, table: "t", syncID: "r",
                columns: values.enumerated().map {
                    ColumnChange(column: "c\($0.offset)", value: .real($0.element), timestamp: .zero)
                })
            try writeChangeSet([change], to: url)
            let read = try #require(try readAll(url).first)
            let bits = read.columns.map { column -> UInt64? in
                if case .real(let value) = column.value { value.bitPattern } else { nil }
            }
            #expect(bits == values.map(\.bitPattern))
        }
    }

    @Test func roundTripsAnEmptyChangeSet() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("empty.syncchg")
            let written = try writeChangeSet([], to: url)
            #expect(written.changeCount == 0)
            #expect(try ChangeSetReader.verify(at: url, path: testPath) == written)
            #expect(try readAll(url).isEmpty)
        }
    }

    @Test func headerIsReadableWithoutTheBody() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("set.syncchg")
            let written = try writeChangeSet(sampleChanges(), to: url)
            var bytes = try readBytes(url)
            let headerEnd = headerByteCount(of: bytes)
            for index in headerEnd..<bytes.count { bytes[index] = 0xA5 }
            try writeBytes(bytes, to: url)
            #expect(try ChangeSetReader.readHeader(at: url, path: testPath) == written)
            let error = #expect(throws: FolderSyncError.self) { try ChangeSetReader.verify(at: url, path: testPath) }
            #expect(error?.code == .corruptFile)
        }
    }

    @Test func truncatedFilesAreCorrupt() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("set.syncchg")
            try writeChangeSet(sampleChanges(), to: url)
            let bytes = try readBytes(url)
            let headerEnd = headerByteCount(of: bytes)
            let size = bytes.count
            let lengths = [
                0, 1, 4, 7, 8, 9, 12, 13, 20, headerEnd - 1, headerEnd, headerEnd + 1, headerEnd + 10,
                size / 2, size - 21, size - 20, size - 19, size - 5, size - 4, size - 1,
            ]
            for length in lengths {
                let truncated = directory.appendingPathComponent("truncated-\(length).syncchg")
                try writeBytes(Array(bytes.prefix(length)), to: truncated)
                var delivered = 0
                let error = #expect(throws: FolderSyncError.self, "length \(length)") {
                    try ChangeSetReader.forEachChange(at: truncated, path: testPath) { _ in delivered += 1 }
                }
                #expect(error?.code == .corruptFile, "length \(length): \(String(describing: error))")
                #expect(error?.path == testPath)
                #expect(delivered == 0)
                if length < headerEnd {
                    let headerError = #expect(throws: FolderSyncError.self) {
                        try ChangeSetReader.readHeader(at: truncated, path: testPath)
                    }
                    #expect(headerError?.code == .corruptFile, "length \(length)")
                }
            }
        }
    }

    @Test func everyFlippedBitIsDetected() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("set.syncchg")
            var generator = SplitMix(state: 1)
            let changes = (0..<200).map { index in
                SyncChange(
                    kind: .insert, table: "notes", syncID: "row-\(index)",
                    columns: [
                        ColumnChange(
                            column: "title", value: .text("Note \(index)"), timestamp: timestamp(UInt64(index))),
                        ColumnChange(
                            column: "data", value: .blob(generator.bytes(index % 40)), timestamp: timestamp(1)),
                        ColumnChange(
                            column: "count", value: .integer(Int64(index) * 1_000_003), timestamp: timestamp(2)),
                    ])
            }
            try writeChangeSet(changes, to: url)
            let original = try readBytes(url)
            let headerEnd = headerByteCount(of: original)
            let offsets =
                Array(stride(from: 0, to: original.count, by: 97)) + Array(0..<headerEnd) + [original.count - 1]
            #expect(offsets.count > 50)
            for offset in offsets {
                var bytes = original
                bytes[offset] ^= 1 << UInt8(offset % 8)
                let damaged = directory.appendingPathComponent("flipped-\(offset).syncchg")
                try writeBytes(bytes, to: damaged)
                var delivered = 0
                let error = #expect(throws: FolderSyncError.self, "offset \(offset)") {
                    try ChangeSetReader.forEachChange(at: damaged, path: testPath) { _ in delivered += 1 }
                }
                let allowed: Set<FolderSyncError.Code> =
                    offset == 8 ? [.corruptFile, .unsupportedFormatVersion] : [.corruptFile]
                #expect(
                    error.map { allowed.contains($0.code) } == true, "offset \(offset): \(String(describing: error))")
                #expect(error?.path == testPath)
                #expect(delivered == 0, "offset \(offset) delivered data from a damaged file")
                if offset < headerEnd {
                    #expect(throws: FolderSyncError.self, "header offset \(offset)") {
                        try ChangeSetReader.readHeader(at: damaged, path: testPath)
                    }
                }
                try FileManager.default.removeItem(at: damaged)
            }
        }
    }

    @Test func garbageIsCorrupt() throws {
        try withTemporaryDirectory { directory in
            var generator = SplitMix(state: 99)
            var candidates: [[UInt8]] = [
                [],
                Array("hello, world\n".utf8),
                Array("<?xml version=\"1.0\"?><plist/>".utf8),
                [UInt8](repeating: 0, count: 4096),
                Array(ChangeSetFile.magic) + [1] + [UInt8](repeating: 0xFF, count: 100),
                Array(ChangeSetFile.magic) + [1, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 40),
            ]
            for size in [3, 64, 1000, 70_000] { candidates.append([UInt8](generator.bytes(size))) }
            for (index, bytes) in candidates.enumerated() {
                let url = directory.appendingPathComponent("garbage-\(index).syncchg")
                try writeBytes(bytes, to: url)
                let error = #expect(throws: FolderSyncError.self, "candidate \(index)") {
                    try ChangeSetReader.forEachChange(at: url, path: testPath) { _ in }
                }
                #expect(error?.code == .corruptFile, "candidate \(index): \(String(describing: error))")
                #expect(error?.path == testPath)
            }
        }
    }

    @Test func newerFormatVersionIsRefused() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("set.syncchg")
            try writeChangeSet(sampleChanges(), to: url)
            var bytes = try readBytes(url)
            #expect(bytes[8] == ChangeSetFile.formatVersion)
            bytes[8] = ChangeSetFile.formatVersion + 1
            // A newer format may lay out everything after the version differently.
            bytes.removeSubrange(9...)
            bytes += [0xDE, 0xAD]
            try writeBytes(bytes, to: url)
            for read in [
                { try ChangeSetReader.readHeader(at: url, path: testPath) },
                { try ChangeSetReader.verify(at: url, path: testPath) },
                {
                    try ChangeSetReader.forEachChange(at: url, path: testPath) { _ in }
                    return nil
                },
            ] as [() throws -> ChangeSetHeader?] {
                let error = #expect(throws: FolderSyncError.self) { _ = try read() }
                #expect(error?.code == .unsupportedFormatVersion)
                #expect(error?.path == testPath)
                #expect(error?.message.contains("version 2") == true)
            }
        }
    }

    /// A file whose checksums are consistent but whose header disagrees with its records
    /// (what a buggy writer would produce) is refused by the structural checks.
    @Test(arguments: [2, 4, 0])
    func structureIsCheckedBeyondTheChecksums(claimedCount: Int) throws {
        try withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("set.syncchg")
            let changes = Array(sampleChanges().prefix(3))
            try writeChangeSet(changes, to: url)
            var bytes = try readBytes(url)
            let headerEnd = headerByteCount(of: bytes)
            var source = ArrayByteSource(Array(bytes[ChangeSetFile.preambleByteCount..<(headerEnd - 4)]))
            _ = try source.readString(what: "id")
            _ = try source.readString(what: "client")
            let countOffset = headerEnd - 4 - source.remainingCount + 16
            for index in 0..<8 { bytes[countOffset + index] = UInt8(truncatingIfNeeded: claimedCount >> (8 * index)) }
            bytes.replaceSubrange(
                (headerEnd - 4)..<headerEnd, with: littleEndian(Checksum.crc32(Data(bytes[0..<(headerEnd - 4)]))))
            bytes.replaceSubrange((bytes.count - 4)..., with: littleEndian(Checksum.crc32(Data(bytes.dropLast(4)))))
            try writeBytes(bytes, to: url)
            #expect(try ChangeSetReader.verify(at: url, path: testPath).changeCount == claimedCount)
            let error = #expect(throws: FolderSyncError.self) { _ = try readAll(url) }
            #expect(error?.code == .corruptFile)
            #expect(error?.path == testPath)
        }
    }

    @Test func errorsFromTheBodyPassThrough() throws {
        struct Stop: Error {}
        try withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("set.syncchg")
            try writeChangeSet(sampleChanges(), to: url)
            var seen = 0
            #expect(throws: Stop.self) {
                try ChangeSetReader.forEachChange(at: url, path: testPath) { _ in
                    seen += 1
                    if seen == 2 { throw Stop() }
                }
            }
            #expect(seen == 2)
        }
    }

    @Test func missingFileIsReportedAsMissing() throws {
        try withTemporaryDirectory { directory in
            let error = #expect(throws: FolderSyncError.self) {
                try ChangeSetReader.readHeader(at: directory.appendingPathComponent("absent"), path: testPath)
            }
            #expect(error?.code == .remoteItemNotFound)
            #expect(error?.path == testPath)
        }
    }

    @Test func writerRefusesDuplicateRowsAndMalformedChanges() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("set.syncchg")
            let writer = try ChangeSetWriter(
                url: url, changeSetIdentifier: "A", clientIdentifier: "C", sequence: 1,
                schemaVersion: 1, createdAt: Date())
            let insert = SyncChange(
                kind: .insert, table: "t", syncID: "1",
                columns: [ColumnChange(column: "c", value: .integer(1), timestamp: timestamp(1))])
            try writer.append(insert)
            let malformed = [
                insert,
                SyncChange(kind: .delete, table: "t", syncID: "2"),
                SyncChange(kind: .update, table: "t", syncID: "4"),
                SyncChange(
                    kind: .update, table: "t", syncID: "5", columns: insert.columns, deletionTimestamp: timestamp(1)),
                SyncChange(kind: .insert, table: "", syncID: "6"),
                SyncChange(kind: .insert, table: "t", syncID: ""),
                SyncChange(kind: .insert, table: "t", syncID: "7", columns: insert.columns + insert.columns),
            ]
            for change in malformed {
                let error = #expect(throws: FolderSyncError.self) { try writer.append(change) }
                #expect(error?.code == .localStoreFailed)
            }
            // The writer stays usable: refusals write nothing. A delete may carry the row's last writes.
            let deleteWithWrites = SyncChange(
                kind: .delete, table: "t", syncID: "3", columns: insert.columns, deletionTimestamp: timestamp(1))
            try writer.append(deleteWithWrites)
            try writer.append(SyncChange(kind: .insert, table: "u", syncID: "1"))
            let header = try writer.finish()
            #expect(header.changeCount == 3)
            #expect(try readAll(url) == [insert, deleteWithWrites, SyncChange(kind: .insert, table: "u", syncID: "1")])
        }
    }

    @Test func abandonedWriterLeavesNoFile() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("set.syncchg")
            do {
                let writer = try ChangeSetWriter(
                    url: url, changeSetIdentifier: "A", clientIdentifier: "C", sequence: 1,
                    schemaVersion: 1, createdAt: Date())
                try writer.append(SyncChange(kind: .insert, table: "t", syncID: "1"))
                #expect(FileManager.default.fileExists(atPath: url.path))
            }
            #expect(!FileManager.default.fileExists(atPath: url.path))
        }
    }

    @Test func truncatedCompressedStreamIsCorrupt() throws {
        var compressed: [UInt8] = []
        let deflater = try DeflateStream(path: "memory") { compressed.append(contentsOf: $0) }
        let input = [UInt8](SplitMix(state: 5).bytesArray(300_000))
        try input.withUnsafeBytes { try deflater.write($0) }
        try deflater.finish()
        #expect(try inflateAll(compressed) == input)
        for length in [0, 2, 100, compressed.count / 2, compressed.count - 4, compressed.count - 1] {
            let error = #expect(throws: FolderSyncError.self, "length \(length)") {
                _ = try inflateAll(Array(compressed.prefix(length)))
            }
            #expect(error?.code == .corruptFile, "length \(length)")
            #expect(error?.path == "memory")
        }
    }

    @Test func splittingProducesConsecutiveBoundedParts() throws {
        try withTemporaryDirectory { directory in
            var generator = SplitMix(state: 7)
            let changes = (0..<3000).map { (index: Int) -> SyncChange in
                let stamp = timestamp(UInt64(index))
                if index % 10 == 9 {
                    return SyncChange(kind: .delete, table: "notes", syncID: "row-\(index)", deletionTimestamp: stamp)
                }
                let body = generator.bytes(Int(generator.next() % 300))
                return SyncChange(
                    kind: .insert, table: "notes", syncID: "row-\(index)",
                    columns: [ColumnChange(column: "body", value: .blob(body), timestamp: stamp)])
            }
            let bigChange = SyncChange(
                kind: .insert, table: "notes", syncID: "big",
                columns: [
                    ColumnChange(column: "body", value: .blob(generator.bytes(50_000)), timestamp: timestamp(1))
                ])
            let stream = Array(changes[..<1500]) + [bigChange] + Array(changes[1500...])
            let limit = 16 * 1024
            var requested: [Int64] = []
            let splitter = ChangeSetSplitter(
                clientIdentifier: "C", schemaVersion: 2, firstSequence: 41,
                createdAt: Date(), partByteLimit: limit
            ) { sequence in
                requested.append(sequence)
                return .init(
                    url: directory.appendingPathComponent("part-\(sequence).syncchg"),
                    changeSetIdentifier: "ID-\(sequence)")
            }
            for change in stream { try splitter.append(change) }
            let parts = try splitter.finish()
            #expect(parts.count > 10)
            #expect(parts.map(\.header.sequence) == Array(41..<(41 + Int64(parts.count))))
            #expect(requested == parts.map(\.header.sequence))
            var all: [SyncChange] = []
            for part in parts {
                #expect(part.header.changeSetIdentifier == "ID-\(part.header.sequence)")
                #expect(try ChangeSetReader.verify(at: part.url, path: part.url.path) == part.header)
                var partChanges: [SyncChange] = []
                try ChangeSetReader.forEachChange(at: part.url, path: part.url.path) { partChanges.append($0) }
                #expect(partChanges.count == part.header.changeCount)
                #expect(!partChanges.isEmpty)
                // Re-measure the part's uncompressed size independently of the writer.
                var sink = ByteSink()
                for change in partChanges { ChangeSetRecord.encode(change, into: &sink) }
                #expect(
                    sink.bytes.count <= limit || partChanges.count == 1,
                    "part \(part.header.sequence) holds \(sink.bytes.count) bytes in \(partChanges.count) changes")
                all += partChanges
            }
            #expect(all == stream)
        }
    }

    @Test func splittingNothingWritesNothing() throws {
        try withTemporaryDirectory { directory in
            let splitter = ChangeSetSplitter(
                clientIdentifier: "C", schemaVersion: 1, firstSequence: 1, createdAt: Date()
            ) { _ in
                Issue.record("no part should be started")
                return .init(url: directory.appendingPathComponent("x"), changeSetIdentifier: "x")
            }
            let parts = try splitter.finish()
            #expect(parts.isEmpty)
        }
    }

    /// 200,000 changes, about 50 MB of incompressible data: the reader's memory must not follow the file's size.
    @Test func largeChangeSetStreamsInBoundedMemory() async throws {
        let directory = TemporaryDirectory()
        do {
            let url = directory.url.appendingPathComponent("large.syncchg")
            let count = 200_000
            func change(_ index: Int, _ generator: inout SplitMix) -> SyncChange {
                SyncChange(
                    kind: .insert, table: "notes", syncID: "row-\(index)",
                    columns: [
                        ColumnChange(
                            column: "title", value: .text("Note \(index)"), timestamp: timestamp(UInt64(index))),
                        ColumnChange(
                            column: "body", value: .blob(generator.bytes(256)), timestamp: timestamp(UInt64(index), 1)),
                        ColumnChange(
                            column: "n", value: .integer(Int64(index)), timestamp: timestamp(UInt64(index), 2)),
                    ])
            }
            var writeGenerator = SplitMix(state: 11)
            let writer = try ChangeSetWriter(
                url: url, changeSetIdentifier: "L", clientIdentifier: "C", sequence: 1,
                schemaVersion: 1, createdAt: Date())
            for index in 0..<count { try writer.append(change(index, &writeGenerator)) }
            let header = try writer.finish()
            #expect(header.changeCount == count)
            let fileSize = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
            #expect(fileSize > 50_000_000)

            // By design: the reader holds one 64 KiB file chunk and one 64 KiB decompressed chunk.
            #expect(ChangeSetFile.chunkSize == 64 * 1024)
            #expect(InflateStream.chunkSize == 64 * 1024)

            var readGenerator = SplitMix(state: 11)
            var index = 0
            var mismatches = 0
            try ChangeSetReader.forEachChange(at: url, path: testPath) { read in
                if read != change(index, &readGenerator) { mismatches += 1 }
                index += 1
            }
            #expect(index == count)
            #expect(mismatches == 0)
            // Memory is measured in a process of its own: tests running in parallel here would blur it.
            // Generous; loading the file or the changes would add >50 MB.
            let result = try await ChildProcess("foldersync-test-worker", ["stream-change-set", "--file", url.path])
                .finish()
            #expect(result.status == 0, "\(result.errors)")
            let words = result.output.split(separator: " ").map(String.init)
            #expect(words.count == 4 && words[1] == String(count), "\(result.output)")
            let growth = try #require(Int(words.last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""))
            #expect(
                growth < 24 * 1024 * 1024,
                "resident memory grew by \(growth) bytes while reading a \(fileSize)-byte file")
        }
    }
}

extension SplitMix {
    fileprivate func bytesArray(_ count: Int) -> [UInt8] {
        var copy = self
        return [UInt8](copy.bytes(count))
    }
}

private func inflateAll(_ compressed: [UInt8]) throws -> [UInt8] {
    var offset = 0
    let inflater = try InflateStream(path: "memory") { buffer in
        let count = min(buffer.count, compressed.count - offset)
        compressed[offset..<offset + count].withUnsafeBytes { buffer.copyMemory(from: $0) }
        offset += count
        return count
    }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 10_000)
    while true {
        let count = try chunk.withUnsafeMutableBytes { try inflater.read(into: $0) }
        if count == 0 { break }
        output += chunk[0..<count]
    }
    return output
}

@Suite("Change-set record sizes")
struct ChangeSetRecordSizeTests {
    @Test("The size the splitter computes without encoding is the encoded size, for every kind of value")
    func computedSizeIsEncodedSize() {
        let long = String(repeating: "é", count: 200)
        let changes = [
            SyncChange(
                kind: .insert, table: "items", syncID: "r",
                columns: [
                    ColumnChange(column: "a", value: .null, timestamp: timestamp(1)),
                    ColumnChange(column: "b", value: .integer(-1), timestamp: timestamp(2)),
                    ColumnChange(column: "c", value: .integer(.min), timestamp: timestamp(3)),
                    ColumnChange(column: "d", value: .integer(300), timestamp: timestamp(4)),
                    ColumnChange(column: "e", value: .real(-0.5), timestamp: timestamp(5)),
                    ColumnChange(column: long, value: .text(long), timestamp: timestamp(6)),
                    ColumnChange(column: "g", value: .blob(Data(repeating: 7, count: 130)), timestamp: timestamp(7)),
                    ColumnChange(column: "h", value: .text(""), timestamp: timestamp(8)),
                ]),
            SyncChange(
                kind: .update, table: "t", syncID: long,
                columns: [ColumnChange(column: "x", value: .integer(.max), timestamp: timestamp(9))]),
            SyncChange(kind: .delete, table: "t", syncID: "gone", columns: [], deletionTimestamp: timestamp(10)),
        ]
        for change in changes {
            var sink = ByteSink()
            ChangeSetRecord.encode(change, into: &sink)
            #expect(ChangeSetRecord.byteCount(of: change) == sink.bytes.count)
        }
    }
}

@Suite("Change-set passes that skip records")
struct ChangeSetSelectionTests {
    @Test("Selecting deletes or blob values delivers exactly those, from the same file the full pass reads")
    func selectedRecords() throws {
        try withTemporaryDirectory { folder in
            let url = folder.appendingPathComponent("set.syncchg")
            let changes = sampleChanges()
            _ = try writeChangeSet(changes, to: url)
            var deletes: [SyncChange] = []
            try ChangeSetReader.forEachChange(at: url, path: testPath, selecting: .deletes) { deletes.append($0) }
            #expect(deletes == changes.filter { $0.kind == .delete })
            var blobs: [SyncChange] = []
            try ChangeSetReader.forEachChange(at: url, path: testPath, selecting: .blobValues) { blobs.append($0) }
            #expect(blobs.map(\.syncID) == ["a"])
            #expect(
                blobs.first?.columns == changes[0].columns.filter { if case .blob = $0.value { true } else { false } })
            // A truncated body is still refused by a pass that skips.
            let bytes = try readBytes(url)
            try writeBytes(Array(bytes.dropLast(40)), to: url)
            #expect(throws: FolderSyncError.self) {
                try ChangeSetReader.forEachChange(at: url, path: testPath, selecting: .deletes) { _ in }
            }
        }
    }
}
