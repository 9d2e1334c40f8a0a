import BadgeKit
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where output goes: results to standard output, everything else to standard error.
/// Every line printed here may hold text from outside (a server's error, a
/// foreign badge's prompt): control characters are dropped first
/// (`OutsideText`), and `--json` escapes them.
enum Terminal {
    /// The secrets of this run's configuration (`SecretScrubber`): set once the
    /// configuration is read, applied to every line printed and logged.
    static let scrubber = Mutex(SecretScrubber(secrets: []))

    /// Text as it may be printed: secrets masked, then control characters and
    /// bidi overrides dropped (`OutsideText`). Every line badge prints goes through here.
    static func clean(_ text: String, keepingNewlines: Bool = true) -> String {
        OutsideText.printable(scrubber.withLock { $0 }.scrub(text), keepingNewlines: keepingNewlines)
    }

    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// True when the command line asks for `--json` (before a `--`): errors are then JSON too.
    static var jsonMode: Bool {
        CommandLine.arguments.dropFirst().prefix { $0 != "--" }.contains("--json")
    }

    /// An error as `--json` prints it, on standard error: `{"error": {"code", "message", "hint", ...}}`.
    struct JSONError: Encodable {
        struct Body: Encodable {
            var code: String
            var message: String
            var hint: String?
            var path: String?
            var line: Int?
            var column: Int?
            var key: String?
            var backend: String?
            var cause: String?
        }
        var error: Body

        init(_ e: BadgeError) {
            error = Body(code: e.code.rawValue, message: e.message, hint: e.hint, path: e.path, line: e.location?.line,
                         column: e.location?.column, key: e.keyPath.flatMap { $0.isEmpty ? nil : $0 }, backend: e.backend,
                         cause: e.cause)
        }
    }

    static func printError(_ error: BadgeError) {
        if jsonMode {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            if let data = try? encoder.encode(JSONError(error)) {
                let scrubbed = Data(scrubber.withLock { $0 }.scrub(String(decoding: data, as: UTF8.self)).utf8)
                Terminal.write(to: STDERR_FILENO, OutsideText.escapingControls(inJSON: scrubbed) + Data("\n".utf8))
                return
            }
        }
        let description = clean(error.description)
        var text = "error: \(description)\n"
        if stderrIsTerminal && ProcessInfo.processInfo.environment["NO_COLOR"] == nil {
            text = "\u{1B}[1;31merror:\u{1B}[0m " + description + "\n"
        }
        Terminal.write(to: STDERR_FILENO, Data(text.utf8))
    }

    /// Writes all of `data` to standard output (fd 1) or error (fd 2). A
    /// failed write (a full disk, a closed pipe) is not a crash, as it is with
    /// FileHandle's `write`: the first on standard output is said once on
    /// standard error (not a closed pipe's: its reader has what it wanted),
    /// and the command goes on; what it did stands (a command
    /// that only reports then fails: `BadgeMain.exitStatus(workStands:)`).
    static func write(to fd: Int32, _ data: Data) {
        let failed: Int32? = data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return n < 0 ? errno : EIO }
                offset += n
            }
            return nil
        }
        // A closed pipe is a reader that has what it wanted (`| head -1`): nothing to say.
        guard let failed, fd == STDOUT_FILENO, !outputFailed.exchange(true, ordering: .relaxed), failed != EPIPE else { return }
        write(to: STDERR_FILENO,
              Data("badge: cannot write to standard output: \(String(cString: strerror(failed))); what it would have said is lost\n".utf8))
    }

    private static let outputFailed = Atomic(false)

    /// Whether a write to standard output failed in this run.
    static var standardOutputFailed: Bool { outputFailed.load(ordering: .relaxed) }

    static func note(_ text: String) {
        Terminal.write(to: STDERR_FILENO, Data((clean(text) + "\n").utf8))
    }

    static func out(_ text: String) {
        Terminal.write(to: STDOUT_FILENO, Data((clean(text) + "\n").utf8))
    }

    /// Prints a value as pretty JSON with sorted keys.
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let encoded = try encoder.encode(value)
        let data = OutsideText.escapingControls(inJSON: Data(scrubber.withLock { $0 }.scrub(String(decoding: encoded, as: UTF8.self)).utf8))
        Terminal.write(to: STDOUT_FILENO, data + Data("\n".utf8))
    }

    /// The width to wrap text at on `fd`: the terminal's (TIOCGWINSZ), else
    /// `$COLUMNS`, else 80 when `fd` is a terminal; nil (no wrapping) when it is
    /// not, so a pipe or a file gets every line whole, for grep and scripts.
    static func columns(of fd: Int32) -> Int? {
        guard isatty(fd) == 1 else { return nil }
        var size = winsize()
        if ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let given = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), given > 0 { return given }
        return 80
    }

    /// `text` with each of its lines longer than `width` broken at spaces,
    /// the lines after the first indented by `indent` spaces; a word longer
    /// than a line keeps a line of its own. nil `width`: as it is.
    static func wrapped(_ text: String, width: Int?, indent: Int = 0) -> String {
        guard let width else { return text }
        let indent = min(indent, width / 2)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.count > width else { return String(line) }
            var lines: [String] = []
            var current = ""
            for word in line.split(separator: " ", omittingEmptySubsequences: false) {
                let lead = lines.isEmpty ? "" : String(repeating: " ", count: indent)
                if current.isEmpty {
                    current = lead + word
                } else if current.count + 1 + word.count <= width {
                    current += " " + word
                } else {
                    lines.append(current)
                    current = String(repeating: " ", count: indent) + word
                }
            }
            lines.append(current)
            return lines.map { String($0.reversed().drop { $0 == " " }.reversed()) }.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// Label/value lines with the labels aligned.
    /// A value's own line breaks (a promise of two lines) go on under its
    /// column, so no line of it can pass for a row of the table.
    static func table(_ rows: [(String, String?)]) -> String {
        let present = rows.compactMap { row in row.1.map { (row.0, $0) } }
        let width = present.map(\.0.count).max() ?? 0
        let under = "\n" + String(repeating: " ", count: width + 4)
        return present.map { "  " + $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
            + $0.1.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: under) }
            .joined(separator: "\n")
    }
}

/// A spinner on standard error while something slow runs, only on a terminal
/// and only once the work has taken long enough to be worth one.
final class Spinner: @unchecked Sendable {
    private let label: String
    private var task: Task<Void, Never>?

    init(_ label: String) { self.label = label }

    func start() {
        guard Terminal.stderrIsTerminal else { return }
        let label = self.label
        task = Task.detached {
            let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
            try? await Task.sleep(for: .milliseconds(400))
            var i = 0
            let clock = ContinuousClock()
            let started = clock.now
            while !Task.isCancelled {
                let elapsed = clock.now - started + .milliseconds(400)
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                let line = "\r\(frames[i % frames.count]) \(label) \(String(format: "%.1f", seconds)) s"
                Terminal.write(to: STDERR_FILENO, Data(line.utf8))
                i += 1
                try? await Task.sleep(for: .milliseconds(80))
            }
        }
    }

    func stop() {
        guard let task else { return }
        task.cancel()
        Terminal.write(to: STDERR_FILENO, Data("\r\u{1B}[2K".utf8))
    }
}

/// A command whose work stands once it is done (a badge committed, a file
/// written, a server run): a failed standard output afterwards is said, and
/// the command still succeeds. Any other command's work is what it prints.
protocol WorkStandsCommand {}

extension GenerateCommand: WorkStandsCommand {}
extension ImportCommand: WorkStandsCommand {}
extension RestoreCommand: WorkStandsCommand {}
extension BatchCommand: WorkStandsCommand {}
extension CardBackCommand: WorkStandsCommand {}
extension CardFlipCommand: WorkStandsCommand {}
extension CardHTMLCommand: WorkStandsCommand {}
extension ServeCommand: WorkStandsCommand {}
