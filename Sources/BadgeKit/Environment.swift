import Foundation
import Synchronization
import Logging

/// Everything a backend may take from the outside world, passed in rather than
/// reached for, so tests can inject fakes: the clock, the environment
/// variables (API keys live there, never in files), a logger, and the
/// implementations the core only knows as protocols.
public struct BadgeEnvironment: Sendable {
    public var now: @Sendable () -> Date
    /// Set for reproducible output (`SOURCE_DATE_EPOCH`): `now` reads it, and a badge's id
    /// derives from its content, so the same request gives the same bytes.
    public var sourceDate: Date?
    public var timeZone: TimeZone
    public var variables: [String: String]
    public var logger: Logger
    /// HTTP for remote backends; nil where none is wired in.
    public var http: (any HTTPTransport)?
    /// Full decoding of untrusted images, after the intake's header checks.
    public var decoder: (any ImageDecoding)?
    /// Where relative paths in the config and on the command line are resolved.
    public var workingDirectory: URL

    public init(
        now: @escaping @Sendable () -> Date = { Date() },
        sourceDate: Date? = nil,
        timeZone: TimeZone = .current,
        variables: [String: String] = ProcessInfo.processInfo.environment,
        logger: Logger = Logger(label: "badge", factory: { _ in SwiftLogNoOpLogHandler() }),
        http: (any HTTPTransport)? = nil,
        decoder: (any ImageDecoding)? = nil,
        workingDirectory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
    ) {
        if let sourceDate {
            self.now = { sourceDate }
        } else {
            self.now = now
        }
        self.sourceDate = sourceDate
        self.timeZone = timeZone
        self.variables = variables
        self.logger = logger
        self.http = http
        self.decoder = decoder
        self.workingDirectory = workingDirectory
    }
}

extension BadgeEnvironment {
    /// The reproducible-builds convention: `SOURCE_DATE_EPOCH`, whole seconds since 1970 UTC,
    /// stands for "now" in what is written. nil when unset or empty.
    public static func sourceDate(from variables: [String: String]) throws -> Date? {
        guard let text = variables["SOURCE_DATE_EPOCH"], !text.isEmpty else { return nil }
        guard text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let seconds = Int64(text), seconds <= 253_402_300_799 else {
            throw BadgeError(.usage, "SOURCE_DATE_EPOCH is not a number of seconds since 1970: \(text.debugDescription)",
                             hint: "set it to whole seconds, e.g. SOURCE_DATE_EPOCH=$(git log -1 --format=%ct), or unset it")
        }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}

/// One HTTP exchange. Remote backends speak through this; the CLI wires in libcurl.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: URL
    public var headers: [(name: String, value: String)]
    public var body: Data?
    /// A multipart/form-data body (a POST), built by the transport with its own
    /// boundary and Content-Type header; when set, `body` is not sent.
    public var form: [HTTPFormPart]?
    /// Limit for establishing the connection (DNS, TCP, TLS).
    public var connectTimeout: Duration
    /// Overall limit for the whole exchange, the model's thinking time included.
    public var timeout: Duration
    /// Once the first byte has arrived, the longest the stream may stall.
    public var idleTimeout: Duration
    /// Largest response body accepted; enforced as the bytes arrive.
    public var maxResponseBytes: Int
    /// Redirects followed, https only, never with credentials. 0 for any
    /// request that carries a key: a redirect is then returned as it is.
    public var maxRedirects: Int
    /// Plain http to a host other than loopback (only when a config says so).
    public var allowsInsecureHTTP: Bool
    /// PEM certificates to trust for this request in place of the system's CA
    /// bundle file: the bytes of a bundle its caller read (from a checked
    /// descriptor), handed to the transport as they are, so no path is opened
    /// per connection. (libcurl still reads the system's CA directory.)
    public var caCertificates: Data?

    public init(
        method: String = "GET", url: URL, headers: [(name: String, value: String)] = [],
        body: Data? = nil, connectTimeout: Duration = .seconds(10), timeout: Duration = .seconds(60),
        idleTimeout: Duration = .seconds(30), maxResponseBytes: Int = 64 << 20, maxRedirects: Int = 0,
        allowsInsecureHTTP: Bool = false, caCertificates: Data? = nil, form: [HTTPFormPart]? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.form = form
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.idleTimeout = idleTimeout
        self.maxResponseBytes = maxResponseBytes
        self.maxRedirects = maxRedirects
        self.allowsInsecureHTTP = allowsInsecureHTTP
        self.caCertificates = caCertificates
    }

    /// Whether sending the request twice does what sending it once does (RFC 9110,
    /// 9.2.2): GET, HEAD, OPTIONS, TRACE, PUT and DELETE. A POST queues a run, makes
    /// an image, uploads a file: each copy is another one.
    public var isIdempotent: Bool {
        ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(method.uppercased())
    }
}

/// One field of a multipart/form-data body: a text value, or a file (with a
/// file name and a content type).
public struct HTTPFormPart: Sendable, Equatable {
    public var name: String
    public var data: Data
    public var filename: String?
    public var contentType: String?

    public init(name: String, data: Data, filename: String? = nil, contentType: String? = nil) {
        self.name = name
        self.data = data
        self.filename = filename
        self.contentType = contentType
    }

    public init(name: String, value: String) {
        self.init(name: name, data: Data(value.utf8))
    }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Data

    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.last { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

public protocol HTTPTransport: Sendable {
    /// Performs one exchange. Throws `BadgeError` (.network, .timeout, .cancelled).
    /// A request that is not idempotent (`HTTPRequest.isIdempotent`) goes out
    /// at most once: a transport never sends it again by itself, so an answer
    /// lost on the way back is an error its caller sees and can act on (as
    /// ComfyUI's client does by looking its run up before sending it again).
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// Decodes an image fully and reports corruption its header could not show:
/// truncated data, bad CRCs, decoder warnings. Implemented over libgd by `Canvas`.
/// `header` is what the pipeline's ``ImageIntake`` read from `data` and passed
/// (format, dimensions within the limits): the decoder relies on it and does not
/// inspect the bytes again.
/// A decoder checks `stop` while it works and gives up (`.cancelled`, or
/// `.timeout` past the deadline) when it says so.
public protocol ImageDecoding: Sendable {
    func validate(_ data: Data, header: ImageIntake.Header, stop: DecodeStop) async throws

    /// Decodes (checking the image as `validate` does) and re-encodes it as
    /// a `side`×`side` PNG, cropping the centre of an image that is not
    /// square: what a backend that returned a JPEG, a WebP or the wrong size
    /// hands to the store.
    func normalized(_ data: Data, header: ImageIntake.Header, side: Int, stop: DecodeStop) async throws -> Data
}

/// What ends a decode that is still running: the task that wanted it was
/// cancelled (`stop()`, from a cancellation handler), or the deadline passed
/// (the backend's time limit, which covers decoding its image too).
/// Decoders poll `shouldStop` from the decoding thread.
public final class DecodeStop: Sendable {
    private let stopped = Atomic<Bool>(false)
    public let deadline: ContinuousClock.Instant?

    public init(deadline: ContinuousClock.Instant? = nil) {
        self.deadline = deadline
    }

    /// Asks the decode to end as soon as it next looks.
    public func stop() { stopped.store(true, ordering: .relaxed) }

    public var isStopped: Bool { stopped.load(ordering: .relaxed) }

    public var isPastDeadline: Bool { deadline.map { ContinuousClock.now >= $0 } ?? false }

    public var shouldStop: Bool { isStopped || isPastDeadline }

    /// The error for a decode that ended because of this.
    public func error(source: String?) -> BadgeError {
        if isStopped { return BadgeError(.cancelled, "cancelled while decoding the image", path: source) }
        return BadgeError(.timeout, "decoding the image did not finish within the backend's time limit", path: source,
                          hint: "the image is built to be slow to decode; if it is genuine, raise the backend's timeoutSeconds")
    }
}

/// How many threads one image may be drawn and encoded with: badge's one
/// knob for it. A batch or a server that draws several images at once sets
/// `limit` to 1: its images keep every core busy already, and splitting each
/// one's rows as well only makes them wait on each other's halves. nil: as
/// many as the drawing finds worth it, up to the cores. A task-local: it
/// holds in the blocking work the task runs (`BlockingExecutor`), and the
/// drawing reads it on the thread that starts each piece of work.
package enum ImageThreads {
    @TaskLocal package static var limit: Int? = nil

    /// The threads one piece of drawing may use when it could use `wanted`.
    package static func allowed(upTo wanted: Int) -> Int {
        max(1, min(wanted, limit ?? processorCount))
    }

    /// The cores this process may use, read once: Foundation reads the
    /// cgroup's CPU quota and cpuset files on every `activeProcessorCount`.
    package static let processorCount = ProcessInfo.processInfo.activeProcessorCount
}
