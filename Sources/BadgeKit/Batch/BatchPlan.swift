import Foundation

/// One image a batch makes: a job's variant, with everything resolved.
package struct BatchItem: Sendable, Hashable {
    /// "alice", or "alice-02" for the second of many variants: what `--commit` takes.
    package var key: String
    package var fileName: String { key + ".png" }
    package var job: BatchJob
    /// 1-based.
    package var variant: Int
    package var request: BadgeRequest
    /// The backend instance that draws it.
    package var backend: String
    /// SHA-256 over everything that decides the image: a rerun whose output
    /// carries the same hash has nothing to do.
    package var requestHash: String
}

/// `--shard K/N`: this machine's share of the items, K from 0 to N-1. The share
/// depends only on each item's key, so every machine computes it alone and
/// the N shards together hold every item exactly once.
package struct BatchShard: Sendable, Hashable, CustomStringConvertible {
    package var index: Int
    package var count: Int

    package init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    package init(parsing text: String) throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]) else {
            throw BadgeError(.usage, "cannot read the shard \"\(text)\"",
                             hint: "write it as K/N with K from 0 to N-1, e.g. --shard 0/4 (in a Kubernetes Indexed Job, K is $JOB_COMPLETION_INDEX)")
        }
        guard n >= 1, n <= 100_000, k >= 0, k < n else {
            throw BadgeError(.usage, "the shard \(text) does not exist", hint: "K runs from 0 to N-1, and N from 1 to 100000")
        }
        self.init(index: k, count: n)
    }

    package func contains(_ key: String) -> Bool {
        count == 1 || Int(BatchHash.fnv1a(key) % UInt64(count)) == index
    }

    package var description: String { "\(index)/\(count)" }
}

/// The items of a batch, checked before anything runs: every backend exists,
/// no two items write the same file, and each has its request hash.
package struct BatchPlan: Sendable {
    /// What jobs leave out: command line first, then the config (a style
    /// from the config is the `style` closure's `fallback`).
    package struct Defaults: Sendable {
        package var backend: String
        /// `--style`: every job's that names none.
        package var style: String?
        package var size: Int

        package init(backend: String, style: String?, size: Int) {
            self.backend = backend
            self.style = style
            self.size = size
        }
    }

    /// Every item of the manifest, in manifest order.
    package var allItems: [BatchItem]
    /// This shard's items (all of them without a shard).
    package var items: [BatchItem]
    package var shard: BatchShard?

    /// The most badges one batch makes, shards included: every item is
    /// planned, and its result kept, before and while it runs (100,000 jobs
    /// peaked at 170-190 MB in `make bench`).
    package static let maxItems = 1_000_000

    /// `style` gives the style a job's request is handed, from the one given
    /// (the job's, else `--style`), its prompt and its backend (by name), as
    /// `BackendInstance.style(given:fallback:prompt:)` does: spelled as the
    /// backend spells it, so "Tile" and "tile" make one request, hashed and
    /// recorded alike, and the config's default left out where the prompt's
    /// words ask for a style.
    ///
    /// `check` is what the job's backends say of its request
    /// (`BackendInstance.checkJob`), told whether the job names its style (a
    /// backend without styles refuses one): every job is checked before any
    /// runs, with a manifest's option names (`RequestOptionNaming`), and a
    /// refusal (`RequestRefusal`) is placed at the job's field at fault. The
    /// wrong jobs are named together, in manifest order, with those the
    /// manifest left out (its `mistakes`) and, first, `before`: what is wrong
    /// for the whole batch (a default style a backend lacks). A source picture
    /// is read when its job runs: one that is missing fails that job alone.
    package static func make(
        _ manifest: BatchManifest, config: BadgeConfig, defaults: Defaults, shard: BatchShard? = nil,
        before: [BadgeError] = [],
        style: (_ given: String?, _ prompt: String, _ backend: String) -> String? = { given, _, _ in given },
        check: (_ request: BadgeRequest, _ backend: String, _ styleGiven: Bool) throws -> Void = { _, _, _ in }
    ) throws -> BatchPlan {
        var mistakes = manifest.mistakes
        for error in before { mistakes.note(error, at: -1) }
        guard !manifest.jobs.isEmpty else {
            try mistakes.check()
            throw BadgeError(.usage, "the batch has no jobs", path: manifest.source,
                             hint: "add jobs with at least a prompt, e.g. {\"name\": \"alice\", \"prompt\": \"Run a marathon\"}")
        }
        // Counted before any item is made: a small manifest can ask for millions (1,000 variants a job).
        let total = manifest.jobs.reduce(0) { $0 + $1.variants }
        guard total <= maxItems else {
            throw BadgeError(.usage, "the batch asks for \(total) badges (its jobs' variants added up); one batch makes at most \(maxItems)",
                             path: manifest.source, hint: "split the manifest into smaller ones")
        }
        var items: [BatchItem] = []
        items.reserveCapacity(total)
        var owners: [String: BatchJob] = [:]
        var sourceDigests: [String: String] = [:]
        for job in manifest.jobs {
            let order = job.origin.location?.offset ?? Int.max
            let backendName = job.backend ?? defaults.backend
            guard let backend = config.backend(named: backendName) else {
                let names = config.backends.map(\.name)
                var hint = "configured backends: \(names.joined(separator: ", "))"
                if let near = ConfigObject.closest(to: backendName, in: names) { hint = "did you mean \"\(near)\"? " + hint }
                let origin = job.origin.at(job.backend == nil ? nil : "backend")
                mistakes.note(origin.error("job \(ConfigExcerpt.quoted(job.name)): no backend is named \(ConfigExcerpt.quoted(backendName))", hint: hint),
                              at: order)
                continue
            }
            if job.source == "-" {
                mistakes.note(job.origin.at("source").error("job \"\(job.name)\": a batch cannot read a picture from standard input",
                                                            hint: "give the picture's path as the job's source"), at: order)
                continue
            }
            let firstSeed = job.seed ?? BatchHash.fnv1a(job.name)
            let jobStyle = style(job.style ?? defaults.style, job.prompt, backendName)
            func request(_ variant: Int) -> BadgeRequest {
                BadgeRequest(
                    prompt: job.prompt, style: jobStyle, size: job.size ?? defaults.size,
                    seed: firstSeed &+ UInt64(variant - 1), source: job.source, options: job.options)
            }
            // Variants differ in their seeds alone: the first speaks for them all.
            let naming = RequestOptionNaming.manifest(row: job.origin.isRow)
            guard (try mistakes.job(at: order) {
                try located(job) { try RequestOptionNaming.$current.withValue(naming) { try check(request(1), backendName, job.style != nil) } }
            }) != nil else { continue }
            let digest = try job.source.map { path in
                if let known = sourceDigests[path] { return known }
                // Read once from a checked descriptor, never past the intake's file limit: a source
                // that is missing, no regular file (a FIFO, /dev/zero) or too large hashes as
                // unreadable, and its job alone fails when it runs (a rerun retries it).
                let bytes = try? RegularFile.contents(of: path, limit: config.intake.maxFileBytes)
                let digest = try bytes.map(BatchHash.sha256) ?? "unreadable"
                sourceDigests[path] = digest
                return digest
            }
            let width = String(job.variants).count
            for variant in 1...job.variants {
                let key = job.variants == 1 ? job.name : job.name + "-" + pad(variant, to: max(2, width))
                if let other = owners[key] {
                    mistakes.note(job.origin.error(
                        "job \"\(job.name)\" writes \(key).png, which job \"\(other.name)\" (\(other.origin)) writes too",
                        hint: "give one of them another name"), at: order)
                    continue
                }
                owners[key] = job
                let request = request(variant)
                items.append(BatchItem(
                    key: key, job: job, variant: variant, request: request, backend: backendName,
                    requestHash: try requestHash(request, backend: backend, sourceDigest: digest)))
            }
        }
        try mistakes.check()
        let mine = shard.map { shard in items.filter { shard.contains($0.key) } } ?? items
        return BatchPlan(allItems: items, items: mine, shard: shard)
    }

    /// `work`'s error placed at `job` in its manifest, naming the job: at the
    /// field a `RequestRefusal` names, when the job gave it.
    private static func located<T>(_ job: BatchJob, _ work: () throws -> T) throws -> T {
        do {
            return try work()
        } catch let refusal as RequestRefusal {
            throw located(refusal.error, at: job.origin.at(refusal.field), job: job, fallbackOf: refusal.fallbackOf)
        } catch let error as BadgeError {
            throw located(error, at: job.origin, job: job, fallbackOf: nil)
        }
    }

    private static func located(_ error: BadgeError, at origin: BatchJob.Origin, job: BatchJob, fallbackOf: String?) -> BadgeError {
        var backend = error.backend.map { "backend '\($0)'" } ?? ""
        if let fallbackOf, !backend.isEmpty { backend += " (the fallback of '\(fallbackOf)')" }
        if !backend.isEmpty { backend += ": " }
        var located = origin.error("job \(ConfigExcerpt.quoted(job.name)): " + backend + error.message, hint: error.hint)
        located.cause = error.cause
        located.keyPath = nil  // the job is named; "[3]" would read as a key
        return located
    }

    private static func pad(_ n: Int, to width: Int) -> String {
        let digits = String(n)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// A canonical description of everything that decides the image, hashed.
    /// The backend's configuration is part of it (a changed model or caption
    /// setting redoes the job); the commitment date is not, since it is when
    /// you commit, not what is drawn.
    static func requestHash(_ request: BadgeRequest, backend: BackendConfig, sourceDigest: String?) throws -> String {
        var fields: [(String, String)] = [
            ("version", "1"),
            ("prompt", request.prompt),
            ("backend", backend.name),
            ("backend-type", backend.type),
            ("backend-config", JSONWriter.write(backend.options.node, indent: "")),
            ("style", request.style ?? ""),
            ("size", String(request.size)),
            ("seed", String(request.seed)),
            ("source", sourceDigest ?? ""),
        ]
        for key in request.options.keys.sorted() { fields.append(("option:" + key, request.options[key]!)) }
        let canonical = fields.map { JSONWriter.quote($0.0) + ":" + JSONWriter.quote($0.1) }.joined(separator: "\n")
        return try BatchHash.sha256(canonical)
    }
}
