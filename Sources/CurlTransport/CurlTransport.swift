import BadgeKit
import CCurl
import Foundation
import Synchronization

/// `HTTPTransport` on libcurl. Every transfer runs on one curl multi handle
/// driven on badge's blocking executor (`CurlLoop`), so no Swift cooperative
/// thread ever blocks on the network and any number of transfers overlap
/// their waits.
///
/// Hardened for talking to image models: https only (plain http to loopback,
/// or where the request explicitly allows it); TLS verification always on; a
/// connect timeout, a total timeout, and an idle timer that starts with the
/// first byte (a model may think for minutes, a stalled stream must not hang);
/// a body cap enforced as bytes arrive; redirects only when the request asks,
/// https only; proxies from the environment as libcurl reads them.
public final class CurlTransport: HTTPTransport {
    public struct Options: Sendable {
        /// PEM certificates to trust in place of the system's CA bundle file (a
        /// bundle's bytes); libcurl still reads the system's CA directory.
        public var caCertificates: Data?
        public var userAgent: String

        public init(caCertificates: Data? = nil, userAgent: String = String(BadgeMetadata.generatorVersion.map { $0 == " " ? "/" : $0 })) {
            self.caCertificates = caCertificates
            self.userAgent = userAgent
        }
    }

    private let options: Options
    private let loop: CurlLoop

    /// Cheap: libcurl is initialised, and the loop started, on the first request.
    public init(options: Options = Options()) {
        self.options = options
        self.loop = CurlLoop()
    }

    deinit { loop.stop() }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Self.checkPolicy(request)
        try Task.checkCancellation()
        if !CurlGlobal.isReady {
            // The first request loads libcurl (dlopen) and initialises it: blocking work.
            try await BlockingExecutor.runToCompletion { try CurlGlobal.initialize() }
        }
        let transfer = Transfer(request: request, options: options)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.continuation = continuation
                loop.submit(transfer)
            }
        } onCancel: {
            loop.cancel(transfer)
        }
    }

    /// Which URLs may be fetched at all: decided before any connection is made.
    static func checkPolicy(_ request: HTTPRequest) throws {
        let scheme = request.url.scheme?.lowercased() ?? ""
        let host = request.url.host ?? ""
        switch scheme {
        case "https":
            return
        case "http" where isLoopback(host) || request.allowsInsecureHTTP:
            return
        case "http":
            throw BadgeError(
                .network, "refusing plain http to \(host): only loopback may use http", path: request.url.absoluteString,
                hint: "use an https URL, or set \"allowInsecureHTTP\": true for this backend if the network is trusted")
        default:
            throw BadgeError(.network, "refusing the URL scheme \"\(scheme)\"", path: request.url.absoluteString,
                             hint: "use an https URL")
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if bare == "localhost" || bare == "::1" { return true }
        let parts = bare.split(separator: ".")
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}

enum CurlGlobal {
    private static let ready = Atomic<Bool>(false)
    /// nil once libcurl is loaded and initialised; otherwise why it cannot be.
    private static let failure: BadgeError? = {
        var message = [CChar](repeating: 0, count: 512)
        guard badge_curl_load(&message, message.count) == 0 else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return BadgeError(.missingLibrary, "badge cannot use libcurl: \(reason)", hint: "install it: apt-get install libcurl4")
        }
        badge_curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        ready.store(true, ordering: .releasing)
        return nil
    }()

    static var isReady: Bool { ready.load(ordering: .acquiring) }

    /// Loads and initialises libcurl, once; throws if it is not installed.
    static func initialize() throws {
        if let failure { throw failure }
    }
}
