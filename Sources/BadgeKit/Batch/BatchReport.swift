import Foundation

/// `manifest.json`: what a batch run did, item by item: the request, the
/// backend, its metadata, the file's sha256 and the time it took, or the error.
package struct BatchReport: Encodable, Sendable {
    package struct Summary: Encodable, Sendable, Equatable {
        package var total = 0
        package var made = 0
        package var upToDate = 0
        package var failed = 0
        package var cancelled = 0

        package init(_ results: [BatchResult]) {
            for result in results { add(result.status) }
        }

        /// Counts one more result.
        package mutating func add(_ status: BatchResult.Status) {
            total += 1
            switch status {
            case .made: made += 1
            case .upToDate: upToDate += 1
            case .failed: failed += 1
            case .cancelled: cancelled += 1
            }
        }
    }

    package struct Request: Encodable, Sendable {
        var prompt: String
        var backend: String
        var style: String?
        var size: Int
        var seed: LosslessUInt64
        var source: String?
        var options: [String: String]?
    }

    package struct Metadata: Encodable, Sendable {
        var id: String
        var commitmentDate: String
        var timeZone: String
        var createdAt: String
        var backend: String
        var backendType: String
        var model: String?
        var revisedPrompt: String?
        var generator: String
        var extra: [String: String]?

        init(_ m: BadgeMetadata) {
            id = m.id
            commitmentDate = m.commitmentDateString
            timeZone = m.timeZone
            createdAt = BadgeMetadata.rfc3339(m.createdAt, in: TimeZone(identifier: m.timeZone) ?? .gmt, fractionalSeconds: true)
            backend = m.backend
            backendType = m.backendType
            model = m.model
            revisedPrompt = m.revisedPrompt
            generator = m.generator
            extra = m.extra.isEmpty ? nil : m.extra
        }
    }

    package struct Failure: Encodable, Sendable {
        var code: String
        var message: String
        var hint: String?
    }

    package struct Entry: Encodable, Sendable {
        var key: String
        var job: String
        var variant: Int
        var status: BatchResult.Status
        /// The file in the output directory; nil when nothing was written.
        var file: String?
        var request: Request
        var requestHash: String
        /// The instance that drew it (a fallback's name when the first one failed).
        var backend: String?
        var metadata: Metadata?
        var sha256: String?
        var bytes: Int?
        var durationSeconds: Double?
        var error: Failure?

        init(_ result: BatchResult) {
            let item = result.item
            key = item.key
            job = item.job.name
            variant = item.variant
            status = result.status
            file = result.succeeded ? item.fileName : nil
            request = Request(prompt: item.request.prompt, backend: item.backend, style: item.request.style,
                              size: item.request.size, seed: LosslessUInt64(item.request.seed), source: item.request.source,
                              options: item.request.options.isEmpty ? nil : item.request.options)
            requestHash = item.requestHash
            backend = result.metadata?.backend
            metadata = result.metadata.map(Metadata.init)
            sha256 = result.sha256
            bytes = result.bytes
            durationSeconds = result.duration.map(BatchReport.seconds)
            error = result.error.map { Failure(code: $0.code.rawValue, message: $0.headline, hint: $0.hint) }
        }
    }

    package var generator = BadgeMetadata.generatorVersion
    package var source: String
    package var output: String
    package var shard: String?
    package var startedAt: String
    package var durationSeconds: Double
    package var summary: Summary
    package var results: [Entry]

    package init(results: [BatchResult], source: String, output: URL, shard: BatchShard?, startedAt: Date, duration: Duration) {
        self.source = source
        self.output = output.path
        self.shard = shard?.description
        self.startedAt = BadgeMetadata.rfc3339(startedAt, in: .current, fractionalSeconds: true)
        durationSeconds = Self.seconds(duration)
        summary = Summary(results)
        self.results = results.map(Entry.init)
    }

    /// `manifest.json`, or one file per shard so shards can share a directory.
    package static func fileName(for shard: BatchShard?) -> String {
        guard let shard, shard.count > 1 else { return "manifest.json" }
        return "manifest-\(shard.index)-of-\(shard.count).json"
    }

    /// The journal a run keeps beside its manifest while it goes (see `BatchReportWriter`).
    package static func journalName(for shard: BatchShard?) -> String {
        guard let shard, shard.count > 1 else { return "manifest.partial.jsonl" }
        return "manifest-\(shard.index)-of-\(shard.count).partial.jsonl"
    }

    /// Seconds, to the millisecond.
    static func seconds(_ duration: Duration) -> Double {
        let c = duration.components
        return ((Double(c.seconds) + Double(c.attoseconds) / 1e18) * 1000).rounded() / 1000
    }
}
