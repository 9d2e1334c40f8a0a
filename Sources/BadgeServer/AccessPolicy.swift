import Foundation
import HTTPTypes
import Hummingbird

/// Who may do what, checked before any route runs.
///
/// - `Host` must name this server: loopback's names, the address listened on,
///   or one given with `--allow-host`; so a page elsewhere cannot reach the
///   studio by pointing its own domain at 127.0.0.1 (DNS rebinding). Listening
///   on every address, the stateless API answers any `Host`; the studio never does.
/// - The studio's API needs the token in the `X-Badge-Token` header, on every
///   request, GETs included. No cookie carries it: a browser sends a host's
///   cookies to every port of that host, so any other server on 127.0.0.1
///   would be handed it. The start-up URL gives it in its fragment (`#token=`),
///   which a browser never sends; the page keeps it in `sessionStorage`, which
///   is scoped to the origin, port and all. A request that changes something
///   also needs an `Origin` equal to this server's own.
/// - The page, its script and its style hold no secret and no state: they are
///   served to any request that names this server.
/// - Every answer says what the browser may do with it (CSP, no sniffing, no
///   framing, no referrer).
struct AccessPolicy<Context: RequestContext>: RouterMiddleware {
    let settings: ServeSettings

    static var tokenHeader: HTTPField.Name { HTTPField.Name("X-Badge-Token")! }
    static var hostHeader: HTTPField.Name { HTTPField.Name("Host")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let area = Area(path: request.uri.path, renderOnly: settings.renderOnly)
        var response = try await decide(request, area: area, context: context, next: next)
        Self.secure(&response.headers, area: area)
        return response
    }

    private func decide(
        _ request: Request, area: Area, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        // The first Host is the request's authority; one more is left among the fields.
        guard let host = Self.hostName(request.head.authority), request.headers[Self.hostHeader] == nil else {
            return Reply.problem(.badRequest, code: "bad-host", "the request has no Host header, more than one, or one that is not a host name")
        }
        let openToAnyHost = !settings.listensOnLoopback && area == .public
        guard openToAnyHost || settings.studioHostNames.contains(host) else {
            return Reply.problem(.forbidden, code: "forbidden-host", "this server does not answer to the host name \(ServeSettings.quoted(host))",
                                 hint: "use the address badge serve printed, or start it with --allow-host \(host)")
        }
        switch area {
        case .public, .asset:
            return try await next(request, context)
        case .page:
            // A token in the query would reach this server's log and the browser's history.
            guard request.uri.queryParameters["token"] == nil else {
                return Reply.html(StudioAssets.tokenInQuery, status: .badRequest)
            }
            return try await next(request, context)
        case .api:
            guard let presented = request.headers[Self.tokenHeader], Self.same(presented, settings.token) else {
                return Reply.problem(.unauthorized, code: "token", "the studio needs its token in the X-Badge-Token header",
                                     hint: "open the URL badge serve printed (it ends in #token=...)")
            }
            if request.method != .get && request.method != .head {
                // The studio's own page, served here or through a proxy that adds TLS.
                let authority = request.head.authority ?? ""
                let expected = ["http://\(authority)", "https://\(authority)"]
                guard let origin = request.headers[.origin], expected.contains(origin) else {
                    return Reply.problem(.forbidden, code: "origin",
                                         "the request comes from \(request.headers[.origin].map(ServeSettings.quoted) ?? "no origin"), not from \(expected[0])")
                }
            }
            return try await next(request, context)
        case .notFound:
            return Reply.nothing(at: path, hint: settings.renderOnly ? "this server draws badges at /v1/badge.png, /v1/badge.svg and /v1/badge.json" : nil)
        }
    }

    enum Area: Equatable {
        /// The stateless API and the health check.
        case `public`
        /// The studio's script and style: no secrets, no state.
        case asset
        /// The studio page.
        case page
        /// The studio's API: the store and the candidates.
        case api
        case notFound

        init(path: String, renderOnly: Bool) {
            if path.hasPrefix("/v1/") || path == "/healthz" {
                self = .public
            } else if renderOnly {
                self = .notFound
            } else if path == "/" {
                self = .page
            } else if path.hasPrefix("/studio/") {
                self = .asset
            } else if path.hasPrefix("/api/") {
                self = .api
            } else {
                self = .notFound
            }
        }
    }

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

    static func secure(_ headers: inout HTTPFields, area: Area) {
        headers[.xContentTypeOptions] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        switch area {
        case .public:
            // Badges are for other sites' pages: any origin may embed or fetch them.
            headers[HTTPField.Name("Cross-Origin-Resource-Policy")!] = "cross-origin"
            headers[.accessControlAllowOrigin] = "*"
            if headers[.contentSecurityPolicy] == nil { headers[.contentSecurityPolicy] = "default-src 'none'; frame-ancestors 'none'" }
        case .page, .asset, .api, .notFound:
            // An SVG keeps its own policy, under which nothing in it could run.
            if headers[.contentType] == "image/svg+xml", let own = headers[.contentSecurityPolicy] {
                headers[.contentSecurityPolicy] = own + "; frame-ancestors 'none'"
            } else {
                headers[.contentSecurityPolicy] = StudioAssets.contentSecurityPolicy
            }
            headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
            headers[HTTPField.Name("Cross-Origin-Resource-Policy")!] = "same-origin"
            headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        }
    }
}
