import BadgeKit
import Foundation
import Logging

/// Compact log lines on standard error: `badge: level: message key=value`,
/// the metadata as logfmt writes it: a value with a space, a quote, an `=`
/// or nothing in it is quoted (`motif="runner <- run"`), so each one ends
/// where it seems to. Metadata values whose keys look like credentials are
/// never printed.
struct StderrLogHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    static func logger(verbose: Bool) -> Logger {
        let level: Logger.Level = verbose ? .debug : .warning
        return Logger(label: "badge") { _ in StderrLogHandler(logLevel: level) }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        var line = "badge: \(event.level): \(event.message)"
        for key in merged.keys.sorted() {
            let lower = key.lowercased()
            let secret = ["key", "token", "secret", "password", "authorization"].contains { lower.contains($0) }
                && !lower.hasSuffix("env")
            line += " \(key)=\(secret ? "********" : Self.logfmt("\(merged[key]!)"))"
        }
        // One line per event: values from outside lose their control characters and line breaks,
        // and every secret of the configuration is masked, in the message and the metadata alike.
        Terminal.write(to: STDERR_FILENO, Data((Terminal.clean(line, keepingNewlines: false) + "\n").utf8))
    }

    /// `value` as a logfmt value: as it is, or in double quotes with its
    /// quotes and backslashes escaped.
    static func logfmt(_ value: String) -> String {
        guard value.isEmpty || value.unicodeScalars.contains(where: { " \"=\\".unicodeScalars.contains($0) || $0.properties.isWhitespace })
        else { return value }
        var quoted = "\""
        for character in value {
            if character == "\"" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }
}
