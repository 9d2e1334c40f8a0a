import BadgeCard
import BadgeKit
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The routes, declared once: the stateless API (`/v1/...`, `/healthz`), and
/// unless the server only renders, the studio's page, its files and its API
/// (`/api/...`). Who may ask is middleware on each group (`AccessPolicy`);
/// Hummingbird answers every GET's HEAD; an error thrown is its own answer
/// (`Problem`, `BadgeError`).
enum Routes {
    static func router(settings: ServeSettings, render: RenderService, studio: Studio?, logger: Logger) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
        let table = RouteTable()
        router.add(middleware: RequestLog(logger: logger))
        router.add(middleware: BrowserPolicy())
        router.add(middleware: ErrorAnswer())
        router.add(middleware: HostCheck(settings: settings))
        router.add(middleware: MethodCheck(routes: table, renderOnly: settings.renderOnly))

        let everyone = RouteRegistrar(router.group().add(middleware: PublicArea()), table: table)
        everyone.get("/healthz") { _, _ in Reply.json(["status": "ok"]) }
        everyone.get("/v1/badge.png") { request, _ in
            try await badge(request, render: render, maxSize: settings.maxRenderSize) { rendered, query in
                if Reply.notModified(request, etag: rendered.etag) {
                    return Response(status: .notModified, headers: cacheHeaders(rendered, query))
                }
                var response = Reply.png(rendered.body, etag: rendered.etag, cacheControl: cacheControl(query))
                response.headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
                return response
            }
        }
        everyone.get("/v1/badge.svg") { request, _ in
            try await badge(request, render: render, maxSize: settings.maxRenderSize, format: .svg) { rendered, query in
                if Reply.notModified(request, etag: rendered.etag) {
                    return Response(status: .notModified, headers: cacheHeaders(rendered, query))
                }
                return Reply.svg(rendered.body, etag: rendered.etag, cacheControl: cacheControl(query))
            }
        }
        everyone.get("/v1/badge.json") { request, _ in
            try await badge(request, render: render, maxSize: settings.maxRenderSize) { rendered, query in
                if Reply.notModified(request, etag: rendered.etag) {
                    return Response(status: .notModified, headers: cacheHeaders(rendered, query))
                }
                return Reply.json(["metadata": RenderService.metadataJSON(rendered)], headers: cacheHeaders(rendered, query))
            }
        }
        guard let studio else { return router }

        let files = RouteRegistrar(router.group().add(middleware: StudioArea(settings: settings)), table: table)
        files.get("/") { request, _ in
            // A token in the query would reach this server's log and the browser's history.
            guard request.uri.queryParameters["token"] == nil else { return Reply.html(StudioAssets.tokenInQuery, status: .badRequest) }
            return Reply.asset(StudioAssets.pageFile, request: request)
        }
        for file in StudioAssets.files { files.get("/studio/" + file.name) { request, _ in Reply.asset(file, request: request) } }

        let api = RouteRegistrar(
            router.group("api").add(middleware: StudioArea(settings: settings)).add(middleware: TokenCheck(settings: settings)),
            prefix: "/api", table: table)
        api.get("/state") { _, _ in Reply.json(try await studio.state()) }
        api.get("/backends") { _, _ in Reply.json(await studio.backends()) }
        api.get("/badge.png") { request, _ in
            guard let (png, id) = try await studio.currentImage() else { throw Self.noBadge }
            return image(png, id: id, request: request, download: request.uri.queryParameters["download"] != nil)
        }
        api.get("/badge.svg") { request, _ in
            guard let (svg, id) = try await noVector({ try await studio.currentVector() }) else { throw Self.noBadge }
            return vectorImage(svg, id: id, request: request, download: request.uri.queryParameters["download"] != nil)
        }
        api.get("/badge/back.png") { request, _ in
            let locale = Locale(identifier: localeIdentifier(request.uri.queryParameters["locale"]))
            guard let (png, id) = try await studio.currentBack(locale: locale) else { throw Self.noBadge }
            return image(png, id: id + "-back-" + locale.identifier, request: request, download: false)
        }
        api.get("/history/:file") { request, context in
            let file = context.parameters.get("file") ?? ""
            guard file.hasSuffix(".png") else { throw Problem(.notFound, code: "not-found", "there is no such badge") }
            let id = String(file.dropLast(4))
            return image(try await studio.historyImage(id: id), id: id, request: request, download: false)
        }
        api.post("/generate") { request, _ in
            let body = try await decode(Studio.GenerateRequest.self, from: request, limit: settings.maxBodyBytes)
            let job = try await studio.generate(body)
            return Reply.json(["job": job.id, "events": "/api/jobs/\(job.id)/events"], status: .accepted)
        }
        api.get("/jobs/:job/events") { request, context in
            guard let job = studio.job(context.parameters.get("job") ?? "") else {
                throw Problem(.notFound, code: "not-found", "there is no such set of candidates", hint: "generate again")
            }
            return Response(
                status: .ok, headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store"],
                body: .init { writer in
                    // The stream ends with the job, when the client goes, or when the server stops.
                    let (events, stop) = job.listen()
                    try await withGracefulShutdownHandler {
                        try await request.body.consumeWithInboundCloseHandler { _ in
                            for await event in events { try await writer.write(ByteBuffer(string: event)) }
                        } onInboundClosed: {
                            stop()
                        }
                    } onGracefulShutdown: {
                        stop()
                    }
                    try await writer.finish(nil)
                })
        }
        api.get("/jobs/:job/candidates/:file") { request, context in
            let file = context.parameters.get("file") ?? ""
            guard let job = studio.job(context.parameters.get("job") ?? ""), let format = BadgeFormat(extensionOf: file),
                  let number = Int(file.dropLast(4)), let made = job.candidate(number) else {
                throw Problem(.notFound, code: "not-found", "there is no such candidate")
            }
            switch format {
            case .png: return image(made.png, id: made.metadata.id, request: request, download: false)
            case .svg:
                let svg = try await noVector { try await studio.candidateVector(made) }
                return vectorImage(svg, id: made.metadata.id, request: request, download: false)
            }
        }
        api.post("/jobs/:job/cancel") { _, context in
            try await studio.cancel(context.parameters.get("job") ?? "")
            return Reply.json(try await studio.state())
        }
        api.post("/jobs/:job/pick") { request, context in
            struct Pick: StudioBody {
                var number: Int
                static let keys = ["number"]
            }
            let pick = try await decode(Pick.self, from: request, limit: settings.maxBodyBytes)
            _ = try await studio.pick(job: context.parameters.get("job") ?? "", number: pick.number)
            return Reply.json(try await studio.state())
        }
        api.post("/restore") { request, _ in
            struct Restore: StudioBody {
                var id: String
                static let keys = ["id"]
            }
            let restore = try await decode(Restore.self, from: request, limit: settings.maxBodyBytes)
            _ = try await studio.restore(id: restore.id)
            return Reply.json(try await studio.state())
        }
        return router
    }

    static let noBadge = Problem(.notFound, code: "not-found", "there is no badge yet", hint: "make one with New Badge")

    /// Reads the query, renders (or finds) the badge, and answers with `reply`;
    /// a bad parameter is a 400 that names it, a full queue a 503.
    private static func badge(
        _ request: Request, render: RenderService, maxSize: Int, format: BadgeFormat = .png,
        reply: (RenderService.Rendered, RenderQuery) -> Response
    ) async throws -> Response {
        let query: RenderQuery, key: String
        do {
            (query, key) = try render.query(request.uri.query, maxSize: maxSize, format: format)
        } catch {
            throw Problem(.badRequest, code: "bad-parameter", error.message, parameter: error.parameter, allowed: error.allowed)
        }
        do {
            return reply(try await render.badge(for: query, key: key, format: format), query)
        } catch is RenderGate.Full {
            throw Problem.busy(retryAfter: 1)
        } catch {
            throw BadgeError.wrap(error, message: "the badge could not be drawn")
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
            throw Problem(.notFound, code: "unsupported-format", OutsideText.printable(error.message, keepingNewlines: false), hint: "use the PNG")
        }
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

    /// A JSON body of at most `limit` bytes, parsed once and decoded strictly:
    /// an object with the type's keys and no others (`Strict`).
    private static func decode<T: StudioBody>(_ type: T.Type, from request: Request, limit: Int) async throws -> T {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
            throw BadgeError(.usage, "the request body must be JSON (Content-Type: application/json)")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw tooLarge(limit)
        } catch is NIOTooManyBytesError {
            throw tooLarge(limit)
        }
        do {
            return try JSONDecoder().decode(Strict<T>.self, from: Data(buffer.readableBytesView)).value
        } catch let error as BadgeError {
            throw error
        } catch let DecodingError.dataCorrupted(context) where context.codingPath.isEmpty {
            throw BadgeError(.usage, "the request body is not JSON: \(context.debugDescription)")
        } catch let DecodingError.dataCorrupted(context) {
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw BadgeError(.usage, "the request body's \"\(key)\" is wrong: \(context.debugDescription)")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context), let DecodingError.keyNotFound(_, context) {
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw BadgeError(.usage, "the request body's \(key.isEmpty ? "JSON" : "\"\(key)\"") is wrong: \(context.debugDescription)")
        } catch {
            throw BadgeError(.usage, "the request body does not hold what the studio takes: \(error)")
        }
    }

    /// 413: the body is past the studio's limit.
    private static func tooLarge(_ limit: Int) -> Problem {
        Problem(.contentTooLarge, code: "too-large", "the request body is larger than \(limit) bytes", hint: "the studio's requests are small JSON objects")
    }
}

/// A body decoded from the one parse: its keys are checked against the
/// type's before the type decodes itself from the same tree.
struct Strict<T: StudioBody>: Decodable {
    var value: T

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        guard let object = try? decoder.container(keyedBy: AnyKey.self) else {
            throw BadgeError(.usage, "the request body is not a JSON object")
        }
        if let unknown = object.allKeys.map(\.stringValue).sorted().first(where: { !T.keys.contains($0) }) {
            var hint = "known keys: \(T.keys.joined(separator: ", "))"
            if let near = ConfigObject.closest(to: unknown, in: T.keys) { hint = "did you mean \"\(near)\"? " + hint }
            throw BadgeError(.usage, "the request body has an unknown key \(ServeSettings.quoted(unknown))", hint: hint)
        }
        do {
            value = try T(from: decoder)
        } catch let error as DecodingError {
            guard case .dataCorrupted = error else { throw error }
            try Self.wholeNumbers(object)
            throw error
        } catch {
            // Foundation throws its own error for a number no Int holds (1.5, 1e20), which
            // it then calls "not valid JSON", though the body parsed: say which and what.
            try Self.wholeNumbers(object)
            throw BadgeError(.usage, "the request body does not hold what the studio takes")
        }
    }

    /// Throws for the first key whose number is not a whole one an Int holds.
    static func wholeNumbers(_ object: KeyedDecodingContainer<AnyKey>) throws {
        for key in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
            guard let number = try? object.decode(Double.self, forKey: key), number.rounded() != number || abs(number) > 9_007_199_254_740_992
            else { continue }
            throw BadgeError(.usage, "the request body's \"\(key.stringValue)\" is \(shown(number)), not a whole number the studio takes")
        }
    }

    /// 1.5 as 1.5, 1e20 as 100000000000000000000.
    static func shown(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e21 ? String(format: "%.0f", number) : String(number)
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
