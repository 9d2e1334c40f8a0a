import BadgeKit
import Foundation

/// How `badge serve` listens and what it admits: the address, the token that
/// guards the studio, the names a browser may call it by, and the bounds on
/// rendering and on what a client may send.
package struct ServeSettings: Sendable {
    /// The address to bind, as given: "127.0.0.1", "::1", "0.0.0.0", a host name.
    package var host: String
    /// 0 asks the system for a free port; the URL printed names the real one.
    package var port: Int
    /// Guards the studio: every request to its API carries it in the
    /// `X-Badge-Token` header.
    package var token: String
    /// Only the stateless API (`/v1/...`, `/healthz`): no studio, no store.
    package var renderOnly: Bool
    /// Renders at once; more wait in the queue.
    package var renderConcurrency: Int
    /// Renders that may wait for a free slot; past them a request gets 503.
    package var renderQueue: Int
    /// The largest side the render API draws.
    package var maxRenderSize: Int
    /// Host names (without the port) the studio answers to, besides loopback's.
    package var allowedHosts: [String]
    /// A request's head and body must arrive within this; a connection idle
    /// this long between requests is closed.
    package var requestTimeout: Duration
    /// The largest request body the studio reads (its requests are small JSON).
    package var maxBodyBytes: Int
    /// The most candidate sets the studio keeps in memory at once.
    package var maxJobs: Int

    package static let portRange = 0...65535
    package static let defaultMaxRenderSize = 1024
    /// One render more than there are cores: a render spends part of its time
    /// handing its work from thread to thread rather than on a core, and the
    /// one more keeps every core busy meanwhile (docs/PERFORMANCE.md, serve).
    package static var defaultRenderConcurrency: Int { ProcessInfo.processInfo.activeProcessorCount + 1 }
    package static let tokenVariable = "BADGE_SERVE_TOKEN"

    package init(
        host: String = "127.0.0.1", port: Int = 8080, token: String = ServeSettings.newToken(), renderOnly: Bool = false,
        renderConcurrency: Int = ServeSettings.defaultRenderConcurrency, renderQueue: Int? = nil,
        maxRenderSize: Int = ServeSettings.defaultMaxRenderSize, allowedHosts: [String] = [], requestTimeout: Duration = .seconds(15),
        maxBodyBytes: Int = 64 << 10, maxJobs: Int = 8
    ) {
        self.host = host
        self.port = port
        self.token = token
        self.renderOnly = renderOnly
        self.renderConcurrency = max(1, renderConcurrency)
        self.renderQueue = renderQueue ?? 4 * max(1, renderConcurrency)
        self.maxRenderSize = maxRenderSize
        self.allowedHosts = allowedHosts
        self.requestTimeout = requestTimeout
        self.maxBodyBytes = maxBodyBytes
        self.maxJobs = maxJobs
    }

    /// 32 bytes from the system's generator, as 64 hex digits.
    package static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in
            let value: UInt64 = generator.next()
            let hex = String(value, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// `HOST:PORT`, `[IPv6]:PORT` or `:PORT` (loopback). Throws a usage error
    /// that names `--listen` and shows the forms it takes.
    package static func parseListen(_ text: String) throws -> (host: String, port: Int) {
        let hint = "give HOST:PORT, e.g. --listen 127.0.0.1:8080, --listen 0.0.0.0:8080 or --listen [::1]:8080 (port 0: any free port)"
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw BadgeError(.usage, "--listen \(quoted(text)): an IPv6 address is written [ADDRESS]:PORT", hint: hint)
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw BadgeError(.usage, "--listen \(quoted(text)): the port is missing", hint: hint)
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") {
                throw BadgeError(.usage, "--listen \(quoted(text)): an IPv6 address is written in brackets, [ADDRESS]:PORT", hint: hint)
            }
        }
        if host.isEmpty { host = "127.0.0.1" }
        guard portText.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), !portText.isEmpty, portText.count <= 5, let port = Int(portText),
              portRange.contains(port) else {
            throw BadgeError(.usage, "--listen \(quoted(text)): the port must be from 0 to 65535, not \(quoted(String(portText)))", hint: hint)
        }
        guard host.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: "/") }) else {
            throw BadgeError(.usage, "--listen \(quoted(text)): \(quoted(String(host))) is not a host name or an address", hint: hint)
        }
        return (String(host), port)
    }

    /// Whether `host` only ever reaches this machine.
    package static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" || host.hasSuffix(".localhost") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    package var listensOnLoopback: Bool { Self.isLoopback(host) }

    /// The names a browser may use in `Host` for the studio: loopback's, the
    /// address listened on (unless it is every address), and `allowedHosts`.
    package var studioHostNames: Set<String> {
        var names: Set<String> = ["localhost", "127.0.0.1", "::1"]
        if host != "0.0.0.0" && host != "::" { names.insert(host.lowercased()) }
        for name in allowedHosts { names.insert(name.lowercased()) }
        return names
    }

    /// The address as a URL's authority: IPv6 in brackets; every address becomes loopback's.
    package func authority(port: Int) -> String {
        let shown = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host
        return (shown.contains(":") ? "[\(shown)]" : shown) + ":\(port)"
    }

    /// Whether a user-supplied token is strong enough to guard a store on a
    /// network (`TokenStrength`). The error never shows the token, nor any of it.
    package static func checkToken(_ token: String, source: String) throws {
        let hint = "make one with: openssl rand -hex 32 (64 hex digits, 256 bits)"
        guard !token.isEmpty, token.utf8.count <= 256, token.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            throw BadgeError(.usage, "\(source): a token is 1 to 256 printable ASCII characters without spaces", hint: hint)
        }
        if let weakness = TokenStrength.weakness(of: token) {
            throw BadgeError(.usage, "\(source): the token is too easy to guess: \(weakness)", hint: hint)
        }
    }

    /// The token in a file (`--token-file`): its first line, without the
    /// line's end. The file must be the user's alone, to read as to write: a
    /// token others can read guards nothing.
    package static func readToken(file path: String) throws -> String {
        let data: Data
        do {
            let file = try RegularFile(path)
            let mode = file.status.st_mode & 0o777
            guard mode & 0o066 == 0 else {
                let can = mode & 0o044 != 0 ? "read" : "change"
                throw BadgeError(.usage, "--token-file: other users can \(can) the token file (mode 0\(String(mode, radix: 8)))",
                                 path: path, hint: "make it yours alone: chmod 600 \(path)")
            }
            data = try file.readAll(limit: 4096)
            try FileTrust.check(path, reading: file, what: "token file", code: .usage)
        } catch let failure as RegularFile.Failure {
            throw BadgeError(.usage, "--token-file: the token file cannot be read: \(failure)", path: path,
                             hint: "write one with: (umask 077; openssl rand -hex 32 > \(path))")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw BadgeError(.usage, "--token-file: the token file is not UTF-8 text", path: path)
        }
        let token = String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
        try checkToken(token, source: "--token-file \(path)")
        return token
    }

    /// `text` in quotes as an answer shows it: at most 80 characters, and a
    /// control character as its escape (`\u{0}`), so that a name differing
    /// from a known one by such a character is seen to differ.
    static func quoted(_ text: String) -> String {
        var shown = ""
        for scalar in text.prefix(80).unicodeScalars {
            if OutsideText.printable(String(scalar), keepingNewlines: false).isEmpty {
                shown += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return "\"\(shown)\(text.count > 80 ? "…" : "")\""
    }
}
