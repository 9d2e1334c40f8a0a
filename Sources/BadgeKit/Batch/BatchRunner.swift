import Foundation

/// What became of one item.
public struct BatchResult: Sendable {
    public enum Status: String, Sendable, Codable {
        /// Drawn and written in this run.
        case made = "ok"
        /// Its output was already there with the same request hash.
        case upToDate = "up-to-date"
        case failed
        /// Interrupted, or never started because the run stopped (Ctrl-C, --fail-fast).
        case cancelled
    }

    public var item: BatchItem
    public var status: Status
    public var metadata: BadgeMetadata?
    public var sha256: String?
    public var bytes: Int?
    public var duration: Duration?
    public var error: BadgeError?

    public init(item: BatchItem, status: Status, metadata: BadgeMetadata? = nil, sha256: String? = nil, bytes: Int? = nil,
                duration: Duration? = nil, error: BadgeError? = nil) {
        self.item = item
        self.status = status
        self.metadata = metadata
        self.sha256 = sha256
        self.bytes = bytes
        self.duration = duration
        self.error = error
    }

    public var succeeded: Bool { status == .made || status == .upToDate }
}

/// What a run reports while it goes, for a progress bar or a log.
public enum BatchEvent: Sendable {
    case started(BatchItem)
    case finished(BatchResult)
}

/// Runs a batch's items through the pipeline into an output directory: as
/// many at once as the global limit allows and each backend instance accepts,
/// in manifest order; items whose output is up to date are not redone; a
/// failure stops only its own item (unless `failFast`); cancelling the task
/// stops everything, keeps finished files and leaves no partial one.
public struct BatchRunner: Sendable {
    /// A backend instance and the fallbacks it hands over to.
    public struct Chain: Sendable {
        public var backend: BackendInstance
        public var fallbacks: [BackendInstance]
        /// How many of its items may be drawn at once (writing the file
        /// afterwards no longer holds the backend's slot).
        public var limit: Int

        public init(backend: BackendInstance, fallbacks: [BackendInstance] = [], limit: Int) {
            self.backend = backend
            self.fallbacks = fallbacks
            self.limit = max(1, limit)
        }
    }

    public var pipeline: Pipeline
    public var chains: [String: Chain]
    public var concurrency: Int
    public var force: Bool
    public var failFast: Bool
    public var commitment: Pipeline.Commitment

    public init(pipeline: Pipeline, chains: [String: Chain], concurrency: Int, force: Bool = false, failFast: Bool = false,
                commitment: Pipeline.Commitment) {
        self.pipeline = pipeline
        self.chains = chains
        self.concurrency = max(1, concurrency)
        self.force = force
        self.failFast = failFast
        self.commitment = commitment
    }

    public static let requestHashKey = "batch-request"

    /// Runs `items`; the results come back in the same order.
    public func run(
        _ items: [BatchItem], into output: BatchOutputDirectory, events: @escaping @Sendable (BatchEvent) -> Void = { _ in }
    ) async -> [BatchResult] {
        var results = [BatchResult?](repeating: nil, count: items.count)
        output.sweepStaleTemporaries()

        var pending: [Int] = []
        let force = self.force
        // Reading and hashing every earlier output is blocking work: off the cooperative threads.
        let existing = (try? await BlockingExecutor.runToCompletion { items.map { force ? nil : Self.upToDate($0, in: output) } })
            ?? items.map { _ in nil }
        for (index, result) in existing.enumerated() {
            if let result {
                results[index] = result
                events(.finished(result))
            } else {
                pending.append(index)
            }
        }

        var running: [String: Int] = [:]
        var stopReason: String?
        await withTaskGroup(of: (Int, Step).self) { group in
            var inFlight = 0
            while true {
                if stopReason == nil && Task.isCancelled { stopReason = "interrupted before it started" }
                if stopReason == nil {
                    var cursor = 0
                    while inFlight < concurrency && cursor < pending.count {
                        let index = pending[cursor]
                        let item = items[index]
                        guard let chain = chains[item.backend] else {
                            pending.remove(at: cursor)
                            let error = BadgeError(.unknownBackend, "no backend is named \"\(item.backend)\"")
                            let result = BatchResult(item: item, status: .failed, error: error)
                            results[index] = result
                            events(.finished(result))
                            continue
                        }
                        guard running[item.backend, default: 0] < chain.limit else {
                            cursor += 1
                            continue
                        }
                        pending.remove(at: cursor)
                        running[item.backend, default: 0] += 1
                        inFlight += 1
                        events(.started(item))
                        group.addTask { (index, await self.draw(item, with: chain)) }
                    }
                }
                guard inFlight > 0, let (index, step) = await group.next() else { break }
                let result: BatchResult
                switch step {
                case let .drawn(png, metadata, started):
                    // The backend is free for the next item while this one is
                    // written and fsynced: a core never waits on the disk.
                    running[items[index].backend, default: 1] -= 1
                    group.addTask { (index, .written(await self.write(items[index], png: png, metadata: metadata, started: started, into: output))) }
                    continue
                case let .failed(failure):
                    running[items[index].backend, default: 1] -= 1
                    result = failure
                case let .written(written):
                    result = written
                }
                inFlight -= 1
                results[index] = result
                events(.finished(result))
                if result.status == .failed && failFast && stopReason == nil {
                    stopReason = "not started: the run stopped after \(result.item.key) failed (--fail-fast)"
                    group.cancelAll()
                }
            }
        }
        for index in pending where results[index] == nil {
            let reason = stopReason ?? "interrupted before it started"
            let result = BatchResult(item: items[index], status: .cancelled, error: BadgeError(.cancelled, reason))
            results[index] = result
            events(.finished(result))
        }
        output.sync()
        return results.map { $0! }
    }

    /// Where an item is: drawn (its backend's slot is free again), or ended.
    private enum Step: Sendable {
        case drawn(png: Data, metadata: BadgeMetadata, started: ContinuousClock.Instant)
        case failed(BatchResult)
        case written(BatchResult)
    }

    /// Draws one item; every failure becomes a result, never a throw.
    private func draw(_ item: BatchItem, with chain: Chain) async -> Step {
        let started = ContinuousClock.now
        do {
            let (png, metadata) = try await ImageThreads.$limit.withValue(concurrency > 1 && chain.limit > 1 ? 1 : nil) {
                try await pipeline.render(
                    item.request, backend: chain.backend, fallbacks: chain.fallbacks, commitment: commitment,
                    extra: [Self.requestHashKey: item.requestHash])
            }
            try Task.checkCancellation()
            return .drawn(png: png, metadata: metadata, started: started)
        } catch {
            return .failed(Self.failure(item, error, backend: item.backend, started: started))
        }
    }

    /// Writes a drawn item. Once drawn, the write finishes even if a
    /// cancellation arrives meanwhile: it is atomic either way, and a finished
    /// badge is worth keeping.
    private func write(_ item: BatchItem, png: Data, metadata: BadgeMetadata, started: ContinuousClock.Instant,
                       into output: BatchOutputDirectory) async -> BatchResult {
        do {
            let digest = try await BlockingExecutor.runToCompletion { () throws -> String in
                try output.write(png, as: item.fileName)
                return BatchHash.sha256(png)
            }
            return BatchResult(item: item, status: .made, metadata: metadata, sha256: digest, bytes: png.count,
                               duration: ContinuousClock.now - started)
        } catch {
            // The image was drawn: a failure here is the output directory's, not the backend's.
            return Self.failure(item, error, backend: nil, started: started)
        }
    }

    private static func failure(_ item: BatchItem, _ error: any Error, backend: String?, started: ContinuousClock.Instant) -> BatchResult {
        let badgeError = BadgeError.wrap(error, backend: backend, message: backend == nil ? "cannot write the badge" : "the backend failed")
        return BatchResult(item: item, status: badgeError.code == .cancelled ? .cancelled : .failed,
                           duration: ContinuousClock.now - started, error: badgeError)
    }

    /// The existing output of `item` if it is a complete badge made for the same request.
    static func upToDate(_ item: BatchItem, in output: BatchOutputDirectory) -> BatchResult? {
        output.read(item.fileName).flatMap { upToDateResult(item, data: $0) }
    }

    /// `data` as a result of `item` if it is a complete badge (every CRC
    /// checked) made for the same request; nil otherwise.
    public static func upToDateResult(_ item: BatchItem, data: Data) -> BatchResult? {
        guard let chunks = try? PNG.chunks(in: data, verifyCRC: true), chunks.last?.type == "IEND",
              let metadata = BadgeMetadata(entries: chunks.compactMap(PNG.textEntry)),
              metadata.extra[requestHashKey] == item.requestHash
        else { return nil }
        return BatchResult(item: item, status: .upToDate, metadata: metadata, sha256: BatchHash.sha256(data), bytes: data.count)
    }
}
