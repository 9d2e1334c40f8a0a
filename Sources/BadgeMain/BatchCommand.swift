import ArgumentParser
import BadgeKit
import Foundation
import ProceduralBackend

struct BatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Make many badges at once from a manifest of jobs; safe to interrupt and to rerun.",
        discussion: """
            Jobs come from FILE (JSON, JSON Lines or CSV with a header row; - reads standard \
            input) or from the config's batch.jobs. Each job has a prompt and optionally a name, \
            backend, style, size, seed, variants and source. One PNG per job and variant is \
            written to the output directory, with a manifest.json of results.

            A rerun skips outputs that are already there for the same request; --force redoes \
            them. Ctrl-C stops cleanly: finished files stay, no partial file is left. While a \
            run goes, manifest.partial.jsonl lists the jobs finished so far; a killed run leaves \
            it, and the same command finishes the rest.

            Examples:
              badge batch team.csv --output badges/
              badge batch variants.json --concurrency 4 --fail-fast
              badge batch team.csv --output /out --shard 2/8        # this machine's eighth
              badge batch team.csv --commit alice     # and make alice current
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The manifest: .json, .jsonl or .csv (default: the config's batch.jobs).", valueName: "file"),
              completion: .file(extensions: ["json", "jsonl", "csv"]))
    var file: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("Output directory (default: the config's batch.output, then ./badges).", valueName: "dir"),
            completion: .directory)
    var output: String?

    @Option(name: [.customShort("j"), .long], help: ArgumentHelp("How many badges to make at once (default: the config's batch.concurrency, then 8).", valueName: "n"))
    var concurrency: Int?

    @Option(name: .shortAndLong, help: ArgumentHelp("Backend for jobs that name none (default: the config's defaults.backend).", valueName: "name"),
            completion: .custom(Completions.backendNames))
    var backend: String?

    @Option(help: ArgumentHelp("Style for jobs that name none.", valueName: "style"), completion: .list(ProceduralGenerator.styles))
    var style: String?

    @Option(help: ArgumentHelp("Size for jobs that give none, \(BadgeRequest.sizeRange.lowerBound)–\(BadgeRequest.sizeRange.upperBound).", valueName: "px"))
    var size: Int?

    @Option(help: ArgumentHelp("Commitment date stamped into every badge, YYYY-MM-DD (default: now).", valueName: "date"))
    var date: String?

    @Option(help: ArgumentHelp("Run only share K of N (K from 0 to N-1), so N machines split one manifest.", valueName: "K/N"))
    var shard: String?

    @Flag(help: "Redo every job, even those whose output is up to date.")
    var force = false

    @Flag(help: "Stop at the first failure (default: a failure stops only its own job).")
    var failFast = false

    @Option(help: ArgumentHelp("Afterwards, make this job's badge (its name, or name-NN for a variant) the current badge.", valueName: "job"))
    var commit: String?

    @Option(help: ArgumentHelp("Bring the journal of finished jobs (manifest.partial.jsonl) up to date on disk at least this often, \(BatchCommand.checkpointRange.lowerBound)–\(BatchCommand.checkpointRange.upperBound) (default: 10).", valueName: "seconds"))
    var checkpoint: Int = 10

    static let checkpointRange = 1...3600

    @Flag(help: "Print the results (manifest.json) as JSON.")
    var json = false

    @Option(help: ArgumentHelp("Also write one picture of every result, captioned with the job names: a .png grid, or an .html page.", valueName: "file"),
            completion: .file(extensions: ["png", "html"]))
    var contactSheet: String?

    func validate() throws {
        if output == "" { throw ValidationError("--output needs a directory; \"\" would be the current folder") }
        if let size, !BadgeRequest.sizeRange.contains(size) {
            throw ValidationError("--size must be from \(BadgeRequest.sizeRange.lowerBound) to \(BadgeRequest.sizeRange.upperBound) pixels, not \(size)")
        }
        if !Self.checkpointRange.contains(checkpoint) {
            throw ValidationError("--checkpoint must be from \(Self.checkpointRange.lowerBound) to \(Self.checkpointRange.upperBound) seconds, not \(checkpoint)")
        }
        if let contactSheet, ContactSheet.format(of: contactSheet) == nil {
            throw ValidationError("--contact-sheet writes a .png or an .html file, not '\(contactSheet)'")
        }
        if let concurrency, !BatchSettings.concurrencyRange.contains(concurrency) {
            throw ValidationError("--concurrency must be from 1 to \(BatchSettings.concurrencyRange.upperBound), not \(concurrency)")
        }
    }

    func run() async throws {
        let context = try global.makeContext()
        let config = context.config
        let cwd = context.environment.workingDirectory
        let manifest = try loadManifest(config: config, workingDirectory: cwd)
        let shard = try shard.map(BatchShard.init(parsing:))
        let zone = TimeZone.current
        let commitmentDate = try date.map { try BadgeMetadata.parseCommitmentDate($0, in: zone) }
        let defaultBackend = backend.map(context.backendName) ?? config.defaults.backend
        // Each configured backend the jobs name, and its fallbacks, set up once: its styles spell the jobs'
        // ("Tile" is the procedural backend's tile), and it runs them. One that cannot be set up says why below.
        var instances: [String: BackendInstance] = [:]
        var checked: [String: [BackendInstance]] = [:]
        for name in Set(manifest.jobs.map { $0.backend ?? defaultBackend }) where config.backend(named: name) != nil {
            let chain = config.fallbackChain(for: context.backendName(name))
            instances[name] = try? context.backend(named: chain[0])
            checked[name] = chain.compactMap { try? context.backend(named: $0) }
        }
        let plan = try BatchPlan.make(
            manifest, config: config,
            defaults: .init(backend: defaultBackend, style: style, size: size ?? config.defaults.size),
            shard: shard, before: defaultStyleMistakes(manifest, defaultBackend: defaultBackend, config: config, chains: checked),
            style: { given, prompt, backend in
                guard let instance = instances[backend] else { return given ?? config.defaults.style }
                return instance.style(given: given, fallback: config.defaults.style, prompt: prompt)
            }, check: { request, backend, styleGiven in
                try BackendInstance.checkJob(request, styleGiven: styleGiven, chain: checked[backend] ?? [])
            })
        // A mistyped --commit is a usage error before anything runs, not after.
        let commitItem = try commit.map { try item(named: $0, in: plan) }
        let limit = concurrency ?? config.batch.concurrency ?? BatchSettings.defaultConcurrency
        var chains: [String: BatchRunner.Chain] = [:]
        for name in Set(plan.items.map(\.backend)) {
            let names = config.fallbackChain(for: context.backendName(name))
            let instance = try instances[name] ?? context.backend(named: names[0])
            let fallbacks = try names.dropFirst().map { try context.backend(named: $0) }
            let ownLimit = config.backend(named: name)?.concurrency ?? instance.generator.preferredConcurrency ?? limit
            chains[name] = .init(backend: instance, fallbacks: fallbacks, limit: ownLimit)
        }
        let outputURL = output.map { BadgeConfig.resolvePath($0, relativeTo: cwd) }
            ?? config.batch.output ?? cwd.appendingPathComponent(BatchSettings.defaultOutput, isDirectory: true)
        let directory = try BatchOutputDirectory(url: outputURL)

        let runner = BatchRunner(
            pipeline: Pipeline(environment: context.environment, limits: config.intake), chains: chains,
            concurrency: limit, force: force, failFast: failFast || config.batch.failFast,
            commitment: .init(date: commitmentDate, timeZone: zone))
        let progress = BatchProgress(
            total: plan.items.count, live: Terminal.stderrIsTerminal && !global.verbose,
            lines: json ? STDERR_FILENO : STDOUT_FILENO)
        context.environment.logger.debug("batch", metadata: [
            "items": "\(plan.items.count)", "of": "\(plan.allItems.count)", "output": "\(outputURL.path)",
            "concurrency": "\(limit)", "backends": "\(chains.mapValues(\.limit))",
        ])
        let startedAt = Date()
        let clock = ContinuousClock()
        let started = clock.now
        let writer = try BatchReportWriter(directory: directory, shard: shard, count: plan.items.count,
                                           checkpointInterval: .seconds(checkpoint))
        Interrupts.commandSaysItsStop.store(true, ordering: .relaxed)
        progress.start()
        _ = await withTaskCancellationHandler {
            await runner.stream(plan.items, into: directory, events: progress.handle) { index, result in writer.record(index, result) }
        } onCancel: {
            progress.interrupted()
        }
        progress.stop()
        Interrupts.commandSaysItsStop.store(false, ordering: .relaxed)
        let interrupted = Task.isCancelled

        let duration = clock.now - started
        let source = manifest.source
        let json = json
        try await BlockingExecutor.runToCompletion {
            try writer.finish(source: source, output: outputURL, shard: shard, startedAt: startedAt, duration: duration)
            if json { try directory.copy(writer.manifestName) { Terminal.write(to: STDOUT_FILENO, $0) } }
        }
        let summary = writer.summary
        let total = plan.items.count

        if !json {
            Terminal.out(self.summary(summary, seconds: BatchProgressMath.seconds(duration), shard: shard, output: outputURL.path,
                                      failures: writer.failures,
                                      reportPath: outputURL.appendingPathComponent(writer.manifestName).path))
        }
        if let contactSheet, !interrupted {
            try await writeContactSheet(contactSheet, items: plan.items, directory: directory, workingDirectory: cwd)
        }
        if interrupted {
            throw CommandStopped(kept: "\(summary.made + summary.upToDate) of \(total) badges are done",
                                 hint: "run the same command again to make the rest; finished badges are kept")
        }
        if let commitItem {
            try await commitResult(commitItem, directory: directory, context: context, date: commitmentDate, zone: zone)
        }
        if summary.failed > 0 || summary.cancelled > 0 {
            throw BadgeError(.generationFailed, "\(summary.failed) of \(total) badges failed",
                             hint: "rerun the same command to retry only those (the others are up to date)")
        }
    }

    /// Writes the contact sheet of `items`' results: each badge that is this run's
    /// (or up to date), and "not made" for the others.
    private func writeContactSheet(_ path: String, items: [BatchItem], directory: BatchOutputDirectory, workingDirectory: URL) async throws {
        let target = BadgeConfig.resolvePath(path, relativeTo: workingDirectory)
        let entries = items.map { item in
            ContactSheet.Entry(name: item.key) {
                guard let data = directory.read(item.fileName), BatchRunner.upToDateResult(item, data: data) != nil else { return nil }
                return data
            }
        }
        let title = "Badges of " + (file.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "the batch")
        try await BlockingExecutor.run {
            let sheet = ContactSheet(entries: entries, largestBadge: max(ContactSheet.smallestThumbnail, items.map(\.request.size).max() ?? 0))
            let data = ContactSheet.format(of: target.path) == .html ? try sheet.html(title: title) : try sheet.png()
            try OutputWriter().write(data, to: .path(target), what: "the contact sheet")
        }
        if json {
            Terminal.note("contact sheet: \(target.path)")
        } else {
            Terminal.out("  Contact sheet  \(target.path)")
        }
    }

    /// The style jobs that name none are given (`--style`, else the config's
    /// `defaults.style`) where a backend of theirs, or a fallback of it, has
    /// no such style: one mistake for each such backend, at `--style` or at
    /// the config key, rather than one for each job.
    private func defaultStyleMistakes(
        _ manifest: BatchManifest, defaultBackend: String, config: BadgeConfig, chains: [String: [BackendInstance]]
    ) -> [BadgeError] {
        var mistakes: [BadgeError] = []
        var seen: Set<String> = []
        for job in manifest.jobs where job.style == nil {
            let chain = chains[job.backend ?? defaultBackend] ?? []
            guard let first = chain.first,
                  let given = first.style(given: style, fallback: config.defaults.style, prompt: job.prompt) else { continue }
            // Keyed by the style too: a job's prompt words may choose another style than the default.
            for instance in chain where seen.insert(instance.name + "\u{0}" + given).inserted {
                do {
                    try instance.check(style: given)
                } catch {
                    guard var error = error as? BadgeError else { continue }
                    let usedBy = instance.name == first.name ? "" : " (the fallback of '\(first.name)')"
                    if style != nil {
                        error.message = "--style \(JSONWriter.quote(given)): backend '\(instance.name)'\(usedBy) has no such style"
                        error.hint = (error.hint.map { $0 + "; " } ?? "") + "--style is the style of every job that names none"
                    } else {
                        error = BadgeError(
                            .config, "backend '\(instance.name)'\(usedBy) has no style \(JSONWriter.quote(given))", path: config.file,
                            location: config.defaults.styleLocation, keyPath: "defaults.style",
                            hint: (error.hint.map { $0 + "; " } ?? "") + "it is the style of every batch job that names none")
                    }
                    error.backend = nil
                    mistakes.append(error)
                }
            }
        }
        return mistakes
    }

    private func loadManifest(config: BadgeConfig, workingDirectory: URL) throws -> BatchManifest {
        guard let file else {
            guard let jobs = config.batch.jobs else {
                throw BadgeError(.usage, "no jobs to run",
                                 hint: "give a manifest (badge batch jobs.csv) or list jobs in the config's batch.jobs")
            }
            return jobs
        }
        if file == "-" {
            // One byte past the limit is enough to say the manifest is too large.
            let data = try readStandardInput(limit: BatchManifest.maxBytes + 1)
            return try BatchManifest.parse(data, file: "standard input", format: BatchManifest.sniff(data),
                                           baseDirectory: workingDirectory, deferringMistakes: true)
        }
        return try BatchManifest.load(from: BadgeConfig.resolvePath(file, relativeTo: workingDirectory), deferringMistakes: true)
    }

    /// A run's time as the summary gives it: "0.04 s" (a few small badges
    /// take less than a tenth), "3.27 s", "41.3 s".
    static func duration(_ seconds: Double) -> String {
        String(format: seconds < 10 ? "%.2f s" : "%.1f s", seconds)
    }

    private func summary(_ s: BatchReport.Summary, seconds: Double, shard: BatchShard?, output: String, failures: [BatchResult],
                         reportPath: String) -> String {
        var text = "Made \(s.made) badge\(s.made == 1 ? "" : "s") in \(Self.duration(seconds))"
        if s.upToDate > 0 { text += "; \(s.upToDate) already up to date" }
        if s.failed > 0 { text += "; \(s.failed) failed" }
        if s.cancelled > 0 { text += "; \(s.cancelled) not finished" }
        if let shard { text += " (shard \(shard))" }
        text += ".\n  Output    \(output)\n  Manifest  \(reportPath)"
        if !failures.isEmpty {
            text += "\nFailed:"
            for failure in failures {
                text += "\n  \(failure.item.key): " + (failure.error?.description.replacingOccurrences(of: "\n", with: "\n    ") ?? "")
            }
            if s.failed > failures.count { text += "\n  ... and \(s.failed - failures.count) more (see the manifest)" }
        }
        return text
    }

    /// Makes one result the current badge through the store: a new id, and the
    /// commitment date of this moment (or --date), since committing is the promise.
    private func item(named key: String, in plan: BatchPlan) throws -> BatchItem {
        if let item = plan.allItems.first(where: { $0.key == key }) { return item }
        let keys = plan.allItems.map(\.key)
        var hint = keys.count <= 12 ? "the jobs are: \(keys.joined(separator: ", "))" : "give a job name from the manifest"
        if let job = plan.allItems.first(where: { $0.job.name == key })?.job {
            hint = "\"\(key)\" has \(job.variants) variants: name one, e.g. \(key)-01"
        } else if let near = ConfigObject.closest(to: key, in: keys) {
            hint = "did you mean \"\(near)\"? " + hint
        }
        throw BadgeError(.usage, "--commit: no job is named \"\(key)\"", hint: hint)
    }

    private func commitResult(
        _ item: BatchItem, directory: BatchOutputDirectory, context: CommandContext, date: Date?, zone: TimeZone
    ) async throws {
        guard let data = directory.read(item.fileName), let result = BatchRunner.upToDateResult(item, data: data),
              let metadata = result.metadata
        else {
            throw BadgeError(.notFound, "\(item.fileName) is not a finished badge of this batch",
                             path: directory.url.appendingPathComponent(item.fileName).path,
                             hint: "run the batch until that job succeeds, then commit it; the current badge is unchanged")
        }
        let pipeline = Pipeline(environment: context.environment, limits: context.config.intake)
        let admitted = try pipeline.admit(data, madeWith: metadata, source: directory.url.appendingPathComponent(item.fileName).path)
        let stored = try await pipeline.commit(admitted, commitment: .init(date: date, timeZone: zone), to: .store(context.store))
        let info = BadgeInfo(path: stored.url, metadata: stored.metadata, bytes: stored.byteCount)
        if json {
            Terminal.note("committed \(item.key) as the current badge: \(stored.url.path)")
        } else {
            Terminal.out("\nCommitted \(item.key) as your Promise Badge.\n" + info.text)
        }
    }
}
