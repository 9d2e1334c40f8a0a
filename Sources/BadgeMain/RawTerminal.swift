import BadgeKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The terminal in raw mode, for a picker that reads single keys: no echo, no
/// line editing, and Ctrl-C arrives as a key (the picker cancels on it), not as
/// SIGINT. `restore()` puts back the settings it found; the picker calls it on
/// every way out.
final class RawTerminal: @unchecked Sendable {
    let input: Int32
    let output: Int32
    private var saved = termios()
    private var isRaw = false

    /// A key as the picker reads it.
    enum Key: Equatable {
        case character(Character)
        /// Esc on its own (an arrow key's sequence is read whole and ignored).
        case escape
        case interrupt
        case other
    }

    init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) throws {
        self.input = input
        self.output = output
        guard tcgetattr(input, &saved) == 0 else {
            throw BadgeError(.io, "cannot read the terminal's settings", cause: BadgeError.errnoDescription(errno),
                             hint: "add --pick K to choose without a terminal")
        }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(input, TCSANOW, &raw) == 0 else {
            throw BadgeError(.io, "cannot put the terminal in raw mode", cause: BadgeError.errnoDescription(errno),
                             hint: "add --pick K to choose without a terminal")
        }
        isRaw = true
    }

    deinit { restore() }

    func restore() {
        guard isRaw else { return }
        _ = tcsetattr(input, TCSANOW, &saved)
        isRaw = false
    }

    /// Writes `text` whole.
    func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(output, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }

    /// The terminal's size in cells and, when it says, in pixels.
    var size: (columns: Int, rows: Int, pixelWidth: Int, pixelHeight: Int) {
        var window = winsize()
        guard ioctl(output, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 else { return (80, 24, 0, 0) }
        return (Int(window.ws_col), Int(window.ws_row), Int(window.ws_xpixel), Int(window.ws_ypixel))
    }

    /// One byte, or nil when none comes within `timeout` milliseconds.
    private func byte(within timeout: Int32) -> UInt8? {
        var descriptor = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, timeout) > 0 else { return nil }
        var byte: UInt8 = 0
        return read(input, &byte, 1) == 1 ? byte : nil
    }

    /// The next key, waiting at most `timeout` milliseconds (nil: none came).
    /// Blocking: call it off Swift's cooperative threads.
    func key(within timeout: Int32) -> Key? {
        guard let first = byte(within: timeout) else { return nil }
        switch first {
        case 0x03: return .interrupt
        case 0x1B:
            // An escape sequence comes at once; a lone Esc is the key.
            guard let next = byte(within: 30) else { return .escape }
            if next == UInt8(ascii: "[") || next == UInt8(ascii: "O") {
                while let b = byte(within: 30), !(0x40...0x7E).contains(b) {}
            }
            return .other
        case 0x20...0x7E: return .character(Character(Unicode.Scalar(first)))
        default: return .other
        }
    }

    /// Asks the terminal for its primary device attributes (DA1) and returns
    /// the answer's parameters, or nil when it does not answer within `timeout`
    /// milliseconds (a terminal that never answers costs the timeout once).
    func deviceAttributes(timeout: Int32) -> [Int]? {
        write("\u{1B}[c")
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout))
        var answer: [UInt8] = []
        while ContinuousClock.now < deadline, answer.count < 256 {
            let left = deadline - ContinuousClock.now
            guard let b = byte(within: Int32(max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))) else { break }
            answer.append(b)
            if b == UInt8(ascii: "c") { break }
        }
        // ESC [ ? 6 2 ; 4 ; ... c
        guard let start = answer.firstIndex(of: UInt8(ascii: "?")), answer.last == UInt8(ascii: "c") else { return nil }
        let body = String(decoding: answer[(start + 1)..<(answer.count - 1)], as: UTF8.self)
        return body.split(separator: ";").compactMap { Int($0) }
    }
}
