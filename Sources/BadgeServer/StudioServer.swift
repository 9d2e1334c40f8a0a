import BadgeKit
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// `badge serve`: the studio and the render API on Hummingbird (SwiftNIO).
package enum StudioServer {
    /// Where the server listens once it does, and the URL to open.
    package struct Listening: Sendable {
        package var port: Int
        /// The studio's URL with its token, or the render API's base URL.
        package var url: String
    }

    /// The server's application: its routes over `context`, the render API's
    /// gate and cache, and the studio (none with `renderOnly`).
    package static func application(
        settings: ServeSettings, context: ServeContext, logger: Logger, requestLogger: Logger,
        onListening: @escaping @Sendable (Listening) -> Void = { _ in }
    ) throws -> (app: Application<RouterResponder<BasicRequestContext>>, studio: Studio?) {
        let gate = RenderGate(limit: settings.renderConcurrency, queueLimit: settings.renderQueue)
        let render = RenderService(
            backend: try proceduralBackend(context), environment: context.environment, limits: context.config.intake, gate: gate)
        let studio = settings.renderOnly ? nil : Studio(context: context, maxJobs: settings.maxJobs)
        let router = Routes.router(settings: settings, render: render, studio: studio, logger: requestLogger)
        let timeout = TimeAmount.nanoseconds(Int64(settings.requestTimeout.components.seconds) * 1_000_000_000
            + settings.requestTimeout.components.attoseconds / 1_000_000_000)
        var channel = HTTP1Channel.Configuration(additionalChannelHandlers: [RequestReadDeadline(timeout: timeout)], idleTimeout: timeout)
        // The request line counts as a field: room for the longest query the render API
        // reads (RenderQuery.maxQueryBytes) and more, so a longer one gets its JSON answer.
        channel.httpDecoder = .init(maxHeaderFieldSize: 24 << 10, maxHeaderListSize: 32 << 10, maxHeaderFieldCount: 100)
        let app = Application(
            router: router, server: .http1(configuration: channel),
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: nil, backlog: 1024,
                                 availableConnectionsDelegate: MaximumAvailableConnections(Self.connectionLimit())),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? settings.port
                let base = "http://\(settings.authority(port: port))/"
                // In the fragment, which a browser never sends (AccessPolicy); escaped but for unreserved characters.
                let token = settings.token.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? settings.token
                onListening(Listening(port: port, url: settings.renderOnly ? base + "v1/badge.png?promise=Run+a+marathon" : base + "#token=" + token))
            },
            logger: logger)
        return (app, studio)
    }

    /// Serves until the calling task is cancelled (Ctrl-C and SIGTERM cancel
    /// badge's commands). Then it stops: renders and candidates in flight are
    /// cancelled (nothing of them is committed), a commit under way runs to
    /// its end, open requests are answered, and the listening socket closes.
    package static func run(
        settings: ServeSettings, context: ServeContext, logger: Logger, requestLogger: Logger,
        onListening: @escaping @Sendable (Listening) -> Void
    ) async throws {
        let listening = Mutex(false)
        let (app, studio) = try application(settings: settings, context: context, logger: logger, requestLogger: requestLogger) { address in
            listening.withLock { $0 = true }
            onListening(address)
        }
        // Services stop in the reverse of their order: the studio first, then the server.
        let services: [any Service] = [app] + (studio.map { [StudioService(studio: $0)] } ?? [])
        // badge's own signal handling (Interrupts) cancels the command; the group listens for none.
        let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [], cancellationSignals: [], logger: logger))
        // The group runs in a task of its own, which the caller's cancellation
        // does not reach: that shuts it down gracefully instead.
        let serving = Task { try await group.run() }
        await withTaskCancellationHandler {
            _ = await serving.result
        } onCancel: {
            Task { await group.triggerGracefulShutdown() }
        }
        do {
            try await serving.value
        } catch {
            let address = settings.authority(port: settings.port)
            guard listening.withLock({ $0 }) else {
                throw BadgeError(.io, "cannot listen on \(address)", cause: "\(error)",
                                 hint: "another program may be using the port: choose another with --listen HOST:PORT (port 0 picks a free one)")
            }
            throw BadgeError(.io, "the server on \(address) stopped", cause: "\(error)")
        }
    }

    /// The studio as one of the server's services: at the group's graceful
    /// shutdown it stops first, cancelling the candidates being made (nothing
    /// of them is committed; a commit under way finishes), before the server
    /// stops taking requests and answers those it has.
    struct StudioService: Service {
        let studio: Studio

        func run() async throws {
            try? await gracefulShutdown()
            await studio.shutdown()
        }
    }

    /// RFC 3986's unreserved characters.
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// The render API's backend: the configured procedural instance named
    /// `procedural`, else the first of that type, else a built-in one.
    /// The connections served at once: as many as the open-file limit allows,
    /// less a reserve for the files renders and commits open. Past it, a new
    /// connection waits in the listen backlog; accept(2) failing with EMFILE
    /// instead would be retried by the event loop at once, taking a core.
    static func connectionLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return Int.max }
        return max(8, Int(clamping: limit.rlim_cur) - 128)
    }

    static func proceduralBackend(_ context: ServeContext) throws -> BackendInstance {
        let type = "procedural"
        let config = context.config.backend(named: type).flatMap { $0.type == type ? $0 : nil }
            ?? context.config.backends.first { $0.type == type }
            ?? BackendConfig(name: type, type: type, options: .empty(keyPath: "backends.\(type)"), isBuiltIn: true)
        return try context.registry.makeBackend(config, environment: context.environment)
    }
}
