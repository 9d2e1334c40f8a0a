import BadgeKit
@testable import BadgeServer
import BadgeTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ProceduralBackend
import Testing

/// The routes in-process, through HummingbirdTesting's router client: what
/// each area of the server answers, and to whom. (`ServeTests` keeps the
/// end-to-end checks against the real binary: sockets, signals, bounds.)
@Suite(.threadsOfTheirOwn) struct RouteTests {
    static let token = "5c2f8e1a9b7d4c3e6f0a2b8d1e9c7f4a3b6d0e2c8f1a5b9d7e3c6f0a4b2d8e1c"

    /// A studio over an empty store in a folder of its own, with the procedural backend.
    final class Served: Sendable {
        let directory: URL
        let app: Application<RouterResponder<BasicRequestContext>>

        init(renderOnly: Bool = false) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-routes-\(UUID().uuidString)")
            var registry = BackendRegistry()
            ProceduralGenerator.register(in: &registry)
            let config = try BadgeConfig.parse(Data(#"{"defaults": {"size": 64}}"#.utf8), file: "config.json")
            let context = ServeContext(config: config, environment: BadgeEnvironment(), registry: registry,
                                       store: BadgeStore(directory: directory.appendingPathComponent("store")))
            let settings = ServeSettings(host: "127.0.0.1", port: 0, token: RouteTests.token, renderOnly: renderOnly)
            app = try StudioServer.application(settings: settings, context: context, logger: Logger(label: "test"), requestLogger: Logger(label: "test")).app
        }

        deinit { try? FileManager.default.removeItem(at: directory) }
    }

    /// The router client asks for "localhost" (a loopback name) with no port.
    static let host: HTTPFields = [:]
    static var studio: HTTPFields {
        var fields = host
        fields[.init("X-Badge-Token")!] = token
        return fields
    }

    @Test func everyGetAnswersHeadWithItsHeadersAndNoBody() async throws {
        let served = try Served()
        try await served.app.test(.router) { client in
            let get = try await client.execute(uri: "/healthz", method: .get, headers: Self.host)
            let head = try await client.execute(uri: "/healthz", method: .head, headers: Self.host)
            #expect(get.status == .ok && head.status == .ok)
            #expect(String(buffer: get.body) == #"{"status":"ok"}"#)
            #expect(head.body.readableBytes == 0 && head.headers[.contentType] == get.headers[.contentType])
            #expect(head.headers[.contentLength] == String(get.body.readableBytes))
        }
    }

    @Test func aMethodAPathDoesNotTakeIsA405ThatSaysWhichItTakes() async throws {
        let served = try Served()
        try await served.app.test(.router) { client in
            let answer = try await client.execute(uri: "/healthz", method: .post, headers: Self.host)
            #expect(answer.status == .methodNotAllowed)
            #expect(answer.headers[.allow] == "GET, HEAD")
            let error = try JSONSerialization.jsonObject(with: Data(buffer: answer.body)) as? [String: [String: String]]
            #expect(error?["error"]?["code"] == "method" && error?["error"]?["hint"] == "use GET, HEAD", "\(String(buffer: answer.body))")
            let nothing = try await client.execute(uri: "/no/such/thing", method: .get, headers: Self.host)
            #expect(nothing.status == .notFound)
        }
    }

    @Test func theAPINeedsTheTokenHeaderOnEveryRequestAndAChangeTheStudiosOrigin() async throws {
        let served = try Served()
        try await served.app.test(.router) { client in
            for path in ["/api/state", "/api/backends", "/api/badge/back.png"] {
                var cookie = Self.host
                cookie[.cookie] = "badge-token=\(Self.token)"
                let answer = try await client.execute(uri: path, method: .get, headers: cookie)
                #expect(answer.status == .unauthorized, "\(path)")
                #expect(String(buffer: answer.body).contains(#""code":"token""#))
            }
            #expect(try await client.execute(uri: "/api/state", method: .get, headers: Self.studio).status == .ok)
            var foreign = Self.studio
            foreign[.contentType] = "application/json"
            foreign[.origin] = "http://evil.example"
            let refused = try await client.execute(uri: "/api/restore", method: .post, headers: foreign, body: ByteBuffer(string: #"{"id": "x"}"#))
            #expect(refused.status == .forbidden && String(buffer: refused.body).contains(#""code":"origin""#))
            // The page holds no secret: it needs no token, and sets no cookie.
            let page = try await client.execute(uri: "/", method: .get, headers: Self.host)
            #expect(page.status == .ok && page.headers[.setCookie] == nil)
            #expect(try await client.execute(uri: "/?token=\(Self.token)", method: .get, headers: Self.host).status == .badRequest)
        }
    }

    @Test(arguments: [
        (#"{"id": "x", "colour": 1}"#, #"the request body has an unknown key \"colour\""#),
        (#"{"id": 7}"#, #"the request body's \"id\" is wrong"#),
        (#"[1, 2]"#, "the request body is not a JSON object"),
        (#"{"id": "#, "the request body is not JSON"),
        (#"{"number": 1.5}"#, #"the request body's \"number\" is 1.5, not a whole number the studio takes"#),
    ])
    func aBadBodyIsA400ThatSaysWhatIsWrong(body: String, message: String) async throws {
        let served = try Served()
        var fields = Self.studio
        fields[.contentType] = "application/json"
        fields[.origin] = "http://localhost"
        let headers = fields
        try await served.app.test(.router) { client in
            // A pick's body is {"number": N}; a restore's {"id": "..."}.
            let uri = body.contains("number") ? "/api/jobs/none/pick" : "/api/restore"
            let answer = try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
            #expect(answer.status == .badRequest, "\(body): \(answer.status)")
            #expect(String(buffer: answer.body).contains(message), "\(body): \(String(buffer: answer.body))")
        }
    }

    @Test func theStudiosFilesCarryAnETagAndAnswer304() async throws {
        let served = try Served()
        try await served.app.test(.router) { client in
            for path in ["/", "/studio/studio.js", "/studio/studio.css", "/studio/card.js", "/studio/card.css", "/studio/icon.svg"] {
                let first = try await client.execute(uri: path, method: .get, headers: Self.host)
                let etag = try #require(first.headers[.eTag], "\(path) has no ETag")
                #expect(first.status == .ok && first.body.readableBytes > 100, "\(path)")
                var again = Self.host
                again[.ifNoneMatch] = etag
                let cached = try await client.execute(uri: path, method: .get, headers: again)
                #expect(cached.status == .notModified && cached.body.readableBytes == 0, "\(path): \(cached.status)")
            }
        }
    }

    @Test func renderOnlyServesNoStudio() async throws {
        let served = try Served(renderOnly: true)
        try await served.app.test(.router) { client in
            let health = try await client.execute(uri: "/healthz", method: .get, headers: Self.host)
            #expect(health.status == .ok)
            for path in ["/", "/api/state", "/studio/studio.js"] {
                let answer = try await client.execute(uri: path, method: .get, headers: Self.studio)
                #expect(answer.status == .notFound, "\(path)")
                #expect(String(buffer: answer.body).contains("this server draws badges at /v1/badge.png"), "\(path)")
            }
        }
    }
}
