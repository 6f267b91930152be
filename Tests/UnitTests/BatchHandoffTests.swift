import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// The two-thread handoffs of a bulk sync: what one side produces reaches the other whole and in order, and a
/// failure on either side ends both, with its own error, and leaves no thread behind.
@Suite("Batch handoff between threads")
struct BatchHandoffTests {
    struct Failure: Error, Equatable { let side: String }

    @Test("A producer thread's batches reach the consumer in order, through a bound smaller than what is sent")
    func producedInOrder() throws {
        var received: [Int] = []
        try BatchHandoff<Int>.run(
            capacity: 2,
            produce: { handoff in
                for start in stride(from: 0, to: 1_000, by: 10) { try handoff.send(Array(start..<start + 10)) }
            }, consume: { received += $0 })
        #expect(received == Array(0..<1_000))
    }

    @Test("A producer's error reaches the consumer after the batches sent before it")
    func producerFails() {
        var received: [Int] = []
        #expect(throws: Failure(side: "producer")) {
            try BatchHandoff<Int>.run(
                produce: { handoff in
                    try handoff.send([1, 2])
                    throw Failure(side: "producer")
                }, consume: { received += $0 })
        }
        #expect(received == [1, 2])
    }

    @Test("A consumer's error stops a producer blocked on a full handoff, and is the one thrown")
    func consumerFails() {
        let sent = Locked(0)
        #expect(throws: Failure(side: "consumer")) {
            try BatchHandoff<Int>.run(
                capacity: 1,
                produce: { handoff in
                    // Would never end if the consumer's failure did not release it.
                    while true {
                        try handoff.send([0])
                        sent.withLock { $0 += 1 }
                    }
                }, consume: { _ in throw Failure(side: "consumer") })
        }
        #expect(sent.current >= 1)
    }

    @Test("A background consumer takes every value in order; finish waits for it")
    func backgroundConsumerInOrder() throws {
        var received: [Int] = []
        let consumer = BackgroundBatchConsumer<Int>(batchSize: 7, capacity: 2) { received += $0 }
        for value in 0..<1_000 { try consumer.add(value) }
        try consumer.finish()
        #expect(received == Array(0..<1_000))
    }

    @Test("A background consumer's error is thrown to the producer: by add once it is known, else by finish")
    func backgroundConsumerFails() throws {
        let consumer = BackgroundBatchConsumer<Int>(batchSize: 1, capacity: 1) { batch in
            if batch == [3] { throw Failure(side: "consumer") }
        }
        var thrownByAdd: (any Error)?
        for value in 0..<10_000 {
            do { try consumer.add(value) } catch {
                thrownByAdd = error
                break
            }
        }
        #expect(thrownByAdd as? Failure == Failure(side: "consumer"))
        #expect(throws: Failure(side: "consumer")) { try consumer.finish() }
        consumer.abandon()
    }

    @Test("Abandoning a background consumer stops it without taking what is queued")
    func abandon() throws {
        let taken = Locked(0)
        let consumer = BackgroundBatchConsumer<Int>(batchSize: 1, capacity: 100) { _ in taken.withLock { $0 += 1 } }
        for value in 0..<50 { try consumer.add(value) }
        consumer.abandon()
        let after = taken.current
        #expect(after <= 50)
        consumer.abandon()
        #expect(taken.current == after, "nothing runs after abandon returned")
    }

    /// Counts the values freed on a thread marked as the producer's.
    final class Tracked: Sendable {
        static let producerKey = "FolderSyncTests.producerThread"
        let freedOnProducer: Locked<Int>
        init(_ freedOnProducer: Locked<Int>) { self.freedOnProducer = freedOnProducer }
        deinit {
            if Thread.current.threadDictionary[Self.producerKey] != nil { freedOnProducer.withLock { $0 += 1 } }
        }
    }

    @Test(
        "Consumed batches are freed on the producer's thread, all but the last few: the thread whose malloc arena they came from"
    )
    func consumedBatchesFreedByProducer() throws {
        let freedOnProducer = Locked(0)
        try BatchHandoff<Tracked>.run(
            capacity: 2,
            produce: { handoff in
                Thread.current.threadDictionary[Tracked.producerKey] = true
                for _ in 0..<20 { try handoff.send((0..<10).map { _ in Tracked(freedOnProducer) }) }
            }, consume: { #expect($0.count == 10) })
        // Not freed by the producer: what is given back after its last send, the batch being consumed then and the
        // ones queued (capacity 2), 10 values each; they go with the handoff, whenever its producer thread lets go.
        #expect(freedOnProducer.current >= 200 - 3 * 10)
    }

    @Test("A background consumer's batches are freed on the producing thread, all but the last few")
    func backgroundConsumerBatchesFreedByProducer() throws {
        let freedOnProducer = Locked(0)
        Thread.current.threadDictionary[Tracked.producerKey] = true
        defer { Thread.current.threadDictionary[Tracked.producerKey] = nil }
        let consumer = BackgroundBatchConsumer<Tracked>(batchSize: 10, capacity: 2) { #expect($0.count == 10) }
        for _ in 0..<200 { try consumer.add(Tracked(freedOnProducer)) }
        try consumer.finish()
        #expect(freedOnProducer.current >= 200 - 3 * 10)
    }
}
