import BadgeCard
import BadgeKit
import Foundation
import ProceduralBackend
import Synchronization

/// What `badge serve` works with: the same configuration, registry, store and
/// environment as every command.
package struct ServeContext: Sendable {
    package let config: BadgeConfig
    package let environment: BadgeEnvironment
    package let registry: BackendRegistry
    package let store: BadgeStore
    private let instances = BackendInstances()

    package init(config: BadgeConfig, environment: BadgeEnvironment, registry: BackendRegistry, store: BadgeStore) {
        self.config = config
        self.environment = environment
        self.registry = registry
        self.store = store
    }

    /// The configured backend `name`, set up once for the server's life (its
    /// options parsed, a ComfyUI workflow read, an exec plugin's availability
    /// remembered) rather than for every request. The set-up reads files, so
    /// it runs on a thread of badge's, not on the pool serving requests.
    func backend(named name: String) async throws -> BackendInstance {
        try await instances.instance(named: name) { [registry, config, environment] in
            try await BlockingExecutor.run { try registry.makeBackend(named: name, in: config, environment: environment) }
        }
    }
}

/// The backends a server has set up, by name. Only a success is kept: a
/// backend that could not be set up (its workflow file missing, say) is tried
/// again on the next request, and says why again.
private final class BackendInstances: Sendable {
    private let made = Mutex<[String: BackendInstance]>([:])

    func instance(named name: String, make: () async throws -> BackendInstance) async throws -> BackendInstance {
        if let known = made.withLock({ $0[name] }) { return known }
        let instance = try await make()
        // Two requests may set it up at once; the first one kept is the one every later request gets.
        return made.withLock { made in
            if let known = made[name] { return known }
            made[name] = instance
            return instance
        }
    }
}

/// The studio: the app's screen over one person's store. It reads the current
/// badge and its history, makes candidates for a request (a `StudioJob`), and
/// commits the one picked through `Pipeline.commit`, the road every badge
/// takes into the store. It knows nothing of HTTP.
package final class Studio: Sendable {
    let context: ServeContext
    let maxJobs: Int
    private let jobs = Mutex<[StudioJob]>([])
    /// The back of the current badge, by badge id and locale.
    private let backCache = Mutex<(key: String, png: Data)?>(nil)
    /// SVGs drawn of the current badge and of candidates, by badge id, the
    /// newest last (a few: a set of candidates and the badge picked of them).
    private let vectorCache = Mutex<[(id: String, svg: Data)]>([])
    static let vectorsKept = 12

    package init(context: ServeContext, maxJobs: Int) {
        self.context = context
        self.maxJobs = maxJobs
    }

    // MARK: - Reading

    package struct BadgeView: Encodable, Sendable {
        var id: String
        var promise: String
        var prompt: String
        var commitmentDate: String
        var timeZone: String
        var style: String?
        var backend: String
        var seed: String?
        var size: Int
        var caption: String?
        var replacedAt: String?
        var image: String
        /// The badge as SVG (drawn again from its metadata and checked against
        /// its pixels), for a badge the art engine can draw again.
        var vector: String?

        init(_ badge: StoredBadge, image: String, vector: String? = nil) {
            let metadata = badge.metadata
            id = metadata.id
            promise = metadata.promise
            prompt = metadata.prompt
            commitmentDate = metadata.commitmentDateString
            timeZone = metadata.timeZone
            style = metadata.styleDrawn?.name
            backend = metadata.backend
            seed = metadata.seed.map(String.init)
            size = metadata.size
            caption = metadata.captionDrawn
            replacedAt = badge.replacedAt.map { ISO8601DateFormatter().string(from: $0) }
            self.image = image
            self.vector = Provenance.isRedrawable(metadata) ? vector : nil
        }
    }

    package struct StateView: Encodable, Sendable {
        var badge: BadgeView?
        var history: [BadgeView]
        var styles: [String]
        var vibes: [String]
        var metaphors: [String]
        var colors: [String]
        var count: Int
        var counts: [Int]
        var defaultBackend: String
    }

    package func state() async throws -> StateView {
        let store = context.store
        let (current, history) = try await BlockingExecutor.run { (try store.current(), try store.history()) }
        return StateView(
            badge: current.map { BadgeView($0, image: "/api/badge.png?v=\($0.metadata.id)", vector: "/api/badge.svg?v=\($0.metadata.id)") },
            history: history.map { BadgeView($0, image: "/api/history/\($0.metadata.id).png") },
            styles: ProceduralGenerator.styles, vibes: PromptComposer.vibes, metaphors: PromptComposer.metaphors,
            colors: PromptComposer.suggestedColors, count: 4, counts: Array(Candidates.countRange),
            defaultBackend: context.config.defaults.backend)
    }

    package struct BackendView: Encodable, Sendable {
        var name: String
        var type: String
        var available: Bool
        var reason: String?
        var hint: String?
        var styles: [String]

        init(name: String, type: String, available: Bool, reason: String?, hint: String?, styles: [String]) {
            self.name = name
            self.type = type
            self.available = available
            self.reason = reason
            self.hint = hint
            self.styles = styles
        }

        /// A backend's view from its answer, each field set once by the switch:
        /// docs/DEVELOPING.md says why no field is changed after the fact.
        init(name: String, type: String, availability: Availability, styles: [String]) {
            switch availability {
            case .available:
                self.init(name: name, type: type, available: true, reason: nil, hint: nil, styles: styles)
            case let .unavailable(reason, hint):
                self.init(name: name, type: type, available: false,
                          reason: OutsideText.printable(reason, keepingNewlines: false),
                          hint: hint.map { OutsideText.printable($0, keepingNewlines: false) }, styles: styles)
            }
        }
    }

    /// Every configured backend, whether it can run now, and why not: the
    /// checks run at once, each as cheap as `badge backends` makes it.
    package func backends() async -> [BackendView] {
        await withTaskGroup(of: (Int, BackendView).self) { group in
            for (index, config) in context.config.backends.enumerated() {
                group.addTask { [context] in
                    do {
                        let instance = try await context.backend(named: config.name)
                        let availability = await instance.generator.availability()
                        return (index, BackendView(name: config.name, type: config.type, availability: availability,
                                                   styles: instance.generator.styles ?? []))
                    } catch {
                        let error = BadgeError.wrap(error, backend: config.name, message: "the backend cannot be set up")
                        return (index, BackendView(name: config.name, type: config.type, available: false, reason: error.message, hint: error.hint, styles: []))
                    }
                }
            }
            var views: [(Int, BackendView)] = []
            for await view in group { views.append(view) }
            return views.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// The current badge's bytes, or nil when there is none.
    package func currentImage() async throws -> (png: Data, id: String)? {
        let store = context.store
        return try await BlockingExecutor.run {
            guard let (badge, png) = try store.currentWithBytes() else { return nil }
            return (png, badge.metadata.id)
        }
    }

    /// The current badge as SVG, drawn again from its metadata once its
    /// pixels match a fresh rendering; nil when there is no badge.
    package func currentVector() async throws -> (svg: Data, id: String)? {
        let store = context.store
        guard let (badge, png) = try await BlockingExecutor.run({ try store.currentWithBytes() }) else { return nil }
        let svg = try await vector(of: png, metadata: badge.metadata, source: badge.url.path)
        return (svg, badge.metadata.id)
    }

    /// A candidate of a job as SVG, drawn again and checked as `currentVector` is.
    package func candidateVector(_ made: CheckedBadge) async throws -> Data {
        try await vector(of: made.png, metadata: made.metadata, source: "candidate")
    }

    private func vector(of png: Data, metadata: BadgeMetadata, source: String) async throws -> Data {
        let id = metadata.id
        if let kept = vectorCache.withLock({ $0.first { $0.id == id }?.svg }) { return kept }
        guard Provenance.isRedrawable(metadata) else {
            throw BadgeError(.unsupportedFormat, "this badge was made by the \(metadata.backendType) backend \"\(OutsideText.printable(metadata.backend))\"; only a procedural badge of this art engine can be drawn as SVG",
                             hint: "use its PNG")
        }
        let svg = try await Provenance.vectorCopy(png: png, metadata: metadata, source: source)
        vectorCache.withLock { kept in
            kept.removeAll { $0.id == id }
            kept.append((id, svg))
            if kept.count > Self.vectorsKept { kept.removeFirst(kept.count - Self.vectorsKept) }
        }
        return svg
    }

    /// A history entry's bytes, by its full id.
    package func historyImage(id: String) async throws -> Data {
        guard BadgeMetadata.isValidID(id) else {
            throw BadgeError(.notFound, "there is no badge \(ServeSettings.quoted(id)) in the history", hint: "ids are 16 hex digits, as the history lists them")
        }
        let store = context.store
        return try await BlockingExecutor.run {
            let (entry, png) = try store.historyEntryWithBytes(matching: id)
            guard entry.metadata.id == id else {
                throw BadgeError(.notFound, "there is no badge \(id) in the history")
            }
            return png
        }
    }

    /// The back of the current badge's card, its date written long in `locale`.
    package func currentBack(locale: Locale) async throws -> (png: Data, id: String)? {
        guard let (front, id) = try await currentImage() else { return nil }
        let key = id + "\u{0}" + locale.identifier
        if let cached = backCache.withLock({ $0 }), cached.key == key { return (cached.png, id) }
        let store = context.store
        let limits = context.config.intake
        let png = try await BlockingExecutor.run {
            guard let badge = try store.current(), badge.metadata.id == id else {
                throw BadgeError(.notFound, "the current badge changed while its back was drawn", hint: "load the page again")
            }
            return try BackFace.png(forBadge: front, metadata: badge.metadata, locale: locale,
                                    limits: limits.admittingDrawing(side: badge.metadata.size), source: badge.url.path)
        }
        backCache.withLock { $0 = (key, png) }
        return (png, id)
    }

    // MARK: - Making candidates

    /// What the sheet sends when Generate is pressed.
    package struct GenerateRequest: Decodable, Sendable {
        var promise: String?
        var purpose: String?
        var vibe: String?
        var metaphor: String?
        var style: String?
        var colors: [String]?
        var backend: String?
        var date: String?
        var timeZone: String?
        var count: Int?
        var seed: String?
    }

    /// Starts making candidates for `request`; returns the job at once.
    package func generate(_ body: GenerateRequest) async throws -> StudioJob {
        let config = context.config
        func trimmed(_ text: String?) -> String? {
            guard let text = text?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
            return text
        }
        let promise = trimmed(body.promise)
        let composing = [body.purpose, body.vibe, body.metaphor].contains { trimmed($0) != nil } || !(body.colors ?? []).isEmpty
        let givenStyle = trimmed(body.style)
        // The composer's words are lowercase; the backend is asked in its own spelling (below).
        let style = givenStyle?.lowercased()
        var prompt: String
        if composing {
            guard let purpose = trimmed(body.purpose) ?? promise else {
                throw BadgeError(.usage, "the purpose is empty", hint: "say what the promise is, e.g. \"Run a marathon\"")
            }
            let composer = PromptComposer(purpose: purpose, vibe: trimmed(body.vibe), metaphor: trimmed(body.metaphor), style: style,
                                          colors: (body.colors ?? []).compactMap(trimmed))
            try composer.validate()
            prompt = composer.line
        } else {
            guard let promise else {
                throw BadgeError(.usage, "the promise is empty; describe it in a few words, e.g. \"A pair of dumbbells\"")
            }
            prompt = promise
        }
        let count = body.count ?? 4
        guard Candidates.countRange.contains(count) else {
            throw BadgeError(.usage, "count must be from \(Candidates.countRange.lowerBound) to \(Candidates.countRange.upperBound) candidates, not \(count)")
        }
        var zone = TimeZone.current
        if let name = trimmed(body.timeZone) {
            guard name.utf8.count <= 64, let given = TimeZone(identifier: name) else {
                throw BadgeError(.usage, "\(ServeSettings.quoted(name)) is not a time zone", hint: "an IANA name such as Europe/Berlin")
            }
            zone = given
        }
        let date = try trimmed(body.date).map { try BadgeMetadata.parseCommitmentDate($0, in: zone) }
        var seed: UInt64
        if let text = trimmed(body.seed) {
            guard text.utf8.count <= 20, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let number = UInt64(text) else {
                throw BadgeError(.usage, "seed must be a whole number from 0 to \(UInt64.max), not \(ServeSettings.quoted(text))")
            }
            seed = number
        } else {
            var random = SystemRandomNumberGenerator()
            seed = random.next()
        }
        let chain = config.fallbackChain(for: trimmed(body.backend) ?? config.defaults.backend)
        let backend = try await context.backend(named: chain[0])
        var fallbackList: [BackendInstance] = []
        for name in chain.dropFirst() { fallbackList.append(try await context.backend(named: name)) }
        let fallbacks = fallbackList
        let backendStyles = backend.generator.styles ?? []
        // A style as the backend spells it, matched without regard to case ("watercolour" is its "Watercolour").
        var backendStyle: String?
        if let givenStyle {
            let match = backend.spelling(ofStyle: givenStyle)
            guard backendStyles.contains(match) else {
                throw BadgeError(.usage, backendStyles.isEmpty
                                     ? "the \(backend.type) backend \"\(backend.name)\" has no styles; the style would be ignored"
                                     : "the \(backend.type) backend \"\(backend.name)\" has no style \(ServeSettings.quoted(givenStyle))",
                                 hint: backendStyles.isEmpty ? "choose no style, or a backend that draws styles" : "choose one of: \(backendStyles.joined(separator: ", "))")
            }
            backendStyle = match
        }
        let request = BadgeRequest(prompt: prompt, style: backendStyles.isEmpty ? nil : backend.style(given: backendStyle, fallback: config.defaults.style, prompt: prompt),
                                   size: config.defaults.size, seed: seed)
        try request.validate()
        let limit = config.backend(named: backend.name)?.concurrency ?? backend.generator.preferredConcurrency ?? count
        let commitment = Pipeline.Commitment(date: date, timeZone: zone)
        let pipeline = Pipeline(environment: context.environment, limits: config.intake)
        // A composed line is the prompt; its purpose is the promise, as with `badge generate`.
        let extra = PromptComposer.purpose(ofLine: prompt).map { ["promise": $0] } ?? [:]
        let requests = Candidates.requests(for: request, count: count, styles: backend.stylesToVary(given: backendStyle, prompt: prompt))

        let job = StudioJob(count: count, backend: backend, commitment: commitment)
        try admit(job)
        job.start { job in
            _ = try await Candidates.make(requests, pipeline: pipeline, backend: backend, fallbacks: fallbacks, commitment: commitment,
                                          extra: extra, limit: limit, progress: job)
        }
        return job
    }

    /// Every job slot holds a set still being made: a new one must wait (429).
    package struct Full: Error {
        package let running: Int
    }

    /// Keeps `job`, pushing out the oldest ended ones past `maxJobs`; refuses
    /// it (`Full`) when that many are still running.
    private func admit(_ job: StudioJob) throws {
        try jobs.withLock { jobs in
            while jobs.count >= maxJobs, let index = jobs.firstIndex(where: \.ended) { jobs.remove(at: index) }
            guard jobs.count < maxJobs else { throw Full(running: maxJobs) }
            jobs.append(job)
        }
    }

    package func job(_ id: String) -> StudioJob? {
        jobs.withLock { $0.first { $0.id == id } }
    }

    /// Cancels a job's work; nothing of it is committed.
    package func cancel(_ id: String) async throws {
        guard let job = job(id) else { throw Self.noJob(id) }
        await job.cancel()
    }

    /// Commits candidate `number` of job `id` through the store, with the
    /// commitment date chosen when the job started.
    package func pick(job id: String, number: Int) async throws -> PipelineOutcome {
        guard let job = job(id) else { throw Self.noJob(id) }
        guard (1...job.count).contains(number) else {
            throw BadgeError(.usage, "candidate must be from 1 to \(job.count), not \(number)")
        }
        guard let made = job.candidate(number) else {
            throw BadgeError(.notFound, "candidate \(number) was not made", hint: job.ended ? "pick one that is ready, or generate again" : "wait until it is ready")
        }
        let pipeline = Pipeline(environment: context.environment, limits: context.config.intake)
        return try await pipeline.commit(made, commitment: job.commitment, to: .store(context.store))
    }

    /// Makes a history entry the current badge again (a commit).
    package func restore(id: String) async throws -> StoredBadge {
        guard BadgeMetadata.isValidID(id) else {
            throw BadgeError(.notFound, "there is no badge \(ServeSettings.quoted(id)) in the history", hint: "ids are 16 hex digits, as the history lists them")
        }
        let store = context.store
        return try await BlockingExecutor.runToCompletion { try store.restore(id: id) }
    }

    /// Cancels every job and waits for them to stop; commits under way finish
    /// (a commit runs to its end on a thread of its own).
    package func shutdown() async {
        let running = jobs.withLock { $0 }
        await withTaskGroup(of: Void.self) { group in
            for job in running { group.addTask { await job.cancel() } }
        }
    }

    private static func noJob(_ id: String) -> BadgeError {
        BadgeError(.notFound, "there is no set of candidates \(ServeSettings.quoted(id))", hint: "it may have been replaced by newer ones; generate again")
    }
}
