import Foundation

/// What became of one item.
package struct BatchResult: Sendable {
    package enum Status: String, Sendable, Codable {
        /// Drawn and written in this run.
        case made = "ok"
        /// Its output was already there with the same request hash.
        case upToDate = "up-to-date"
        case failed
        /// Interrupted, or never started because the run stopped (Ctrl-C, --fail-fast).
        case cancelled
    }

    package var item: BatchItem
    package var status: Status
    package var metadata: BadgeMetadata?
    package var sha256: String?
    package var bytes: Int?
    package var duration: Duration?
    package var error: BadgeError?

    package init(item: BatchItem, status: Status, metadata: BadgeMetadata? = nil, sha256: String? = nil, bytes: Int? = nil,
                duration: Duration? = nil, error: BadgeError? = nil) {
        self.item = item
        self.status = status
        self.metadata = metadata
        self.sha256 = sha256
        self.bytes = bytes
        self.duration = duration
        self.error = error
    }

    package var succeeded: Bool { status == .made || status == .upToDate }
}

/// What a run reports while it goes, for a progress bar or a log.
package enum BatchEvent: Sendable {
    case started(BatchItem)
    case finished(BatchResult)
}

/// Runs a batch's items through the pipeline into an output directory: as
/// many at once as the global limit allows and each backend instance accepts,
/// in manifest order; items whose output is up to date are not redone; a
/// failure stops only its own item (unless `failFast`); cancelling the task
/// stops everything, keeps finished files and leaves no partial one.
package struct BatchRunner: Sendable {
    /// A backend instance and the fallbacks it hands over to.
    package struct Chain: Sendable {
        package var backend: BackendInstance
        package var fallbacks: [BackendInstance]
        /// How many of its items may be drawn at once (writing the file
        /// afterwards no longer holds the backend's slot).
        package var limit: Int

        package init(backend: BackendInstance, fallbacks: [BackendInstance] = [], limit: Int) {
            self.backend = backend
            self.fallbacks = fallbacks
            self.limit = max(1, limit)
        }
    }

    package var pipeline: Pipeline
    package var chains: [String: Chain]
    package var concurrency: Int
    package var force: Bool
    package var failFast: Bool
    package var commitment: Pipeline.Commitment

    package init(pipeline: Pipeline, chains: [String: Chain], concurrency: Int, force: Bool = false, failFast: Bool = false,
                commitment: Pipeline.Commitment) {
        self.pipeline = pipeline
        self.chains = chains
        self.concurrency = max(1, concurrency)
        self.force = force
        self.failFast = failFast
        self.commitment = commitment
    }

    package static let requestHashKey = "batch-request"

    /// Runs `items`; the results come back in the same order. Every result
    /// is kept until the end: for a large batch, `stream` hands each one over
    /// as it finishes instead.
    package func run(
        _ items: [BatchItem], into output: BatchOutputDirectory, events: @escaping @Sendable (BatchEvent) -> Void = { _ in }
    ) async -> [BatchResult] {
        var results = [BatchResult?](repeating: nil, count: items.count)
        await stream(items, into: output, events: events) { index, result in results[index] = result }
        return results.map { $0! }
    }

    /// How many earlier outputs one blocking read-and-check task looks at:
    /// drawing starts after the first such chunk, and only one chunk's
    /// results are held at a time.
    static let scanChunk = 256

    /// Runs `items`, handing each item's result to `record` with its index
    /// once, as it finishes (in no particular order), and keeping none: the
    /// memory a run holds grows with its concurrency, not with its items.
    /// Returns the scheduler's step count (see `BatchScheduler.steps`).
    @discardableResult
    package func stream(
        _ items: [BatchItem], into output: BatchOutputDirectory, events: @escaping @Sendable (BatchEvent) -> Void = { _ in },
        record: (Int, BatchResult) -> Void
    ) async -> Int {
        output.sweepStaleTemporaries()
        // Each backend instance is a slot of the scheduler; an item's slot is
        // looked up once, when its earlier output has been checked.
        let names = chains.keys.sorted()
        let slots = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
        let slotChains = names.map { chains[$0]! }
        var scheduler = BatchScheduler(limits: slotChains.map(\.limit))

        func finish(_ index: Int, _ result: BatchResult) {
            scheduler.count()
            events(.finished(result))
            record(index, result)
        }

        var scanned = 0
        var scanning = false
        var inFlight = 0
        var stopReason: String?
        let force = self.force
        await withTaskGroup(of: (Int, Step).self) { group in
            while true {
                scheduler.count()
                if stopReason == nil && Task.isCancelled { stopReason = "interrupted before it started" }
                if stopReason == nil {
                    // Reading and hashing earlier outputs is blocking work: off the
                    // cooperative threads, one chunk at a time beside the drawing.
                    if !scanning && scanned < items.count {
                        let range = scanned..<min(items.count, scanned + Self.scanChunk)
                        scanned = range.upperBound
                        scanning = true
                        group.addTask {
                            let found = force ? [BatchResult?](repeating: nil, count: range.count)
                                : ((try? await BlockingExecutor.runToCompletion { range.map { Self.upToDate(items[$0], in: output) } })
                                    ?? [BatchResult?](repeating: nil, count: range.count))
                            return (range.lowerBound, .scanned(found))
                        }
                    }
                    while inFlight < concurrency, let (index, slot) = scheduler.next() {
                        let item = items[index]
                        inFlight += 1
                        events(.started(item))
                        let chain = slotChains[slot]
                        group.addTask { (index, await self.draw(item, with: chain, slot: slot)) }
                    }
                }
                guard inFlight > 0 || scanning, let (first, step) = await group.next() else { break }
                let index = first
                let result: BatchResult
                switch step {
                case let .scanned(found):
                    scanning = false
                    for (offset, existing) in found.enumerated() {
                        let index = first + offset
                        if let existing {
                            finish(index, existing)
                        } else if let slot = slots[items[index].backend] {
                            scheduler.enqueue(index, on: slot)
                        } else {
                            let error = BadgeError(.unknownBackend, "no backend is named \"\(items[index].backend)\"")
                            finish(index, BatchResult(item: items[index], status: .failed, error: error))
                        }
                    }
                    continue
                case let .drawn(badge, started, slot):
                    // The backend is free for the next item while this one is
                    // written and fsynced: a core never waits on the disk.
                    scheduler.release(slot)
                    group.addTask { (index, .written(await self.write(items[index], badge: badge, started: started, into: output))) }
                    continue
                case let .failed(failure, slot):
                    scheduler.release(slot)
                    result = failure
                case let .written(written):
                    result = written
                }
                inFlight -= 1
                finish(index, result)
                if result.status == .failed && failFast && stopReason == nil {
                    stopReason = "not started: the run stopped after \(result.item.key) failed (--fail-fast)"
                    group.cancelAll()
                }
            }
        }
        // What never started: the items still queued, and those not yet checked.
        let reason = stopReason ?? "interrupted before it started"
        for index in scheduler.drain() + Array(scanned..<items.count) {
            finish(index, BatchResult(item: items[index], status: .cancelled, error: BadgeError(.cancelled, reason)))
        }
        output.sync()
        return scheduler.steps
    }

    /// Where an item is: drawn (its backend's slot is free again), or ended.
    private enum Step: Sendable {
        /// The up-to-date results of a chunk of items (nil: to be drawn), from its first index on.
        case scanned([BatchResult?])
        case drawn(CheckedBadge, started: ContinuousClock.Instant, slot: Int)
        case failed(BatchResult, slot: Int)
        case written(BatchResult)
    }

    /// Draws one item; every failure becomes a result, never a throw.
    private func draw(_ item: BatchItem, with chain: Chain, slot: Int) async -> Step {
        let started = ContinuousClock.now
        do {
            let badge = try await ImageThreads.$limit.withValue(concurrency > 1 && chain.limit > 1 ? 1 : nil) {
                try await pipeline.render(
                    item.request, backend: chain.backend, fallbacks: chain.fallbacks, commitment: commitment,
                    extra: [Self.requestHashKey: item.requestHash])
            }
            try Task.checkCancellation()
            return .drawn(badge, started: started, slot: slot)
        } catch {
            return .failed(Self.failure(item, error, backend: item.backend, started: started), slot: slot)
        }
    }

    /// Writes a drawn item. Once drawn, the write finishes even if a
    /// cancellation arrives meanwhile: it is atomic either way, and a finished
    /// badge is worth keeping.
    private func write(_ item: BatchItem, badge: CheckedBadge, started: ContinuousClock.Instant,
                       into output: BatchOutputDirectory) async -> BatchResult {
        do {
            let digest = try await BlockingExecutor.runToCompletion { () throws -> String in
                try output.write(badge.png, as: item.fileName)
                return try BatchHash.sha256(badge.png)
            }
            return BatchResult(item: item, status: .made, metadata: badge.metadata, sha256: digest, bytes: badge.png.count,
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
    package static func upToDateResult(_ item: BatchItem, data: Data) -> BatchResult? {
        guard let chunks = try? PNG.chunks(in: data, verifyCRC: true), chunks.last?.type == "IEND",
              let metadata = BadgeMetadata(entries: chunks.compactMap(PNG.textEntry)),
              metadata.extra[requestHashKey] == item.requestHash,
              let digest = try? BatchHash.sha256(data)
        else { return nil }
        return BatchResult(item: item, status: .upToDate, metadata: metadata, sha256: digest, bytes: data.count)
    }
}
