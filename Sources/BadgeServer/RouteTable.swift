import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// Adds routes to a router or one of its groups and notes, in `table`, the
/// methods each full path takes (a GET's HEAD among them, which Hummingbird
/// answers), for `MethodCheck`.
struct RouteRegistrar<Group: RouterMethods<BasicRequestContext>> {
    typealias Handler = @Sendable (Request, BasicRequestContext) async throws -> Response

    let group: Group
    let prefix: String
    let table: RouteTable

    init(_ group: Group, prefix: String = "", table: RouteTable) {
        self.group = group
        self.prefix = prefix
        self.table = table
    }

    func get(_ path: String, _ handler: @escaping Handler) {
        group.on(RouterPath(path), method: .get, use: handler)
        table.add(prefix + path, [.get, .head])
    }

    func post(_ path: String, _ handler: @escaping Handler) {
        group.on(RouterPath(path), method: .post, use: handler)
        table.add(prefix + path, [.post])
    }
}

/// Each registered path's segments (":name" matches any one segment) and methods.
final class RouteTable: Sendable {
    private let paths = Mutex<[(segments: [Substring], methods: [HTTPRequest.Method])]>([])

    func add(_ path: String, _ methods: [HTTPRequest.Method]) {
        let segments = path.split(separator: "/")
        paths.withLock { paths in
            if let index = paths.firstIndex(where: { $0.segments == segments }) {
                paths[index].methods += methods
            } else {
                paths.append((segments, methods))
            }
        }
    }

    /// The methods `path` takes; empty when no route has it.
    func methods(for path: String) -> [HTTPRequest.Method] {
        let asked = path.split(separator: "/")
        return paths.withLock { paths in
            paths.first { entry in
                entry.segments.count == asked.count
                    && zip(entry.segments, asked).allSatisfy { pattern, segment in pattern.hasPrefix(":") || pattern == segment }
            }?.methods ?? []
        }
    }
}

/// What the router finds no route for: a path that exists, asked with a
/// method it does not take, is 405 with `Allow`; any other is 404. Both in
/// the JSON every other error has, rather than the router's bare 404.
struct MethodCheck<Context: RequestContext>: RouterMiddleware {
    let routes: RouteTable
    let renderOnly: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let path = request.uri.path
            let allowed = routes.methods(for: path)
            guard !allowed.isEmpty else {
                throw Problem.nothing(at: path, hint: renderOnly ? "this server draws badges at /v1/badge.png, /v1/badge.svg and /v1/badge.json" : nil)
            }
            let list = allowed.map(\.rawValue).joined(separator: ", ")
            throw Problem(.methodNotAllowed, code: "method",
                          "\(ServeSettings.quoted(request.method.rawValue)) is not a method \(ServeSettings.quoted(path)) takes",
                          hint: "use \(list)", headers: [.allow: list])
        }
    }
}
