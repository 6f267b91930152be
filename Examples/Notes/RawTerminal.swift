import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The terminal in raw mode, for `notes app`: keys arrive one by one, unechoed, and the screen is drawn with ANSI
/// escape sequences on the alternate screen. No curses library: the few sequences used are those every terminal
/// emulator (and tmux) understands.
final class RawTerminal: @unchecked Sendable {
    /// A key the interface acts on.
    enum Key: Equatable, Sendable {
        case character(Character)
        case enter, backspace, escape, up, down
        /// Ctrl-C or the end of input: the app quits.
        case interrupt
    }

    private var saved = termios()
    private let lock = NSLock()
    private var restored = false

    /// Puts standard input in raw mode and switches to the alternate screen.
    /// - Throws: when standard input is not a terminal.
    init() throws {
        guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &saved) == 0 else {
            throw NotesError("notes app needs a terminal (run it in one, or in tmux)")
        }
        var raw = saved
        cfmakeraw(&raw)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        write("\u{1B}[?1049h\u{1B}[?25l")  // the alternate screen, no cursor
    }

    /// Puts the terminal back as it was (once).
    func restore() {
        let first = lock.withLock { () -> Bool in
            defer { restored = true }
            return !restored
        }
        guard first else { return }
        write("\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }

    /// The terminal's size, rows and columns (24 × 80 when it does not say).
    var size: (rows: Int, columns: Int) {
        var size = winsize()
        let code = withUnsafeMutablePointer(to: &size) { ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), $0) }
        guard code == 0, size.ws_row > 0, size.ws_col > 0 else { return (24, 80) }
        return (Int(size.ws_row), Int(size.ws_col))
    }

    /// Replaces the screen with `lines` (each cut to the width), the cursor left at the bottom.
    func draw(_ lines: [String]) {
        let (rows, columns) = size
        var screen = "\u{1B}[H"
        for (index, line) in lines.prefix(rows).enumerated() {
            screen += Self.cut(line, to: columns) + "\u{1B}[K" + (index + 1 < min(rows, lines.count) ? "\r\n" : "")
        }
        write(screen + "\u{1B}[J")
    }

    /// The keys typed from now on, read on a thread of their own; the stream ends with ``Key/interrupt``.
    func keys() -> AsyncStream<Key> {
        let (stream, continuation) = AsyncStream<Key>.makeStream()
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 256)
            var pending: [UInt8] = []  // a character's UTF-8 bytes split across reads
            while true {
                let count = read(STDIN_FILENO, &buffer, buffer.count)
                guard count > 0 else {
                    continuation.yield(.interrupt)
                    continuation.finish()
                    return
                }
                for key in Self.keys(in: Array(buffer.prefix(count)), pending: &pending) { continuation.yield(key) }
            }
        }
        thread.start()
        return stream
    }

    /// The keys in `bytes` as one read delivered them: an escape sequence comes whole in one read.
    static func keys(in bytes: [UInt8], pending: inout [UInt8]) -> [Key] {
        switch bytes {
        case [0x1B]: return [.escape]
        case [0x1B, 0x5B, 0x41], [0x1B, 0x4F, 0x41]: return [.up]
        case [0x1B, 0x5B, 0x42], [0x1B, 0x4F, 0x42]: return [.down]
        default: break
        }
        var keys: [Key] = []
        for byte in bytes {
            switch byte {
            case 0x03, 0x04: keys.append(.interrupt)
            case 0x0D, 0x0A: keys.append(.enter)
            case 0x7F, 0x08: keys.append(.backspace)
            case 0x1B: keys.append(.escape)
            case 0x00..<0x20: continue
            default:
                pending.append(byte)
                let text = String(decoding: pending, as: UTF8.self)
                // Wait for the rest of a character whose bytes are split across reads.
                if text.unicodeScalars.last == "\u{FFFD}" && pending.count < 4 { continue }
                keys += text.map { .character($0) }
                pending = []
            }
        }
        return keys
    }

    /// `line` cut to `columns` characters, its escape sequences (colours) not counted.
    static func cut(_ line: String, to columns: Int) -> String {
        var result = ""
        var shown = 0
        var inEscape = false
        for character in line {
            if character == "\u{1B}" { inEscape = true }
            if inEscape {
                result.append(character)
                if character.isLetter && character != "[" { inEscape = false }
                continue
            }
            guard shown < columns else { break }
            result.append(character)
            shown += 1
        }
        return result + (line.contains("\u{1B}") ? "\u{1B}[0m" : "")
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
