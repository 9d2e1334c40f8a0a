#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Whether a backend can run now, and if not, why and what to do about it.
public enum Availability: Sendable, Equatable, CustomStringConvertible {
    case available
    case unavailable(reason: String, hint: String?)

    public var isAvailable: Bool { self == .available }

    public var description: String {
        switch self {
        case .available: return "available"
        case let .unavailable(reason, hint): return hint.map { "\(reason) (\($0))" } ?? reason
        }
    }
}

/// A backend: something that turns a ``BadgeRequest`` into one image.
///
/// Requirements every conformance must meet (checked by
/// `BadgeKitTesting.GeneratorConformance`, which every backend's tests run):
///
/// - `availability()` is cheap: it never generates, never blocks on the network for
///   longer than a quick probe, and never throws. When it answers `.unavailable`,
///   the reason names what is missing and the hint says how to fix it.
/// - `generate(_:in:)` writes exactly one image file *inside* `workspace.directory`
///   and returns it in a ``GeneratedImage``. It never writes anywhere else: the
///   pipeline alone moves images into the store, after its intake has read the
///   image's format and dimensions from the bytes (a backend does not report them).
/// - It honours task cancellation promptly, throwing `CancellationError` (or a
///   ``BadgeError`` with code `.cancelled`), and leaves nothing running behind it.
/// - It throws only ``BadgeError`` for failures a user should read; the message says
///   what went wrong and the hint what to do.
/// - It is `Sendable` and safe to call concurrently: batch runs share one instance.
/// - Blocking work (C libraries, file I/O on large files, subprocess waits) does not
///   run on Swift's cooperative thread pool; use ``BlockingExecutor``.
public protocol BadgeGenerator: Sendable {
    /// Can this backend run now? Cheap, no generation. Says why not.
    func availability() async -> Availability

    /// Makes one image for `request`, written into `workspace` (a private temporary
    /// directory the caller owns and removes). Honours task cancellation.
    func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage

    /// How many requests this instance should serve at once in a batch, when
    /// its configuration does not say (`"concurrency"`): about the core count
    /// for work done on this machine's CPU, nil (the batch's limit) for work
    /// that mostly waits on a server.
    var preferredConcurrency: Int? { get }

    /// The `--option` keys this backend reads from a request (`BadgeRequest.options`);
    /// any other key is refused before the backend runs. nil: it hands every key on
    /// (an exec plugin gets them all).
    var requestOptionKeys: Set<String>? { get }

    /// Refuses a request's `--option`s this backend would refuse when it runs:
    /// a key it does not read (the default, from `requestOptionKeys`), and a
    /// value it cannot take. Called before anything runs (a batch checks every
    /// job with it), so a wrong value is not found half-way through.
    func checkRequestOptions(_ options: [String: String], backend: String) throws

    /// The styles it draws; empty: it has none, so `--style` does not apply; nil: it
    /// hands the style on as it is.
    var styles: [String]? { get }

    /// The style the prompt's own words ask for ("a sketch of a cup": "sketch"),
    /// spelled as in `styles`; nil when they ask for none. Such a prompt is not
    /// handed the configuration's default style, and its candidates keep its
    /// style rather than vary.
    func style(askedForIn prompt: String) -> String?

    /// True when it makes its picture from `BadgeRequest.source` (import): a source
    /// given to any other backend is refused rather than ignored.
    var readsSource: Bool { get }

    /// The `requestOptionKeys` that act on a source picture alone (AUTOMATIC1111's
    /// `denoising_strength`): a request that gives one without a source is
    /// refused before the backend runs, rather than the option ignored.
    var sourceOptionKeys: Set<String> { get }
}

extension BadgeGenerator {
    public var preferredConcurrency: Int? { nil }
    public var requestOptionKeys: Set<String>? { [] }
    public var styles: [String]? { nil }
    public func style(askedForIn prompt: String) -> String? { nil }
    public var readsSource: Bool { false }
    public var sourceOptionKeys: Set<String> { [] }

    public func checkRequestOptions(_ options: [String: String], backend: String) throws {
        try checkRequestOptionKeys(options, backend: backend)
    }

    /// Refuses a request option this backend does not read, with the nearest key it does:
    /// nothing the user asked for is silently ignored.
    public func checkRequestOptionKeys(_ options: [String: String], backend: String) throws {
        guard let known = requestOptionKeys else { return }
        for key in options.keys.sorted() where !known.contains(key) {
            let names = known.sorted()
            var hint = names.isEmpty ? "this backend reads no \(RequestOptionNaming.options)" : "it reads: " + names.joined(separator: ", ")
            if let near = ConfigObject.closest(to: key, in: names) { hint = "did you mean \"\(near)\"? " + hint }
            throw BadgeError(.usage, "unknown \(RequestOptionNaming.key(key))", backend: backend, hint: hint)
        }
    }
}

/// A backend whose model makes several images for one request in one call
/// (OpenAI's `n`, AUTOMATIC1111's `batch_size`). `generate --choose N` then asks
/// once for its candidates instead of N times; each image still passes the
/// pipeline's intake on its own, and is committed only if it is the one picked.
public protocol MultiImageGenerator: BadgeGenerator {
    /// The most images one call makes for `request`; 1 when this request
    /// (this model, this configuration) cannot ask for several.
    func imagesPerCall(for request: BadgeRequest) -> Int

    /// Makes `count` images (2 through `imagesPerCall(for:)`) for `request` in one
    /// call, each written inside `workspace` under a name of its own, in the
    /// model's order. Image `i` is made with seed `request.seed + i` where the
    /// model takes a seed, and its `GeneratedImage.seed` says the seed it used.
    /// Returning fewer than `count` is not an error here: the pipeline reports
    /// each one missing as a failed candidate.
    func generate(_ request: BadgeRequest, count: Int, in workspace: Workspace) async throws -> [GeneratedImage]
}

/// A backend that can check, on request, that its server really answers
/// (`badge backends --probe`). `availability()` stays cheap and offline; this
/// one may touch the network, briefly.
public protocol ProbingGenerator: BadgeGenerator {
    func probe() async -> Availability
}

/// What the user asks for. Backends read what applies to them and ignore the rest.
public struct BadgeRequest: Sendable, Hashable, Codable {
    /// Pixel side of the square badge, inclusive bounds.
    public static let sizeRange = 64...4096
    public static let defaultSize = 1024

    public var prompt: String
    public var style: String?
    public var size: Int
    public var seed: UInt64
    /// A source image for backends that transform one (import): a path, or "-" for stdin.
    public var source: String?
    /// Backend-specific per-request options (`--option key=value`).
    public var options: [String: String]
    /// The caption to draw, instead of one made from the prompt (`generate --caption`).
    public var caption: String?

    public init(
        prompt: String,
        style: String? = nil,
        size: Int = BadgeRequest.defaultSize,
        seed: UInt64 = 0,
        source: String? = nil,
        options: [String: String] = [:],
        caption: String? = nil
    ) {
        self.prompt = prompt
        self.style = style
        self.size = size
        self.seed = seed
        self.source = source
        self.options = options
        self.caption = caption
    }

    /// Whether a promise says nothing: every scalar of it whitespace (by
    /// scalars, since a space carrying a combining accent is one Character
    /// that starts with whitespace, and shows).
    public static func isBlank(_ prompt: String) -> Bool {
        prompt.unicodeScalars.allSatisfy(\.properties.isWhitespace)
    }

    /// Checks what every backend relies on; throws a usage error otherwise.
    public func validate() throws {
        guard Self.sizeRange.contains(size) else {
            throw BadgeError(
                .usage, "size \(size) is out of range",
                hint: "choose a size from \(Self.sizeRange.lowerBound) to \(Self.sizeRange.upperBound) pixels")
        }
        if prompt.utf8.count > 4000 {
            throw BadgeError(.usage, "the prompt is \(prompt.utf8.count) bytes long", hint: "keep it under 4000 bytes")
        }
    }
}

/// What a backend made: the file in its workspace and what it knows about how
/// it was made. Its format and size are read from the bytes by the pipeline's
/// intake, once. The first of the pipeline's stages: the intake makes an
/// `AdmittedImage` of it, and stamping and the PNG check a ``CheckedBadge``,
/// the only thing the store commits.
public struct GeneratedImage: Sendable {
    public var file: URL
    /// The model or engine that drew it, with its version ("art-engine 1").
    public var model: String?
    /// The seed actually used (a backend may choose one).
    public var seed: UInt64?
    /// The prompt as the model rewrote it, if it did.
    public var revisedPrompt: String?
    /// Anything else worth keeping, stored as `badge:x-<key>` text in the PNG.
    public var extra: [String: String]
    /// True only for PNGs this process encoded itself from pixels it holds: the
    /// procedural backend's drawing, and a picture the import backend decoded
    /// in full (under the intake's limits) and encoded again. The pipeline
    /// then skips the full decode check. The header, limit, CRC and
    /// image-data checks run for every image regardless. Set only inside this
    /// package, never for bytes a server, a plugin or a file supplied.
    public package(set) var isEncodedInProcess: Bool
    /// The file's bytes, when the backend has already read them from a
    /// descriptor it checked (an exec plugin's output): the pipeline uses
    /// these and never opens the file a second time.
    public var bytes: Data?
    /// The end of the backend's time limit, when it has one (a server's, a
    /// plugin's): decoding and converting its image must finish by then.
    public var deadline: ContinuousClock.Instant?
    /// The check of the image data (libdeflate's), run while this process encoded it:
    /// stamping then compares the bytes with it rather than inflating them
    /// again (`CheckedBadge`).
    package var inflated: PNGDataCheck.Inflated?

    public init(
        file: URL,
        model: String? = nil, seed: UInt64? = nil, revisedPrompt: String? = nil,
        extra: [String: String] = [:], bytes: Data? = nil, deadline: ContinuousClock.Instant? = nil
    ) {
        self.bytes = bytes
        self.deadline = deadline
        self.file = file
        self.model = model
        self.seed = seed
        self.revisedPrompt = revisedPrompt
        self.extra = extra
        self.isEncodedInProcess = false
    }

    /// A PNG encoded by this process (see `isEncodedInProcess`), written to
    /// `file` and, when `bytes` are given, taken as they are.
    package init(
        encodedInProcess file: URL,
        model: String? = nil, seed: UInt64? = nil, extra: [String: String] = [:], bytes: Data? = nil,
        inflated: PNGDataCheck.Inflated? = nil
    ) {
        self.init(file: file, model: model, seed: seed, extra: extra, bytes: bytes)
        self.isEncodedInProcess = true
        self.inflated = inflated
    }
}

/// A private temporary directory (mode 0700) that one generation may write into.
/// The pipeline creates it and removes it, whatever happens.
public struct Workspace: Sendable {
    public let directory: URL

    public init(directory: URL) { self.directory = directory }

    /// A path for a file inside the workspace. `name` must be a plain file name.
    public func file(_ name: String) -> URL {
        directory.appendingPathComponent(name, isDirectory: false)
    }

    /// Writes `data` as a new file `name` in the workspace; a failure (a full
    /// disk, a file-size limit) is a BadgeError that says so in plain words.
    public func write(_ data: Data, to name: String, backend: String? = nil) throws -> URL {
        let url = file(name)
        let failure = Self.writeNewFile(url.path, data)
        if failure != 0 {
            throw BadgeError(.io, "cannot write the image into the workspace", backend: backend, path: url.path,
                             cause: BadgeError.errnoDescription(failure),
                             hint: "a full disk or a file-size limit (ulimit -f) stopped it; the current badge is unchanged")
        }
        return url
    }

    /// Creates `path` and writes all of `data`; returns 0 or the errno.
    private static func writeNewFile(_ path: String, _ data: Data) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 { return errno }
        var failure = writeAll(fd, data)
        if close(fd) != 0 && failure == 0 { failure = errno }
        return failure
    }

    /// Whether `url` lies inside this workspace (after resolving `..` and symlinks).
    public func contains(_ url: URL) -> Bool {
        let root = directory.resolvingSymlinksInPath().standardizedFileURL.path
        let path = url.resolvingSymlinksInPath().standardizedFileURL.path
        return path.hasPrefix(root + "/")
    }
}
