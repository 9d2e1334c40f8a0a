import BadgeCard
import BadgeKit
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The routes: the stateless API (`/v1/...`, `/healthz`), and unless the
/// server only renders, the studio page, its assets and its API (`/api/...`).
enum Routes {
    static func router(
        settings: ServeSettings, render: RenderService, studio: Studio?, logger: Logger
    ) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        let routes = RouteRegistrar(router: router)
        router.add(middleware: RequestLog(logger: logger))
        router.add(middleware: AccessPolicy(settings: settings))
        router.add(middleware: MethodCheck(routes: routes.table))

        routes.get("/healthz") { _, _ in Reply.json(["status": "ok"]) }
        routes.get("/v1/badge.png") { request, _ in
            await badge(request, render: render, maxSize: settings.maxRenderSize) { rendered, query in
                if Reply.notModified(request, etag: rendered.etag) {
                    return Response(status: .notModified, headers: cacheHeaders(rendered, query))
                }
                var response = Reply.png(rendered.body, etag: rendered.etag, cacheControl: cacheControl(query))
                response.headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
                return response
            }
        }
        routes.get("/v1/badge.svg") { request, _ in
            await badge(request, render: render, maxSize: settings.maxRenderSize, format: .svg) { rendered, query in
                if Reply.notModified(request, etag: rendered.etag) {
                    return Response(status: .notModified, headers: cacheHeaders(rendered, query))
                }
                return Reply.svg(rendered.body, etag: rendered.etag, cacheControl: cacheControl(query))
            }
        }
        routes.get("/v1/badge.json") { request, _ in
            await badge(request, render: render, maxSize: settings.maxRenderSize) { rendered, query in
                if Reply.notModified(request, etag: rendered.etag) {
                    return Response(status: .notModified, headers: cacheHeaders(rendered, query))
                }
                return Reply.json(["metadata": RenderService.metadataJSON(rendered)], headers: cacheHeaders(rendered, query))
            }
        }
        guard let studio else { return router }

        routes.get("/") { _, _ in Reply.html(StudioAssets.page) }
        routes.get("/studio/studio.js") { _, _ in Reply.asset(StudioAssets.script, type: "text/javascript; charset=utf-8") }
        routes.get("/studio/studio.css") { _, _ in Reply.asset(StudioAssets.style, type: "text/css; charset=utf-8") }
        routes.get("/studio/card.js") { _, _ in Reply.asset(CardScript.script, type: "text/javascript; charset=utf-8") }
        routes.get("/studio/icon.svg") { _, _ in Reply.asset(StudioAssets.icon, type: "image/svg+xml") }
        routes.get("/studio/card.css") { _, _ in Reply.asset(CardScript.style, type: "text/css; charset=utf-8") }

        routes.get("/api/state") { _, _ in await answer { Reply.json(try await studio.state()) } }
        routes.get("/api/backends") { _, _ in Reply.json(await studio.backends()) }
        routes.get("/api/badge.png") { request, _ in
            await answer {
                guard let (png, id) = try await studio.currentImage() else {
                    return Reply.problem(.notFound, code: "not-found", "there is no badge yet", hint: "make one with New Badge")
                }
                return image(png, id: id, request: request, download: request.uri.queryParameters["download"] != nil)
            }
        }
        routes.get("/api/badge.svg") { request, _ in
            await answer {
                guard let (svg, id) = try await noVector({ try await studio.currentVector() }) else {
                    return Reply.problem(.notFound, code: "not-found", "there is no badge yet", hint: "make one with New Badge")
                }
                return vectorImage(svg, id: id, request: request, download: request.uri.queryParameters["download"] != nil)
            }
        }
        routes.get("/api/badge/back.png") { request, _ in
            await answer {
                let locale = Locale(identifier: localeIdentifier(request.uri.queryParameters["locale"]))
                guard let (png, id) = try await studio.currentBack(locale: locale) else {
                    return Reply.problem(.notFound, code: "not-found", "there is no badge yet", hint: "make one with New Badge")
                }
                return image(png, id: id + "-back-" + locale.identifier, request: request, download: false)
            }
        }
        routes.get("/api/history/:file") { request, context in
            await answer {
                let file = context.parameters.get("file") ?? ""
                guard file.hasSuffix(".png") else { return Reply.problem(.notFound, code: "not-found", "there is no such badge") }
                let id = String(file.dropLast(4))
                return image(try await studio.historyImage(id: id), id: id, request: request, download: false)
            }
        }
        routes.post("/api/generate") { request, context in
            await answer {
                let body = try await decode(Studio.GenerateRequest.self, from: request, limit: settings.maxBodyBytes)
                let job = try await studio.generate(body)
                return Reply.json(["job": job.id, "events": "/api/jobs/\(job.id)/events"], status: .accepted)
            }
        }
        routes.get("/api/jobs/:job/events") { _, context in
            guard let job = studio.job(context.parameters.get("job") ?? "") else {
                return Reply.problem(.notFound, code: "not-found", "there is no such set of candidates", hint: "generate again")
            }
            let events = job.events()
            return Response(
                status: .ok, headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store"],
                body: .init { writer in
                    for await event in events { try await writer.write(ByteBuffer(string: event)) }
                    try await writer.finish(nil)
                })
        }
        routes.get("/api/jobs/:job/candidates/:file") { request, context in
            await answer {
                let file = context.parameters.get("file") ?? ""
                let format = BadgeFormat(extensionOf: file)
                guard let job = studio.job(context.parameters.get("job") ?? ""), let format, let number = Int(file.dropLast(4)),
                      let made = job.candidate(number) else {
                    return Reply.problem(.notFound, code: "not-found", "there is no such candidate")
                }
                switch format {
                case .png: return image(made.png, id: made.metadata.id, request: request, download: false)
                case .svg:
                    let svg = try await noVector { try await studio.candidateVector(made) }
                    return vectorImage(svg, id: made.metadata.id, request: request, download: false)
                }
            }
        }
        routes.post("/api/jobs/:job/cancel") { _, context in
            await answer {
                try await studio.cancel(context.parameters.get("job") ?? "")
                return Reply.json(try await studio.state())
            }
        }
        routes.post("/api/jobs/:job/pick") { request, context in
            await answer {
                struct Pick: StudioBody {
                    var number: Int
                    static let keys = ["number"]
                }
                let pick = try await decode(Pick.self, from: request, limit: settings.maxBodyBytes)
                _ = try await studio.pick(job: context.parameters.get("job") ?? "", number: pick.number)
                return Reply.json(try await studio.state())
            }
        }
        routes.post("/api/restore") { request, _ in
            await answer {
                struct Restore: StudioBody {
                    var id: String
                    static let keys = ["id"]
                }
                let restore = try await decode(Restore.self, from: request, limit: settings.maxBodyBytes)
                _ = try await studio.restore(id: restore.id)
                return Reply.json(try await studio.state())
            }
        }
        return router
    }

    /// Reads the query, renders (or finds) the badge, and answers with `reply`;
    /// a bad parameter is a 400 that names it, a full queue a 503.
    private static func badge(
        _ request: Request, render: RenderService, maxSize: Int, format: BadgeFormat = .png,
        reply: (RenderService.Rendered, RenderQuery) -> Response
    ) async -> Response {
        let query: RenderQuery
        do {
            query = try RenderQuery.parse(request.uri.query, maxSize: maxSize)
        } catch {
            return Reply.problem(.badRequest, code: "bad-parameter", error.message, parameter: error.parameter, allowed: error.allowed)
        }
        do {
            return reply(try await render.badge(for: query, format: format), query)
        } catch is RenderGate.Full {
            return Reply.busy(retryAfter: 1)
        } catch {
            return Reply.failure(BadgeError.wrap(error, message: "the badge could not be drawn"))
        }
    }

    /// With a seed the badge never changes: cached for a year. Without one the
    /// seed comes from the promise, which a newer badge may read differently.
    static func cacheControl(_ query: RenderQuery) -> String {
        query.seed != nil ? "public, max-age=31536000, immutable" : "public, max-age=86400"
    }

    static func cacheHeaders(_ rendered: RenderService.Rendered, _ query: RenderQuery) -> HTTPFields {
        [.eTag: rendered.etag, .cacheControl: cacheControl(query)]
    }

    /// A badge image of the store or a candidate: private, revalidated by id.
    private static func image(_ png: Data, id: String, request: Request, download: Bool) -> Response {
        let etag = "\"\(id)\""
        if Reply.notModified(request, etag: etag) {
            return Response(status: .notModified, headers: [.eTag: etag, .cacheControl: "private, no-cache"])
        }
        return Reply.png(png, etag: etag, cacheControl: "private, no-cache",
                         fileName: download ? "promise-badge.png" : nil)
    }

    /// A badge that cannot be drawn as SVG (not procedural, or of another
    /// art engine) has no SVG: a 404 that says why, rather than a failure.
    private static func noVector<T>(_ work: () async throws -> T) async throws -> T {
        do {
            return try await work()
        } catch let error as BadgeError where error.code == .unsupportedFormat {
            throw NoVector(message: error.message)
        }
    }

    struct NoVector: Error {
        var message: String
    }

    /// A badge of the store or a candidate as SVG, its tag the id with "-svg".
    private static func vectorImage(_ svg: Data, id: String, request: Request, download: Bool) -> Response {
        let etag = "\"\(id)-svg\""
        if Reply.notModified(request, etag: etag) {
            return Response(status: .notModified, headers: [.eTag: etag, .cacheControl: "private, no-cache"])
        }
        return Reply.svg(ByteBuffer(bytes: svg), etag: etag, cacheControl: "private, no-cache",
                         fileName: download ? "promise-badge.svg" : nil)
    }

    /// A BCP 47 tag from the page (`navigator.language`), or the server's own.
    static func localeIdentifier(_ given: Substring?) -> String {
        guard let given, given.utf8.count <= 35,
              given.utf8.allSatisfy({ ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 }),
              given.first?.isLetter == true
        else { return Locale.current.identifier }
        return String(given)
    }

    /// A JSON body of at most `limit` bytes, decoded strictly.
    private static func decode<T: StudioBody>(_ type: T.Type, from request: Request, limit: Int) async throws -> T {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
            throw BadgeError(.usage, "the request body must be JSON (Content-Type: application/json)")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw BodyTooLarge(limit: limit)
        } catch is NIOTooManyBytesError {
            throw BodyTooLarge(limit: limit)
        }
        let data = Data(buffer.readableBytesView)
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw BadgeError(.usage, "the request body is not a JSON object")
        }
        if let unknown = object.keys.sorted().first(where: { !T.keys.contains($0) }) {
            var hint = "known keys: \(T.keys.joined(separator: ", "))"
            if let near = ConfigObject.closest(to: unknown, in: T.keys) { hint = "did you mean \"\(near)\"? " + hint }
            throw BadgeError(.usage, "the request body has an unknown key \(ServeSettings.quoted(unknown))", hint: hint)
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context), let DecodingError.keyNotFound(_, context) {
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw BadgeError(.usage, "the request body's \(key.isEmpty ? "JSON" : "\"\(key)\"") is wrong: \(context.debugDescription)")
        } catch {
            // Foundation says only "not valid JSON" of a number no Int holds (1.5, 1e20); the
            // body is valid JSON (it was read above), and its numbers are all whole ones.
            for key in object.keys.sorted() {
                guard let number = object[key] as? NSNumber, !(number is Bool) else { continue }
                let value = number.doubleValue
                if value.rounded() != value || abs(value) > 9_007_199_254_740_992 {
                    throw BadgeError(.usage, "the request body's \"\(key)\" is \(number), not a whole number the studio takes")
                }
            }
            throw BadgeError(.usage, "the request body does not hold what the studio takes: \(error)")
        }
    }

    /// A request body past the studio's limit: 413.
    struct BodyTooLarge: Error {
        var limit: Int
    }

    /// Runs a studio handler: a `BadgeError` (or any other) becomes its JSON answer.
    private static func answer(_ work: () async throws -> Response) async -> Response {
        do {
            return try await work()
        } catch let full as Studio.Full {
            return Reply.studioFull(running: full.running)
        } catch let none as NoVector {
            return Reply.problem(.notFound, code: "unsupported-format", OutsideText.printable(none.message, keepingNewlines: false),
                                 hint: "use the PNG")
        } catch let large as BodyTooLarge {
            return Reply.problem(.contentTooLarge, code: "too-large", "the request body is larger than \(large.limit) bytes",
                                 hint: "the studio's requests are small JSON objects")
        } catch {
            return Reply.failure(BadgeError.wrap(error, message: "the studio could not do that"))
        }
    }
}

/// A studio request's JSON body: an object with these keys and no others.
protocol StudioBody: Decodable {
    static var keys: [String] { get }
}

extension Studio.GenerateRequest: StudioBody {
    static let keys = ["promise", "purpose", "vibe", "metaphor", "style", "colors", "backend", "date", "timeZone", "count", "seed"]
}

/// One line per request at info level: method, path (never the query, which
/// can hold the token or a promise), status, and the time taken.
struct RequestLog<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let path = OutsideText.printable(String(request.uri.path.prefix(200)), keepingNewlines: false)
        do {
            let response = try await next(request, context)
            log(request, path, response.status.code, started)
            return response
        } catch {
            log(request, path, (error as? any HTTPResponseError)?.status.code ?? 500, started)
            throw error
        }
    }

    private func log(_ request: Request, _ path: String, _ status: Int, _ started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        let tenths = elapsed.components.seconds * 10_000 + elapsed.components.attoseconds / 100_000_000_000_000
        logger.info("\(request.method.rawValue) \(path) \(status) \(tenths / 10).\(tenths % 10) ms")
    }
}
