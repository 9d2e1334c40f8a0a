import BadgeKit
import Foundation
import NIOCore
import Synchronization

/// Badges by URL: a procedural badge for a `RenderQuery`, drawn through the
/// pipeline like any other (intake, stamp, PNG check) but never committed.
/// The moment stamped is fixed (the query's `date`, else 1970-01-01 UTC) and
/// the id is the content's, so the same query gives the same bytes on every
/// replica, and the id is a strong ETag. Renders pass the gate; finished
/// badges are kept in a bounded cache.
package final class RenderService: Sendable {
    package struct Rendered: Sendable {
        /// What the badge's PNG says of it.
        package let metadata: BadgeMetadata
        package let etag: String
        /// The PNG as the pipeline made and checked it, and as every answer
        /// sends it: the one copy kept, shared by each response.
        let body: ByteBuffer

        /// PNG or SVG.
        package let format: BadgeFormat

        init(_ badge: CheckedBadge) {
            metadata = badge.metadata
            etag = "\"\(badge.metadata.id)\""
            body = ByteBuffer(bytes: badge.png)
            format = .png
        }

        /// An SVG's tag is its id with "-svg": the PNG and the SVG of one
        /// query are two representations, and their tags must differ.
        init(svg: Data, metadata: BadgeMetadata) {
            self.metadata = metadata
            etag = "\"\(metadata.id)-svg\""
            body = ByteBuffer(bytes: svg)
            format = .svg
        }

        /// What keeping it costs a cache, in bytes: the PNG, the prompt, and
        /// a generous bound for the rest of the metadata.
        static func cacheCost(_ rendered: Rendered) -> Int {
            rendered.body.readableBytes + rendered.metadata.prompt.utf8.count + 1024
        }
    }

    let backend: BackendInstance
    let environment: BadgeEnvironment
    let limits: ImageLimits
    package let gate: RenderGate
    let cache: RenderCache<Rendered>
    /// Queries as they came, to what they parsed to and their cache key: a
    /// query asked again (an embedded badge) is found without being parsed.
    let parsed = RenderCache<Parsed>(capacity: 4 << 20, cost: { 256 + $0.key.utf8.count })

    struct Parsed: Sendable {
        let query: RenderQuery
        let key: String
    }

    package init(backend: BackendInstance, environment: BadgeEnvironment, limits: ImageLimits, gate: RenderGate, cacheBytes: Int = 64 << 20) {
        self.backend = backend
        self.environment = environment
        self.limits = limits
        self.gate = gate
        self.cache = RenderCache(capacity: cacheBytes, cost: Rendered.cacheCost)
    }

    /// The badge for `query`, from the cache or drawn now. Throws
    /// `RenderGate.Full` when the render queue is full.
    /// `query` (a URL's query string) read, or found read before with the
    /// same largest size; only queries that parse are kept.
    package func query(_ raw: String?, maxSize: Int, format: BadgeFormat) throws(RenderQuery.Problem) -> (RenderQuery, key: String) {
        let seen = "\(format == .png ? "png" : "svg") \(maxSize) " + (raw ?? "")
        if let hit = parsed.value(for: seen) { return (hit.query, hit.key) }
        let query = try RenderQuery.parse(raw, maxSize: maxSize)
        let key = format == .png ? query.canonical : "svg " + query.canonical
        parsed.insert(Parsed(query: query, key: key), for: seen)
        return (query, key)
    }

    package func badge(for query: RenderQuery, format: BadgeFormat = .png) async throws -> Rendered {
        try await badge(for: query, key: format == .png ? query.canonical : "svg " + query.canonical, format: format)
    }

    /// The badge for `query`, whose cache key (`query(_:maxSize:format:)`) is `key`.
    package func badge(for query: RenderQuery, key: String, format: BadgeFormat) async throws -> Rendered {
        if let hit = cache.value(for: key) { return hit }
        let moment = try query.date.map(RenderQuery.dayStart) ?? Date(timeIntervalSince1970: 0)
        let utc = TimeZone(identifier: "UTC")!
        var environment = BadgeEnvironment(
            sourceDate: moment, timeZone: utc, variables: [:], logger: environment.logger, http: nil, decoder: environment.decoder,
            workingDirectory: environment.workingDirectory)
        environment.logger[metadataKey: "render"] = "\(query.size)px"
        let pipeline = Pipeline(environment: environment, limits: limits)
        let request = query.request
        // Several renders at once each draw on one thread, as a batch's jobs
        // do: the slots keep the cores busy, and a render that split its rows
        // across the shared worker threads as well would wait on the others'.
        let commitment = Pipeline.Commitment(date: moment, timeZone: utc)
        let rendered: Rendered
        switch format {
        case .png:
            let made = try await gate.run {
                try await ImageThreads.$limit.withValue(gate.limit > 1 ? 1 : nil) {
                    try await pipeline.render(request, backend: backend, commitment: commitment)
                }
            }
            rendered = Rendered(made)
        case .svg:
            let (svg, metadata) = try await gate.run { try await pipeline.renderVector(request, backend: backend, commitment: commitment) }
            rendered = Rendered(svg: svg, metadata: metadata)
        }
        cache.insert(rendered, for: key)
        return rendered
    }

    /// The metadata the PNG carries, as its text chunks say it.
    package static func metadataJSON(_ rendered: Rendered) -> [String: String] {
        Dictionary(rendered.metadata.textEntries.map { ($0.keyword, $0.text) }, uniquingKeysWith: { first, _ in first })
    }
}
