import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import FolderSyncWebDAV
@testable import TestSupport

/// The WebDAV engine's threads (issue 38, item 14): jobs queued while a thread is idle start at once, up to the
/// pool's size, so one slow transfer never holds back the others that `RequestSlots` admitted beside it.
@Suite("Blocking thread pool")
struct BlockingThreadPoolTests {
    /// Waits, off the cooperative pool, until `pool` has `count` idle threads.
    private static func idle(_ pool: BlockingThreadPool, threads count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                pool.waitUntilIdle(threads: count)
                continuation.resume()
            }
        }
    }

    /// Waits, off the cooperative pool, for `semaphore`; false when `seconds` passed first (a failure bound).
    private static func wait(_ semaphore: DispatchSemaphore, seconds: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: semaphore.wait(timeout: .now() + .seconds(seconds)) == .success)
            }
        }
    }

    @Test(
        "Jobs queued while a thread is idle, the first blocked until the test releases it: the others run beside it at once"
    )
    func slowJobBesideFastOnes() async {
        let pool = BlockingThreadPool(maximumThreads: 4, name: "test")
        let warmedUp = DispatchSemaphore(value: 0)
        pool.run { warmedUp.signal() }
        #expect(await Self.wait(warmedUp, seconds: 60))
        await Self.idle(pool, threads: 1)

        let release = DispatchSemaphore(value: 0)
        let slowDone = DispatchSemaphore(value: 0)
        let fastDone = DispatchSemaphore(value: 0)
        pool.run {
            release.wait()
            slowDone.signal()
        }
        for _ in 0..<3 { pool.run { fastDone.signal() } }
        var finished = 0
        for _ in 0..<3 {
            if await Self.wait(fastDone, seconds: 30) { finished += 1 }
        }
        #expect(finished == 3, "the fast jobs waited behind the slow one")
        release.signal()
        #expect(await Self.wait(slowDone, seconds: 60))
    }

    @Test(
        "Through libcurl and a real WebDAV server: an upload the server holds does not keep the requests sent beside it waiting"
    )
    func heldUploadBesideFastRequests() async throws {
        let directory = TemporaryDirectory()
        let proxy = try await FaultProxy(root: directory.subdirectory("share"), hold: "slow")
        let engine = CurlEngine(timeouts: HTTPTimeouts(request: 20, resource: 120))
        func get(_ name: String) async throws -> Int {
            try await engine.perform(
                HTTPRequest(method: "GET", url: proxy.url.appendingPathComponent(name)),
                downloadingTo: nil, maximumBodySize: nil
            ).status
        }
        #expect(try await get("warm-up") == 404)
        await Self.idle(engine.threads, threads: 1)

        let slowEnded = Locked(false)
        let slow = Task {
            defer { slowEnded.withLock { $0 = true } }
            _ = try? await engine.perform(
                HTTPRequest(
                    method: "PUT", url: proxy.url.appendingPathComponent("slow.bin"),
                    body: .data(Data(count: 64 * 1024))), downloadingTo: nil, maximumBodySize: nil)
        }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<6 { group.addTask { try await get("fast-\(index)") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 404, count: 6))
        try await proxy.waitFor("midupload ")
        #expect(!slowEnded.current, "the requests beside the held upload waited until it timed out")
        proxy.send("continue")
        await slow.value
        _ = await proxy.stop()
    }
}
