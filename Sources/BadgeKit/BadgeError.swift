import Foundation

/// The one error type of badge. Every failure a user can see is one of these:
/// what failed (`message`), where (`backend`, `path`, `location`, `keyPath`),
/// why (`cause`) and what to do next (`hint`).
///
/// `Code` is an open set of named values, so new kinds of failure can be added
/// without breaking anyone who switches over the existing ones.
public struct BadgeError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The command line or a request was malformed (exit 64).
        public static let usage = Code(rawValue: "usage")
        /// A configuration file is missing, not JSON, or does not match the schema.
        public static let config = Code(rawValue: "config")
        /// No backend instance of that name exists.
        public static let unknownBackend = Code(rawValue: "unknown-backend")
        /// The backend cannot run here now (missing key, server down, ...).
        public static let backendUnavailable = Code(rawValue: "backend-unavailable")
        /// The backend ran and failed.
        public static let generationFailed = Code(rawValue: "generation-failed")
        /// An image was refused by the intake (bad signature, corrupt, truncated).
        public static let invalidImage = Code(rawValue: "invalid-image")
        /// An image is a format badge does not accept.
        public static let unsupportedFormat = Code(rawValue: "unsupported-format")
        /// An image exceeds a configured limit (bytes, pixels, side).
        public static let imageTooLarge = Code(rawValue: "image-too-large")
        /// Reading or writing the store failed; the previous badge is untouched.
        public static let store = Code(rawValue: "store")
        /// There is no badge yet, or no history entry with that id.
        public static let notFound = Code(rawValue: "not-found")
        /// The run was cancelled (Ctrl-C); nothing was changed.
        public static let cancelled = Code(rawValue: "cancelled")
        /// A file outside the store could not be read or written.
        public static let io = Code(rawValue: "io")
        /// A network transfer failed.
        public static let network = Code(rawValue: "network")
        /// Something took longer than its limit.
        public static let timeout = Code(rawValue: "timeout")
        /// A shared library badge opens on first use is not installed; the hint names its Debian package.
        public static let missingLibrary = Code(rawValue: "missing-library")
    }

    public var code: Code
    public var message: String
    public var backend: String?
    public var path: String?
    public var location: SourceLocation?
    public var keyPath: String?
    public var cause: String?
    public var hint: String?

    public init(
        _ code: Code,
        _ message: String,
        backend: String? = nil,
        path: String? = nil,
        location: SourceLocation? = nil,
        keyPath: String? = nil,
        cause: String? = nil,
        hint: String? = nil
    ) {
        self.code = code
        self.message = message
        self.backend = backend
        self.path = path
        self.location = location
        self.keyPath = keyPath
        self.cause = cause
        self.hint = hint
    }

    /// `path:line:column: [backend] key: message: cause` and, on the next lines, the hint.
    public var description: String {
        var head = ""
        if let path {
            head += path
            if let location { head += ":\(location.line):\(location.column)" }
            head += ": "
        } else if let location {
            head += "line \(location.line), column \(location.column): "
        }
        if let backend { head += "backend '\(backend)': " }
        if let keyPath, !keyPath.isEmpty { head += "\(keyPath): " }
        head += message
        if let cause, !cause.isEmpty { head += ": \(cause)" }
        // A hint of several lines keeps them under its first.
        if let hint, !hint.isEmpty { head += "\n  hint: " + hint.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n  ") }
        return head
    }

    /// The description without its hint line: for one-line listings (a batch's summary).
    public var headline: String {
        var copy = self
        copy.hint = nil
        return copy.description
    }

    /// The process exit code: 64 for a usage error (a bad option, an unknown backend name), 1 otherwise.
    public var exitCode: Int32 { code == .usage || code == .unknownBackend ? 64 : 1 }

    /// Fills in the backend name where a lower layer did not know it.
    public func attributed(to backend: String) -> BadgeError {
        var copy = self
        if copy.backend == nil { copy.backend = backend }
        return copy
    }

    /// An errno-based cause, as `strerror` words it ("No space left on device").
    public static func errnoDescription(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

extension BadgeError {
    /// Wraps anything thrown by a backend or a lower layer into a BadgeError,
    /// turning task cancellation into `.cancelled`.
    public static func wrap(_ error: any Error, backend: String? = nil, message: String) -> BadgeError {
        if let badge = error as? BadgeError { return backend.map(badge.attributed(to:)) ?? badge }
        if error is CancellationError {
            return BadgeError(.cancelled, "cancelled; nothing was changed", backend: backend)
        }
        return BadgeError(.generationFailed, message, backend: backend, cause: String(describing: error))
    }
}
