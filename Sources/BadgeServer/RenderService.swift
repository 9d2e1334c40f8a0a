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
        /// The badge as the pipeline made and checked it.
        package let badge: CheckedBadge
        package var png: Data { badge.png }
        package var metadata: BadgeMetadata { badge.metadata }
        package let etag: String
        /// The bytes as every answer sends them: made once, shared by each response.
        let body: ByteBuffer

        init(_ badge: CheckedBadge) {
            self.badge = badge
            etag = "\"\(badge.metadata.id)\""
            body = ByteBuffer(bytes: badge.png)
        }
    }

    let backend: BackendInstance
    let environment: BadgeEnvironment
    let limits: ImageLimits
    package let gate: RenderGate
    let cache: RenderCache

    package init(backend: BackendInstance, environment: BadgeEnvironment, limits: ImageLimits, gate: RenderGate, cacheBytes: Int = 64 << 20) {
        self.backend = backend
        self.environment = environment
        self.limits = limits
        self.gate = gate
        self.cache = RenderCache(capacity: cacheBytes)
    }

    /// The badge for `query`, from the cache or drawn now. Throws
    /// `RenderGate.Full` when the render queue is full.
    package func badge(for query: RenderQuery) async throws -> Rendered {
        let key = query.canonical
        if let hit = cache[key] { return hit }
        let moment = try query.date.map(RenderQuery.dayStart) ?? Date(timeIntervalSince1970: 0)
        let utc = TimeZone(identifier: "UTC")!
        var environment = BadgeEnvironment(
            sourceDate: moment, timeZone: utc, variables: [:], logger: environment.logger, http: nil, decoder: environment.decoder,
            workingDirectory: environment.workingDirectory)
        environment.logger[metadataKey: "render"] = "\(query.size)px"
        let pipeline = Pipeline(environment: environment, limits: limits)
        let request = query.request
        let made = try await gate.run {
            try await pipeline.render(request, backend: backend, commitment: Pipeline.Commitment(date: moment, timeZone: utc))
        }
        let rendered = Rendered(made)
        cache[key] = rendered
        return rendered
    }

    /// The metadata the PNG carries, as its text chunks say it.
    package static func metadataJSON(_ rendered: Rendered) -> [String: String] {
        Dictionary(rendered.metadata.textEntries.map { ($0.keyword, $0.text) }, uniquingKeysWith: { first, _ in first })
    }
}

/// Finished badges by canonical query, least recently used first out, up to
/// `capacity` bytes of PNG.
final class RenderCache: Sendable {
    private struct State {
        var entries: [String: (badge: RenderService.Rendered, used: UInt64)] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = capacity
    }

    subscript(key: String) -> RenderService.Rendered? {
        get {
            state.withLock { state in
                guard let entry = state.entries[key] else { return nil }
                state.clock += 1
                state.entries[key]?.used = state.clock
                return entry.badge
            }
        }
        set {
            guard let newValue, newValue.png.count <= capacity / 4 else { return }
            state.withLock { state in
                state.clock += 1
                if let old = state.entries.updateValue((newValue, state.clock), forKey: key) { state.bytes -= old.badge.png.count }
                state.bytes += newValue.png.count
                while state.bytes > capacity, let oldest = state.entries.min(by: { $0.value.used < $1.value.used }) {
                    state.entries[oldest.key] = nil
                    state.bytes -= oldest.value.badge.png.count
                }
            }
        }
    }
}
