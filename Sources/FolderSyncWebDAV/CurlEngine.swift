#if canImport(CCurl)
import CCurl
import FolderSync
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One attempt of a request through libcurl, called directly, on a thread that sleeps while it waits.
///
/// Why not URLSession, which also runs on libcurl on Linux: its socket bookkeeping
/// (swift-corelibs-foundation's `_MultiHandle`) creates a write-readiness source when libcurl asks for one
/// (while connecting or sending) and never removes it when libcurl then asks only to read. A connected
/// socket is always writable, so while a request waits for its answer that source fires without pause:
/// a server that accepts and never answers costs 18 s of CPU in 20 s (1,300 `epoll_wait`/`poll`/`ioctl`
/// rounds a second), and a slow answer costs as much CPU as it takes. `curl_easy_perform` instead sleeps in
/// poll(2) until a byte, its one-second speed check, or the timeout.
///
/// Each attempt blocks one thread of the engine's own (``BlockingThreadPool``, never one of Swift's cooperative pool);
/// at most ``maximumConcurrentRequests`` run at once, the others wait their turn without a thread. Easy handles are
/// kept between requests, so their connections are reused. Timeouts: connecting, and going without any byte in either
/// direction, are bounded by the request timeout (`CURLOPT_CONNECTTIMEOUT`, and the progress callback, which libcurl
/// calls at least once a second); the whole transfer by the resource timeout. Cancellation is seen by the progress
/// callback too.
final class CurlEngine: HTTPEngine {
    /// Like URLSession's `httpMaximumConnectionsPerHost`, which this engine replaces.
    static let maximumConcurrentRequests = 8
    /// Bodies of unsuccessful answers are kept up to this size (they are error documents), the rest is read and
    /// dropped.
    static let maximumErrorBodySize = 1 << 20

    private let timeouts: HTTPTimeouts
    private let slots = RequestSlots(CurlEngine.maximumConcurrentRequests)
    private let idleHandles = Locked<[CurlHandle]>([])
    let threads = BlockingThreadPool(maximumThreads: CurlEngine.maximumConcurrentRequests, name: "FolderSync HTTP")

    /// `curl_global_init(CURL_GLOBAL_ALL)`, the flag being a macro Swift does not import.
    private static let globalInitialization: Bool = curl_global_init(3) == CURLE_OK

    init(timeouts: HTTPTimeouts) {
        self.timeouts = timeouts
    }

    deinit {
        for handle in idleHandles.withLock({ $0 }) { curl_easy_cleanup(handle.raw) }
    }

    func perform(_ request: HTTPRequest, downloadingTo download: URL?, maximumBodySize: Int64?) async throws
        -> HTTPResponse
    {
        guard Self.globalInitialization else { throw TransportFailure.other("libcurl could not be initialized") }
        await slots.acquire()
        defer { slots.release() }
        let transfer = try CurlTransfer(
            request: request, download: download, maximumBodySize: maximumBodySize,
            idleTimeout: timeouts.request)
        let cancelled = transfer.cancelled
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                threads.run { [self] in continuation.resume(with: Result { try self.performBlocking(transfer) }) }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    /// Runs the transfer on the calling thread, which blocks until it ends.
    private func performBlocking(_ transfer: CurlTransfer) throws -> HTTPResponse {
        let handle = idleHandles.withLock { $0.popLast() } ?? CurlHandle(raw: curl_easy_init())
        guard let raw = handle.raw else { throw TransportFailure.other("libcurl could not make a handle") }
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer {
            curl_slist_free_all(headerList)
            curl_easy_reset(raw)  // keeps the handle's live connections for the next request
            let kept = idleHandles.withLock { handles -> Bool in
                guard handles.count < Self.maximumConcurrentRequests else { return false }
                handles.append(handle)
                return true
            }
            if !kept { curl_easy_cleanup(raw) }
        }
        let request = transfer.request
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var options = CurlOptions(raw)
        options.set(CURLOPT_URL, request.url.absoluteString)
        options.set(CURLOPT_NOSIGNAL, 1)
        options.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        options.set(CURLOPT_FOLLOWLOCATION, 0)
        options.set(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(timeouts.request))
        // A speed limit makes libcurl wake up once a second, when the progress callback measures idleness (see
        // CurlTransfer.progress); libcurl's own check averages over 5 s, so alone it would fire late.
        options.set(CURLOPT_LOW_SPEED_LIMIT, 1)
        options.set(CURLOPT_LOW_SPEED_TIME, max(1, Int(timeouts.request.rounded(.up))) + 5)
        options.set(CURLOPT_TIMEOUT_MS, Self.milliseconds(timeouts.resource))
        options.set(CURLOPT_ERRORBUFFER, pointer: transfer.errorBuffer)

        switch request.method {
        case "GET": options.set(CURLOPT_HTTPGET, 1)
        case "HEAD": options.set(CURLOPT_NOBODY, 1)
        default: options.set(CURLOPT_CUSTOMREQUEST, request.method)
        }
        if transfer.hasBody {
            options.set(CURLOPT_UPLOAD, 1)
            options.setOffset(CURLOPT_INFILESIZE_LARGE, transfer.uploadSize)
            options.check(foldersync_curl_set_read_function(raw, curlRead))
            options.set(CURLOPT_READDATA, pointer: context)
            options.check(foldersync_curl_set_seek_function(raw, curlSeek))
            options.set(CURLOPT_SEEKDATA, pointer: context)
        }
        // No "Expect: 100-continue" round trip before bodies; the caller's headers as they are.
        for line in ["Expect:"] + request.headers.map({ "\($0.key): \($0.value)" }) {
            headerList = curl_slist_append(headerList, line)
        }
        options.set(CURLOPT_HTTPHEADER, list: headerList)
        options.check(foldersync_curl_set_write_function(raw, CURLOPT_HEADERFUNCTION, curlHeader))
        options.set(CURLOPT_HEADERDATA, pointer: context)
        options.check(foldersync_curl_set_write_function(raw, CURLOPT_WRITEFUNCTION, curlWrite))
        options.set(CURLOPT_WRITEDATA, pointer: context)
        options.set(CURLOPT_NOPROGRESS, 0)
        options.check(foldersync_curl_set_progress_function(raw, curlProgress))
        options.set(CURLOPT_XFERINFODATA, pointer: context)
        if let failure = options.failure { throw TransportFailure.other(failure) }

        let code = curl_easy_perform(raw)
        var status = 0
        _ = foldersync_curl_get_long(raw, CURLINFO_RESPONSE_CODE, &status)
        return try transfer.finish(code: code, status: status)
    }

    private static func milliseconds(_ interval: TimeInterval) -> Int {
        interval.isFinite && interval > 0 ? Int(min(interval * 1000, Double(Int32.max))) : 0
    }
}

/// An easy handle kept for reuse; used by one thread at a time, handed between threads through the engine's `Locked`
/// list.
private struct CurlHandle {
    let raw: UnsafeMutableRawPointer?
}

/// Sets options on an easy handle, remembering the first one libcurl refused.
private struct CurlOptions {
    let raw: UnsafeMutableRawPointer
    var failure: String?

    init(_ raw: UnsafeMutableRawPointer) { self.raw = raw }

    mutating func check(_ code: CURLcode) {
        if code != CURLE_OK, failure == nil {
            failure = "libcurl refused an option (\(String(cString: curl_easy_strerror(code))))"
        }
    }

    mutating func set(_ option: CURLoption, _ value: Int) { check(foldersync_curl_set_long(raw, option, value)) }
    mutating func setOffset(_ option: CURLoption, _ value: Int64) {
        check(foldersync_curl_set_offset(raw, option, curl_off_t(value)))
    }
    mutating func set(_ option: CURLoption, _ value: String) { check(foldersync_curl_set_string(raw, option, value)) }
    mutating func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) {
        check(foldersync_curl_set_pointer(raw, option, pointer))
    }
    mutating func set(_ option: CURLoption, list: UnsafeMutablePointer<curl_slist>?) {
        check(foldersync_curl_set_list(raw, option, list))
    }
}

/// Turns a failing `CURLcode` into the transport's failure, in words.
private func transportFailure(_ code: CURLcode, detail: String) -> TransportFailure {
    switch code {
    case CURLE_OPERATION_TIMEDOUT: return .timedOut
    case CURLE_COULDNT_CONNECT: return .cannotConnect
    case CURLE_COULDNT_RESOLVE_HOST: return .cannotResolve
    case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_SEND_FAIL_REWIND:
        return .connectionLost
    case CURLE_WEIRD_SERVER_REPLY, CURLE_UNSUPPORTED_PROTOCOL: return .noAnswer
    case CURLE_PEER_FAILED_VERIFICATION: return .tls("the server's certificate is not trusted")
    case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE,
        CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_USE_SSL_FAILED,
        CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CRL_BADFILE,
        CURLE_SSL_SHUTDOWN_FAILED:
        return .tls(detail.isEmpty ? nil : detail)
    default:
        return .other(detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
    }
}

/// The state of one attempt, shared with libcurl's callbacks (which run on the attempt's thread) and, for
/// cancellation only (``cancelled``), with the task that waits for it.
private final class CurlTransfer {
    let request: HTTPRequest
    let maximumBodySize: Int64?
    let errorBuffer = UnsafeMutableRawPointer.allocate(byteCount: Int(CURL_ERROR_SIZE), alignment: 1)

    // The body to send.
    private var uploadData: Data?
    private var uploadFile: Int32 = -1
    private(set) var uploadSize: Int64 = 0
    private var uploadOffset: Int64 = 0
    var hasBody: Bool { uploadData != nil || uploadFile >= 0 }

    // The answer.
    private var download: URL?
    private var downloadFile: Int32 = -1
    private(set) var status = 0
    private var headers: [String: String] = [:]
    private var body = Data()
    private var received: Int64 = 0
    private var tooLarge: Int64?
    private var localFailure: String?
    /// Set by the task that waits for the attempt when it is cancelled: the one field another thread touches.
    let cancelled = Locked(false)

    // Idleness: the last time bytes moved, in either direction.
    private let idleTimeout: Duration
    private var lastActivity = ContinuousClock.now
    private var lastCounts: (downloaded: Int64, uploaded: Int64) = (0, 0)
    private var timedOut = false

    init(request: HTTPRequest, download: URL?, maximumBodySize: Int64?, idleTimeout: TimeInterval) throws {
        self.request = request
        self.maximumBodySize = maximumBodySize
        self.idleTimeout = .milliseconds(Int64(min(max(idleTimeout, 0.001), 1e9) * 1000))
        (errorBuffer.assumingMemoryBound(to: CChar.self)).pointee = 0
        switch request.body {
        case .none: break
        case .data(let data):
            uploadData = data
            uploadSize = Int64(data.count)
        case .file(let url):
            uploadFile = open(url.path, O_RDONLY | O_CLOEXEC)
            var info = stat()
            guard uploadFile >= 0, fstat(uploadFile, &info) == 0 else {
                throw TransportFailure.localFile("cannot read the file to upload (\(url.path))")
            }
            uploadSize = Int64(info.st_size)
        }
        if let download {
            self.download = download
            downloadFile = open(download.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard downloadFile >= 0 else {
                if uploadFile >= 0 { close(uploadFile) }
                throw TransportFailure.localFile("cannot write the download (\(download.path))")
            }
        }
    }

    deinit {
        if uploadFile >= 0 { close(uploadFile) }
        if downloadFile >= 0 { close(downloadFile) }
        errorBuffer.deallocate()
    }

    var isCancelled: Bool { cancelled.withLock { $0 } }

    /// libcurl's progress report, at least once a second: `false` stops the transfer (cancelled, or idle too long).
    func progress(downloaded: Int64, uploaded: Int64) -> Bool {
        if isCancelled { return false }
        let now = ContinuousClock.now
        if (downloaded, uploaded) != lastCounts {
            lastCounts = (downloaded, uploaded)
            lastActivity = now
        } else if now - lastActivity > idleTimeout {
            timedOut = true
            return false
        }
        return true
    }

    private var isSuccess: Bool { (200..<300).contains(status) }

    /// Copies up to `capacity` bytes of the body to send into `buffer`.
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        if isCancelled { return Int(CURL_READFUNC_ABORT) }
        if let uploadData {
            let start = Int(uploadOffset)
            let count = min(capacity, uploadData.count - start)
            guard count > 0 else { return 0 }
            uploadData.withUnsafeBytes { bytes in
                buffer.copyMemory(from: bytes.baseAddress! + start, byteCount: count)
            }
            uploadOffset += Int64(count)
            return count
        }
        while true {
            let count = Glibc.read(uploadFile, buffer, capacity)
            if count >= 0 { return count }
            if errno != EINTR {
                localFailure = "cannot read the file to upload"
                return Int(CURL_READFUNC_ABORT)
            }
        }
    }

    /// Rewinds the body to send, when libcurl must send it again (a reused connection that had closed), except for a
    /// `PUT`: libcurl would send it again on its own, to the same name, while the server may still be writing the
    /// lost attempt (wsgidav keeps a body cut short, and finished it after the new one: a torn file was then
    /// published). The failure goes up instead, and the caller sends the `PUT` again under a new name.
    func seek(to offset: Int64) -> Bool {
        guard request.method != "PUT", offset >= 0, offset <= uploadSize else { return false }
        if uploadData != nil {
            uploadOffset = offset
            return true
        }
        return lseek(uploadFile, off_t(offset), SEEK_SET) == off_t(offset)
    }

    /// One header line of the answer; `false` stops the transfer.
    func header(_ line: String) -> Bool {
        lastActivity = ContinuousClock.now
        let text = line.trimming(.whitespacesAndNewlines)
        if text.hasPrefix("HTTP/") {
            // A new status line (after a 100 Continue): start over.
            status = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            headers = [:]
            return true
        }
        if text.isEmpty {
            // The end of the headers: a bounded read is refused by its announced size, before any byte of the body.
            if isSuccess, let maximumBodySize, let length = headers["content-length"].flatMap(Int64.init),
                length > maximumBodySize
            {
                tooLarge = length
                return false
            }
            return true
        }
        guard let colon = text.firstIndex(of: ":") else { return true }
        let name = text[..<colon].trimming(.whitespaces).lowercased()
        let value = text[text.index(after: colon)...].trimming(.whitespaces)
        headers[name] = headers[name].map { $0 + ", " + value } ?? value
        return true
    }

    /// A piece of the body; `false` stops the transfer.
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        received += Int64(bytes.count)
        if isSuccess, let maximumBodySize, received > maximumBodySize {
            tooLarge = received
            return false
        }
        if downloadFile >= 0 {
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(downloadFile, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    localFailure = "cannot write the download (\(String(cString: strerror(errno))))"
                    return false
                }
                offset += written
            }
        } else if isSuccess || body.count < CurlEngine.maximumErrorBodySize {
            let count = isSuccess ? bytes.count : min(bytes.count, CurlEngine.maximumErrorBodySize - body.count)
            body.append(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)
        }
        return true
    }

    /// The answer, or why there is none.
    func finish(code: CURLcode, status finalStatus: Int) throws -> HTTPResponse {
        if downloadFile >= 0 {
            close(downloadFile)
            downloadFile = -1
        }
        let failure: TransportFailure? =
            if let tooLarge {
                .bodyTooLarge(tooLarge)
            } else if timedOut {
                .timedOut
            } else if isCancelled {
                .cancelled
            } else if let localFailure {
                .localFile(localFailure)
            } else if code != CURLE_OK {
                transportFailure(code, detail: String(cString: errorBuffer.assumingMemoryBound(to: CChar.self)))
            } else if finalStatus == 0 {
                .noAnswer
            } else {
                nil
            }
        if let failure {
            if let download { try? FileManager.default.removeItem(at: download) }
            throw failure
        }
        return HTTPResponse(status: finalStatus, headers: headers, body: body, bodyFile: download)
    }
}

// libcurl's callbacks: C functions, handed the transfer as their user data.

private func curlRead(
    _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let buffer, let context else { return Int(CURL_READFUNC_ABORT) }
    return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().read(into: buffer, capacity: size * count)
}

private func curlSeek(_ context: UnsafeMutableRawPointer?, _ offset: curl_off_t, _ origin: Int32) -> Int32 {
    // 2 is CURL_SEEKFUNC_CANTSEEK.
    guard let context, origin == SEEK_SET else { return 2 }
    return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().seek(to: Int64(offset)) ? 0 : 1
}

private func curlHeader(
    _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let buffer, let context else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: buffer, count: size * count)
    let line = String(decoding: bytes, as: UTF8.self)
    return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().header(line) ? size * count : 0
}

private func curlWrite(
    _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let buffer, let context else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: buffer, count: size * count)
    return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().write(bytes) ? size * count : 0
}

private func curlProgress(
    _ context: UnsafeMutableRawPointer?, _ downloadTotal: curl_off_t, _ downloaded: curl_off_t,
    _ uploadTotal: curl_off_t, _ uploaded: curl_off_t
) -> Int32 {
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.progress(downloaded: Int64(downloaded), uploaded: Int64(uploaded)) ? 0 : 1
}

/// At most `count` requests at a time; the others wait in order, without holding a thread.
private final class RequestSlots: Sendable {
    private let state: Locked<(free: Int, waiting: [CheckedContinuation<Void, Never>])>

    init(_ count: Int) { state = Locked((count, [])) }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
#endif
