import CZlib
import Foundation

/// Streaming zlib compression (RFC 1950 framing): bytes go in, compressed
/// chunks go to a sink as soon as zlib emits them, so a file of any size is
/// compressed in bounded memory.
///
/// `deflateInit2` is a C macro Swift cannot import; `deflateInit2_` with the
/// version string and the structure size is what it expands to.
final class DeflateStream {
    static let chunkSize = 64 * 1024

    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutablePointer<Bytef>
    private let sink: (UnsafeRawBufferPointer) throws -> Void
    private let path: String
    private var isFinished = false

    /// - Parameters:
    ///   - level: 1 (fastest, the default: ~5× faster than level 6 for ~10 % larger output) through 9.
    ///   - path: the file to name in errors.
    ///   - sink: receives each compressed chunk; the buffer is only valid during the call.
    init(level: Int32 = 1, path: String, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) throws {
        self.path = path
        self.sink = sink
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        output = .allocate(capacity: Self.chunkSize)
        let status = deflateInit2_(
            stream, level, Z_DEFLATED, MAX_WBITS, 8, Z_DEFAULT_STRATEGY,
            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            stream.deallocate()
            output.deallocate()
            throw FolderSyncError(.localStoreFailed, "cannot start zlib compression (status \(status))", path: path)
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
        output.deallocate()
    }

    /// Compresses `bytes`; output reaches the sink whenever zlib's window fills.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        precondition(!isFinished, "DeflateStream written after finish()")
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        var offset = 0
        while offset < bytes.count {
            let length = min(bytes.count - offset, Int(UInt32.max))
            stream.pointee.next_in = UnsafeMutablePointer(mutating: (base + offset).assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(length)
            try run(flush: Z_NO_FLUSH)
            offset += length
        }
    }

    /// Flushes everything and ends the zlib stream (with its Adler-32).
    func finish() throws {
        precondition(!isFinished, "DeflateStream finished twice")
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        try run(flush: Z_FINISH)
        isFinished = true
    }

    private func run(flush: Int32) throws {
        repeat {
            stream.pointee.next_out = output
            stream.pointee.avail_out = uInt(Self.chunkSize)
            let status = deflate(stream, flush)
            guard status == Z_OK || status == Z_BUF_ERROR || status == Z_STREAM_END else {
                throw FolderSyncError(.localStoreFailed, "zlib compression failed (status \(status))", path: path)
            }
            let produced = Self.chunkSize - Int(stream.pointee.avail_out)
            if produced > 0 { try sink(UnsafeRawBufferPointer(start: output, count: produced)) }
            if status == Z_STREAM_END { return }
        } while stream.pointee.avail_out == 0 || (flush == Z_FINISH)
    }
}

/// Streaming zlib decompression that pulls compressed bytes from a source on demand.
///
/// A stream that runs out of input before zlib's end marker is truncated, and
/// is reported as a corrupt file: zlib alone would just wait for more input.
final class InflateStream {
    static let chunkSize = 64 * 1024

    private let stream: UnsafeMutablePointer<z_stream>
    private let input: UnsafeMutablePointer<Bytef>
    private let source: (UnsafeMutableRawBufferPointer) throws -> Int
    private let path: String
    private var sourceIsExhausted = false
    /// Whether zlib's end marker (and a matching Adler-32) has been read.
    private(set) var isAtEnd = false

    /// - Parameters:
    ///   - path: the file to name in errors.
    ///   - source: fills the buffer with compressed bytes and returns how many; 0 at the end of the input.
    init(path: String, source: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) throws {
        self.path = path
        self.source = source
        stream = try makeInflater(path: path)
        input = .allocate(capacity: Self.chunkSize)
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        input.deallocate()
    }

    /// Compressed bytes the source supplied beyond the end of the zlib stream.
    var unconsumedInputCount: Int { Int(stream.pointee.avail_in) }

    /// Fills `buffer` with decompressed bytes and returns how many; 0 only at the end of the stream.
    ///
    /// - Throws: ``FolderSyncError/Code/corruptFile`` when the input is invalid or ends early.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0, !isAtEnd else { return 0 }
        stream.pointee.next_out = base.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(min(buffer.count, Int(UInt32.max)))
        let capacity = Int(stream.pointee.avail_out)
        while stream.pointee.avail_out > 0 {
            if stream.pointee.avail_in == 0 && !sourceIsExhausted {
                let count = try source(UnsafeMutableRawBufferPointer(start: input, count: Self.chunkSize))
                if count == 0 {
                    sourceIsExhausted = true
                } else {
                    stream.pointee.next_in = input
                    stream.pointee.avail_in = uInt(count)
                }
            }
            let status = inflate(stream, Z_NO_FLUSH)
            switch status {
            case Z_STREAM_END:
                isAtEnd = true
                return capacity - Int(stream.pointee.avail_out)
            case Z_OK:
                continue
            case Z_BUF_ERROR where sourceIsExhausted && stream.pointee.avail_in == 0:
                throw FolderSyncError(
                    .corruptFile, "compressed data ends before its end marker (truncated)", path: path)
            case Z_MEM_ERROR:
                throw FolderSyncError(.localStoreFailed, "out of memory while decompressing", path: path)
            default:
                let detail = stream.pointee.msg.map { String(cString: $0) } ?? "status \(status)"
                throw FolderSyncError(.corruptFile, "compressed data is invalid: \(detail)", path: path)
            }
        }
        return capacity
    }
}

/// A `z_stream` ready to inflate (zlib format, not raw or gzip); the caller ends and deallocates it.
private func makeInflater(path: String) throws -> UnsafeMutablePointer<z_stream> {
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    stream.initialize(to: z_stream())
    let status = inflateInit2_(stream, MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
    guard status == Z_OK else {
        stream.deallocate()
        throw FolderSyncError(.localStoreFailed, "cannot start zlib decompression (status \(status))", path: path)
    }
    return stream
}

/// Streaming zlib decompression fed by the caller: compressed bytes are pushed in as they arrive (a download
/// being read), decompressed bytes go to a sink.
///
/// Bytes pushed after zlib's end marker are an error; so is ``finish()`` before it (a truncated stream).
final class InflatePushStream {
    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutablePointer<Bytef>
    private let sink: (UnsafeRawBufferPointer) throws -> Void
    private let path: String
    /// Whether zlib's end marker (and a matching Adler-32) has been read.
    private(set) var isAtEnd = false

    /// - Parameters:
    ///   - path: the file to name in errors.
    ///   - sink: receives each decompressed chunk; the buffer is only valid during the call.
    init(path: String, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) throws {
        self.path = path
        self.sink = sink
        stream = try makeInflater(path: path)
        output = .allocate(capacity: InflateStream.chunkSize)
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        output.deallocate()
    }

    /// Decompresses `bytes`, passing every decompressed chunk to the sink.
    ///
    /// - Throws: ``FolderSyncError/Code/corruptFile`` when the input is invalid or goes on past the end marker.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard !isAtEnd else {
            throw FolderSyncError(.corruptFile, "compressed data goes on after its end marker", path: path)
        }
        var offset = 0
        while offset < bytes.count {
            let length = min(bytes.count - offset, Int(UInt32.max))
            stream.pointee.next_in = UnsafeMutablePointer(mutating: (base + offset).assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(length)
            while stream.pointee.avail_in > 0 || stream.pointee.avail_out == 0 {
                stream.pointee.next_out = output
                stream.pointee.avail_out = uInt(InflateStream.chunkSize)
                let status = inflate(stream, Z_NO_FLUSH)
                let produced = InflateStream.chunkSize - Int(stream.pointee.avail_out)
                switch status {
                case Z_OK, Z_BUF_ERROR:
                    break
                case Z_STREAM_END:
                    isAtEnd = true
                case Z_MEM_ERROR:
                    throw FolderSyncError(.localStoreFailed, "out of memory while decompressing", path: path)
                default:
                    let detail = stream.pointee.msg.map { String(cString: $0) } ?? "status \(status)"
                    throw FolderSyncError(.corruptFile, "compressed data is invalid: \(detail)", path: path)
                }
                if produced > 0 { try sink(UnsafeRawBufferPointer(start: output, count: produced)) }
                if isAtEnd {
                    guard stream.pointee.avail_in == 0 else {
                        throw FolderSyncError(.corruptFile, "compressed data goes on after its end marker", path: path)
                    }
                    return
                }
                if status == Z_BUF_ERROR { break }
            }
            offset += length
        }
    }

    /// Ends the input. - Throws: ``FolderSyncError/Code/corruptFile`` when the end marker was not reached (truncated).
    func finish() throws {
        guard isAtEnd else {
            throw FolderSyncError(.corruptFile, "compressed data ends before its end marker (truncated)", path: path)
        }
    }
}
