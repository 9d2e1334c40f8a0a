import Foundation
import HTTPTypes
import Hummingbird

/// Who may do what, as middleware on the routes' groups (`Routes`):
///
/// - every request (`HostCheck`): one `Host`, naming this server when it
///   listens on loopback: loopback's names, the address listened on, or one
///   given with `--allow-host`; so a page elsewhere cannot reach the studio by
///   pointing its own domain at 127.0.0.1 (DNS rebinding). Listening on every
///   address, the stateless API answers any `Host`; the studio's groups check
///   it themselves (`StudioArea`) and never do;
/// - the studio's API (`TokenCheck`): the token in the `X-Badge-Token` header,
///   on every request, GETs included. No cookie carries it: a browser sends a
///   host's cookies to every port of that host, so any other server on
///   127.0.0.1 would be handed it. The start-up URL gives it in its fragment
///   (`#token=`), which a browser never sends; the page keeps it in
///   `sessionStorage`, which is scoped to the origin, port and all. A request
///   that changes something also needs an `Origin` equal to this server's own;
/// - the page, its script and its style hold no secret and no state: they
///   need no token;
/// - every answer says what the browser may do with it (`PublicArea`,
///   `StudioArea`, and the strict default of `BrowserPolicy`).
enum AccessPolicy {
    static let tokenHeader = HTTPField.Name("X-Badge-Token")!
    static let hostHeader = HTTPField.Name("Host")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    static let resourcePolicy = HTTPField.Name("Cross-Origin-Resource-Policy")!
    static let openerPolicy = HTTPField.Name("Cross-Origin-Opener-Policy")!
    static let frameOptions = HTTPField.Name("X-Frame-Options")!

    /// The host name of an authority (`name:port`, `[::1]:port`), lower case, or nil.
    static func hostName(_ authority: String?) -> String? {
        guard var authority = authority?.lowercased(), !authority.isEmpty, authority.utf8.count <= 255 else { return nil }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            // After the address, nothing or a port.
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || (rest.first == ":" && rest.dropFirst().allSatisfy(\.isNumber)) else { return nil }
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        if let colon = authority.lastIndex(of: ":") {
            guard authority[authority.index(after: colon)...].allSatisfy(\.isNumber) else { return nil }
            authority = String(authority[..<colon])
        }
        guard authority.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 || $0 == 46 }) else { return nil }
        return authority
    }

    /// Compares in time independent of where the strings differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }

    /// The response `next` gives, or the one its error is: for middleware
    /// that sets headers on every answer, a refusal included.
    static func response<Context: RequestContext>(
        _ request: Request, _ context: Context, _ next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            return try error.response(from: request, context: context)
        }
    }
}

/// The host names the studio answers to, and whether it listens on loopback,
/// read from the settings once.
struct StudioHosts: Sendable {
    let names: Set<String>
    let loopback: Bool

    init(_ settings: ServeSettings) {
        names = settings.studioHostNames
        loopback = settings.listensOnLoopback
    }

    /// Throws unless the request's host is one of the studio's names.
    func check(_ request: Request) throws {
        let host = AccessPolicy.hostName(request.head.authority) ?? ""
        guard names.contains(host) else {
            throw Problem(.forbidden, code: "forbidden-host", "this server does not answer to the host name \(ServeSettings.quoted(host))",
                          hint: "use the address badge serve printed, or start it with --allow-host \(host)")
        }
    }
}

/// Every request: one well-formed `Host`; on loopback, one of this server's names.
struct HostCheck<Context: RequestContext>: RouterMiddleware {
    let hosts: StudioHosts

    init(settings: ServeSettings) { hosts = StudioHosts(settings) }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // The first Host is the request's authority; one more is left among the fields.
        guard AccessPolicy.hostName(request.head.authority) != nil, request.headers[AccessPolicy.hostHeader] == nil else {
            throw Problem(.badRequest, code: "bad-host", "the request has no Host header, more than one, or one that is not a host name")
        }
        if hosts.loopback { try hosts.check(request) }
        return try await next(request, context)
    }
}

/// The strict default for what a browser may do with an answer: no sniffing,
/// no referrer, no framing, this origin's resources only; an area may say
/// otherwise first (`PublicArea`).
struct BrowserPolicy<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await AccessPolicy.response(request, context, next)
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[AccessPolicy.referrerPolicy] = "no-referrer"
        guard response.headers[AccessPolicy.resourcePolicy] == nil else { return response }
        // An SVG keeps its own policy, under which nothing in it could run.
        if response.headers[.contentType] == "image/svg+xml", let own = response.headers[.contentSecurityPolicy] {
            response.headers[.contentSecurityPolicy] = own + "; frame-ancestors 'none'"
        } else {
            response.headers[.contentSecurityPolicy] = StudioAssets.contentSecurityPolicy
        }
        response.headers[AccessPolicy.frameOptions] = "DENY"
        response.headers[AccessPolicy.resourcePolicy] = "same-origin"
        response.headers[AccessPolicy.openerPolicy] = "same-origin"
        return response
    }
}

/// The stateless API and the health check: badges are for other sites'
/// pages, so any origin may embed or fetch them.
struct PublicArea<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await AccessPolicy.response(request, context, next)
        response.headers[AccessPolicy.resourcePolicy] = "cross-origin"
        response.headers[.accessControlAllowOrigin] = "*"
        if response.headers[.contentSecurityPolicy] == nil { response.headers[.contentSecurityPolicy] = "default-src 'none'; frame-ancestors 'none'" }
        return response
    }
}

/// The studio's page, files and API: off loopback, still only to its own host names.
struct StudioArea<Context: RequestContext>: RouterMiddleware {
    let hosts: StudioHosts

    init(settings: ServeSettings) { hosts = StudioHosts(settings) }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if !hosts.loopback { try hosts.check(request) }
        return try await next(request, context)
    }
}

/// The studio's API: the token in its header on every request; a change
/// also from the studio's own origin (here, or through a proxy that adds TLS).
struct TokenCheck<Context: RequestContext>: RouterMiddleware {
    let settings: ServeSettings

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let presented = request.headers[AccessPolicy.tokenHeader], AccessPolicy.same(presented, settings.token) else {
            throw Problem(.unauthorized, code: "token", "the studio needs its token in the X-Badge-Token header",
                          hint: "open the URL badge serve printed (it ends in #token=...)")
        }
        if request.method != .get && request.method != .head {
            let authority = request.head.authority ?? ""
            let expected = ["http://\(authority)", "https://\(authority)"]
            guard let origin = request.headers[.origin], expected.contains(origin) else {
                throw Problem(.forbidden, code: "origin",
                              "the request comes from \(request.headers[.origin].map(ServeSettings.quoted) ?? "no origin"), not from \(expected[0])")
            }
        }
        return try await next(request, context)
    }
}
