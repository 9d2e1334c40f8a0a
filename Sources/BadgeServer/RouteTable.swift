import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// Registers the routes on a router and records, in `table`, the methods
/// each path takes: every GET route answers HEAD too (its headers, with the
/// length GET would send), and `MethodCheck` answers a known path asked with
/// another method 405.
struct RouteRegistrar {
    typealias Handler = @Sendable (Request, BasicRequestContext) async throws -> Response

    let router: Router<BasicRequestContext>
    let table = RouteTable()

    func get(_ path: String, _ handler: @escaping Handler) {
        add(path, .get, handler)
        add(path, .head) { request, context in Reply.headOnly(try await handler(request, context)) }
    }

    func post(_ path: String, _ handler: @escaping Handler) {
        add(path, .post, handler)
    }

    private func add(_ path: String, _ method: HTTPRequest.Method, _ handler: @escaping Handler) {
        router.on(RouterPath(path), method: method, use: handler)
        table.add(path, method)
    }
}

/// Each registered path's segments (":name" matches any one segment) and methods.
final class RouteTable: Sendable {
    private let paths = Mutex<[(segments: [Substring], methods: [HTTPRequest.Method])]>([])

    func add(_ path: String, _ method: HTTPRequest.Method) {
        let segments = path.split(separator: "/")
        paths.withLock { paths in
            if let index = paths.firstIndex(where: { $0.segments == segments }) {
                paths[index].methods.append(method)
            } else {
                paths.append((segments, [method]))
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

/// A path that exists, asked with a method it does not take: 405 with
/// `Allow`, in the JSON every other error has, rather than the router's bare 404.
struct MethodCheck<Context: RequestContext>: RouterMiddleware {
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let path = request.uri.path
            let allowed = routes.methods(for: path)
            guard !allowed.isEmpty else {
                return Reply.nothing(at: path)
            }
            let list = allowed.map(\.rawValue).joined(separator: ", ")
            return Reply.problem(.methodNotAllowed, code: "method",
                                 "\(ServeSettings.quoted(request.method.rawValue)) is not a method \(ServeSettings.quoted(path)) takes",
                                 hint: "use \(list)", headers: [.allow: list])
        }
    }
}
