import Foundation

/// Hands values from one thread to another in batches, with at most `capacity` batches waiting.
///
/// A bulk sync is two halves of similar cost: SQLite on one side, encoding and zlib on the other.
/// Run on two threads joined by a handoff, they overlap; the bound keeps memory flat
/// when one half is faster than the other. Either side can stop the other: the producer by
/// ``finish(throwing:)`` (its error reaches the consumer), the consumer by ``cancel()``
/// (the producer's next ``send(_:)`` throws).
///
/// A consumed batch goes back to the producer (``giveBack(_:)``), whose thread frees it at its next send (the last
/// few go with the handoff): freed by the consumer, each value's memory would return to the malloc arena of the
/// thread that allocated it, under that arena's lock, which the producer takes at every allocation: the two threads
/// would contend for that lock all through a bulk sync.
///
final class BatchHandoff<Element>: Sendable {
    /// Thrown by ``send(_:)`` once the consumer has gone.
    struct Cancelled: Error {}

    private struct State {
        var batches: [[Element]] = []
        /// Batches the consumer is done with, to be freed by the producer at its next send.
        var consumed: [[Element]] = []
        var finished = false
        var failure: (any Error)?
        var cancelled = false
    }

    private let capacity: Int
    /// Either side waits on it: the producer for room, the consumer for a batch.
    private let state = Locked(State())

    init(capacity: Int = 4) {
        precondition(capacity > 0, "capacity must be positive")
        self.capacity = capacity
    }

    /// Waits while `capacity` batches are waiting, then adds `batch`; frees the batches given back meanwhile.
    func send(_ batch: [Element]) throws {
        var done = try state.withLock(when: { $0.batches.count < capacity || $0.cancelled }) { state, _ in
            guard !state.cancelled else { throw Cancelled() }
            state.batches.append(batch)
            var done: [[Element]] = []
            swap(&done, &state.consumed)
            return done
        }
        state.wakeAll()
        done.removeAll()  // on this thread, outside the lock
    }

    /// The consumer is done with `batch`: the producer frees it. The caller passes its last reference (`consume`),
    /// or the caller's thread may still be the one that frees it.
    func giveBack(_ batch: consuming [Element]) {
        var given = Optional(batch)  // taken inside, so that the list holds the last reference
        state.withLock { $0.consumed.append(given.take()!) }
    }

    /// No more batches; `error`, if any, is thrown to the consumer after the batches already sent.
    func finish(throwing error: (any Error)? = nil) {
        state.withLock { state in
            state.finished = true
            state.failure = error
        }
        state.wakeAll()
    }

    /// The next batch, or `nil` once the producer finished and every batch was taken.
    func receive() throws -> [Element]? {
        let batch = try state.withLock(when: { !$0.batches.isEmpty || $0.finished }) { state, _ -> [Element]? in
            if !state.batches.isEmpty { return state.batches.removeFirst() }
            if let failure = state.failure { throw failure }
            return nil
        }
        if batch != nil { state.wakeAll() }
        return batch
    }

    /// The consumer stops taking batches: a producer waiting in ``send(_:)`` is released with ``Cancelled``.
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            state.batches.removeAll()
        }
        state.wakeAll()
    }
}

extension BatchHandoff {
    /// Runs `produce` on a thread of its own, feeding the batches it sends to `consume` on this thread, and
    /// returns when both are done. An error of either side ends both and is rethrown here (the consumer's first).
    static func run(
        capacity: Int = 4, produce: @escaping @Sendable (BatchHandoff<Element>) throws -> Void,
        consume: ([Element]) throws -> Void
    ) throws {
        let handoff = BatchHandoff(capacity: capacity)
        let producer = HandoffThread {
            do {
                try produce(handoff)
                handoff.finish()
            } catch {
                handoff.finish(throwing: error)
            }
        }
        defer { producer.join() }
        do {
            while let batch = try handoff.receive() {
                try consume(batch)
                handoff.giveBack(consume batch)
            }
        } catch {
            handoff.cancel()
            throw error
        }
    }
}

/// Consumes values on a thread of its own, in batches, while the caller goes on producing them.
///
/// The caller's thread adds values with ``add(_:)``, then calls ``finish()``, which waits for the consumer
/// and rethrows its error; or ``abandon()`` when the caller fails. `consume` runs on the consumer thread, and
/// whatever it captured is the caller's again once ``finish()`` or ``abandon()`` returned. The thread starts with
/// the first full batch: fewer values than one batch are consumed by ``finish()`` on the caller's thread (a thread
/// started for the one change of a small sync cost more than its work).
final class BackgroundBatchConsumer<Element: Sendable> {
    private let handoff: BatchHandoff<Element>
    private var consumer: HandoffThread?
    private let failure: Locked<(any Error)?>
    private let batchSize: Int
    private var batch: [Element] = []
    private let consume: ([Element]) throws -> Void

    init(batchSize: Int = 256, capacity: Int = 4, consume: @escaping ([Element]) throws -> Void) {
        handoff = BatchHandoff<Element>(capacity: capacity)
        failure = Locked<(any Error)?>(nil)
        self.batchSize = batchSize
        self.consume = consume
        batch.reserveCapacity(batchSize)
    }

    /// The consumer thread, started at the first call.
    private func startedConsumer() -> HandoffThread {
        if let consumer { return consumer }
        let handoff = handoff
        let failure = failure
        // Used by the consumer thread alone until `finish()` or `abandon()` joined it.
        nonisolated(unsafe) let consume = consume
        let started = HandoffThread {
            do {
                while let batch = try handoff.receive() {
                    try consume(batch)
                    handoff.giveBack(consume batch)
                }
            } catch {
                failure.withLock { $0 = error }
                handoff.cancel()
            }
        }
        consumer = started
        return started
    }

    /// Queues `element`; throws the consumer's error once it failed.
    func add(_ element: Element) throws {
        batch.append(element)
        guard batch.count >= batchSize else { return }
        try send()
    }

    /// Sends what is left, waits for the consumer to take everything, and rethrows its error.
    func finish() throws {
        guard let consumer else {
            // Never a full batch: consumed here.
            let rest = batch
            batch = []
            if !rest.isEmpty { try consume(rest) }
            return
        }
        if !batch.isEmpty { try send() }
        handoff.finish()
        consumer.join()
        if let error = failure.current { throw error }
    }

    /// Stops the consumer without waiting for what is queued; returns once it stopped.
    func abandon() {
        batch = []
        handoff.cancel()
        handoff.finish()
        consumer?.join()
    }

    private func send() throws {
        let consumer = startedConsumer()
        let full = batch
        batch = []
        batch.reserveCapacity(batchSize)
        do {
            try handoff.send(full)
        } catch is BatchHandoff<Element>.Cancelled {
            consumer.join()
            throw failure.current ?? BatchHandoff<Element>.Cancelled()
        }
    }
}

/// A thread started at once that can be waited for.
///
/// A dedicated thread, not a task or a Dispatch queue: the other side blocks its own thread (a database
/// queue) while it waits, and the handoff's partner must not depend on a pool that thread belongs to.
final class HandoffThread: Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () -> Void) {
        let done = done
        let thread = Thread {
            body()
            done.signal()
        }
        thread.start()
    }

    /// Waits until the thread's work returned (at once when it already did).
    func join() {
        done.wait()
        done.signal()
    }
}
