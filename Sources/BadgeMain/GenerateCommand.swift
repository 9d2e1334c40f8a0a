import ArgumentParser
import BadgeKit
import Foundation
import ProceduralBackend

/// Options shared by `generate` and `import`: what to make and where it goes.
struct BadgeOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Visual style: \(ProceduralGenerator.styles.joined(separator: ", ")) for the procedural backend (default: the one the promise's words ask for, else the config's defaults.style, else \(ProceduralGenerator.styles[0])).", valueName: "style"),
            completion: .list(ProceduralGenerator.styles))
    var style: String?

    @Option(help: ArgumentHelp("Badge size in pixels, \(BadgeRequest.sizeRange.lowerBound)–\(BadgeRequest.sizeRange.upperBound) (default: the config's defaults.size, else \(BadgeRequest.defaultSize)).", valueName: "px"))
    var size: Int?

    @Option(help: ArgumentHelp("Seed for variants; the same seed gives the same badge (default: random).", valueName: "n"))
    var seed: UInt64?

    @Option(help: ArgumentHelp("The day you begin, YYYY-MM-DD (default: now).", valueName: "date"))
    var date: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the badge to this file (- for standard output) and leave the store alone (a preview).", valueName: "file"),
            completion: .file(extensions: ["png", "svg"]))
    var output: String?

    @Option(help: ArgumentHelp("The format of --output: png or svg (default: from the file's extension, else png). An SVG is drawn as vectors (procedural backend).", valueName: "format"),
            completion: .list(BadgeFormat.allCases.map(\.rawValue)))
    var format: String?

    @Option(help: ArgumentHelp("The caption to draw on the badge, instead of one made from the promise (procedural backend).", valueName: "text"))
    var caption: String?

    @Option(name: .customLong("option"), help: ArgumentHelp("A backend-specific option (repeatable).", valueName: "key=value"))
    var options: [String] = []

    @Flag(help: "Print the result as JSON.")
    var json = false

    func validate() throws {
        if output == "" { throw ValidationError("--output needs a file (or - for standard output); \"\" names none") }
        if let size, !BadgeRequest.sizeRange.contains(size) {
            throw ValidationError("--size must be from \(BadgeRequest.sizeRange.lowerBound) to \(BadgeRequest.sizeRange.upperBound) pixels, not \(size)")
        }
        for option in options where !option.contains("=") || option.hasPrefix("=") {
            throw ValidationError("--option takes key=value, not '\(option)'")
        }
        if let output, output.hasSuffix("/") {
            throw ValidationError("--output names a file, not a directory: '\(output)'")
        }
        if let format, BadgeFormat(rawValue: format.lowercased()) == nil {
            throw ValidationError("--format takes png or svg, not '\(format)'")
        }
        if output == "-" && json {
            throw ValidationError("--output - writes the picture to standard output, where --json would go too; give one of them")
        }
    }

    /// The format the badge is written in: --format, else the extension of
    /// --output, else PNG. An extension badge does not write, or one that
    /// --format contradicts, is refused rather than written over with bytes
    /// of another format.
    func outputFormat() throws -> BadgeFormat {
        let asked = format.flatMap { BadgeFormat(rawValue: $0.lowercased()) }
        guard let output, output != "-" else {
            if output == nil, asked == .svg {
                throw BadgeError(.usage, "--format svg: the store holds the badge as PNG; an SVG is written to a file",
                                 hint: "give --output FILE.svg (or - for standard output), or write the current badge with: badge export")
            }
            return asked ?? .png
        }
        let name = output.split(separator: "/").last.map(String.init) ?? output
        // A FIFO or a device is written into whatever its name: only a file's name says a format.
        var status = stat()
        let special = stat(output, &status) == 0 && (status.st_mode & S_IFMT) != S_IFREG
        let named = special ? nil : BadgeFormat(extensionOf: name)
        if !special, named == nil, let dot = name.lastIndex(of: "."), dot != name.startIndex {
            let ext = OutsideText.printable(String(name[name.index(after: dot)...]))
            throw BadgeError(.usage, "--output \(OutsideText.printable(output)): badge writes PNG or SVG, not .\(ext)",
                             hint: "name the file .png or .svg, or give --format png|svg for a name without an extension")
        }
        if let asked, let named, asked != named {
            throw BadgeError(.usage, "--format \(asked.rawValue) contradicts --output \(OutsideText.printable(output)), which names a .\(named.rawValue) file",
                             hint: "give one of them, or make them agree")
        }
        return asked ?? named ?? .png
    }

    func parsedOptions() -> [String: String] {
        var map: [String: String] = [:]
        for option in options {
            let parts = option.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            map[String(parts[0])] = String(parts[1])
        }
        return map
    }

    /// Runs the pipeline for one request and reports the result; with `choice`,
    /// makes several candidates and commits the one picked (`generate --choose`).
    func run(prompt: String, backendName: String?, source: String?, context: CommandContext, choice: Choice? = nil) async throws {
        let config = context.config
        // Resolved when first used: after the drawing, unless --date needs it now.
        let zone = TimeZone.autoupdatingCurrent
        let commitmentDate = try date.map { try BadgeMetadata.parseCommitmentDate($0, in: zone) }
        var random = SystemRandomNumberGenerator()
        let chain = config.fallbackChain(for: context.backendName(backendName ?? config.defaults.backend))
        let backend = try context.backend(named: chain[0])
        // A backend without styles (import, http) is never handed one: --style is refused,
        // and the config's default style is left out.
        let takesStyles = backend.generator.styles.map { !$0.isEmpty } ?? true
        // A style is matched without regard to case (`--style Tile`) and handed on as the backend spells it.
        let style = self.style.map { given in backend.generator.styles?.first { $0.lowercased() == given.lowercased() } ?? given }
        if let style, !takesStyles {
            throw BadgeError(.usage, "--style \(style): the \(backend.type) backend \"\(backend.name)\" has no styles; it would be ignored",
                             hint: backend.type == "import" ? "a picture is imported as it is; --option fit=contain and --option background=... shape it"
                                 : "describe the look in the promise instead")
        }
        if caption != nil && backend.type != ProceduralGenerator.type {
            throw BadgeError(.usage, "--caption: the \(backend.type) backend \"\(backend.name)\" draws no caption; it would be ignored",
                             hint: "--caption is for the procedural backend")
        }
        let format = try outputFormat()
        if format == .svg, choice != nil {
            throw BadgeError(.usage, "--choose shows candidates as pictures and commits the one picked; an SVG is written to a file",
                             hint: "pick with --choose, then write it with: badge export --output FILE.svg")
        }
        if format == .svg, !(backend.generator is any VectorGenerator) {
            throw BadgeError(.unsupportedFormat, "the \(backend.type) backend \"\(backend.name)\" makes PNG images only; it cannot make an SVG",
                             hint: "write a .png, or use --backend procedural for an SVG")
        }
        if let choice { try choice.checkTerminal() }
        let request = BadgeRequest(
            prompt: prompt, style: takesStyles ? backend.style(given: style, fallback: config.defaults.style, prompt: prompt) : nil, size: size ?? config.defaults.size,
            seed: seed ?? random.next(), source: source, options: parsedOptions(), caption: caption)
        let fallbacks = try chain.dropFirst().map { try context.backend(named: $0) }
        let destination: BadgeDestination
        if let output {
            switch OutputTarget(output, relativeTo: context.environment.workingDirectory) {
            case .standardOutput: destination = .standardOutput
            case let .path(url): destination = .file(url)
            }
        } else {
            destination = .store(context.store)
        }
        context.environment.logger.debug(
            "generating", metadata: ["backend": "\(backend.name)", "size": "\(request.size)", "seed": "\(request.seed)"])

        let pipeline = Pipeline(environment: context.environment, limits: config.intake)
        let commitment = Pipeline.Commitment(date: commitmentDate, timeZone: zone)
        // A line from `badge prompt` is the prompt; its purpose is the promise.
        let promise = PromptComposer.purpose(ofLine: prompt).map { ["promise": $0] } ?? [:]
        let outcome: PipelineOutcome
        if format == .svg {
            let spinner = Spinner("\(backend.name): drawing")
            spinner.start()
            defer { spinner.stop() }
            outcome = try await pipeline.runVector(request, backend: backend, commitment: commitment, to: destination, extra: promise)
            spinner.stop()
        } else if let choice {
            let styles = backend.stylesToVary(given: style, prompt: prompt)
            let limit = config.backend(named: backend.name)?.concurrency ?? backend.generator.preferredConcurrency ?? choice.count
            let maker = CandidateMaker(
                request: request, count: choice.count, styles: styles, pipeline: pipeline, backend: backend, fallbacks: fallbacks,
                commitment: commitment, extra: promise, limit: limit)
            let picked = try await choice.choose(from: maker, context: context)
            outcome = try await pipeline.commit(picked, commitment: commitment, to: destination)
        } else {
            let spinner = Spinner("\(backend.name): drawing")
            spinner.start()
            defer { spinner.stop() }
            outcome = try await pipeline.run(
                request, backend: backend, fallbacks: fallbacks, commitment: commitment, to: destination, extra: promise)
            spinner.stop()
        }

        let info = BadgeInfo(path: outcome.url, metadata: outcome.metadata, bytes: outcome.byteCount)
        if json {
            try Terminal.json(info)
        } else {
            let headline = output == nil ? "Committed your Promise Badge." : "Wrote a preview; the current badge is unchanged."
            if output == "-" {
                // Standard output carries the picture: the report goes beside it, to standard error.
                Terminal.note("Wrote a preview to standard output; the current badge is unchanged.\n" + info.text)
            } else {
                Terminal.out(headline + "\n" + info.text)
            }
        }
    }
}

struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Make a badge for a promise and commit it as the current badge.",
        discussion: """
            Examples:
              badge generate "A pair of dumbbells"
              badge generate Read 20 books           # no quotes needed
              badge generate -- -5 kg by summer      # starts with -
              badge generate --style tile --seed 7 "A path through a forest"
              badge generate --style sketch --size 2048 "Meditate daily"
              badge generate --date 2027-01-01 --output preview.png "Read 20 books"
              badge generate --choose 4 "Run a marathon"        # pick one of four
              badge generate --choose 4 --pick 2 "Run a marathon"

            --choose: keys 1-N commit that candidate, r draws a new set, s saves them all \
            as files, q cancels (exit status 1), Esc or Ctrl-C cancel (exit status 130, \
            as fzf); a cancel says "Nothing was committed." and leaves the current badge.

            Styles (procedural backend): \(ProceduralGenerator.styles.joined(separator: ", ")); \
            default: the one the promise's words ask for ("a sketch of a cup"), else the config's \
            defaults.style, else \(ProceduralGenerator.styles[0]). \
            Size: \(BadgeRequest.defaultSize) px unless --size or the config's defaults.size says otherwise.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("Backend instance to use (see 'badge backends').", valueName: "name"),
            completion: .custom(Completions.backendNames))
    var backend: String?

    @Option(help: ArgumentHelp("Source image for backends that import one (a path, or - for standard input).", valueName: "file"),
            completion: .file())
    var source: String?

    @OptionGroup var badge: BadgeOptions

    @Option(help: ArgumentHelp("Make N candidates (\(Candidates.countRange.lowerBound)–\(Candidates.countRange.upperBound)), show them, and commit the one you pick (keys 1–N; r new set, s save all, q cancel).", valueName: "n"))
    var choose: Int?

    @Option(help: ArgumentHelp("With --choose: commit candidate K without asking (for scripts); alone: --choose \(Choice.defaultCount).", valueName: "k"))
    var pick: Int?

    @Argument(help: ArgumentHelp("The promise, in your words: in quotes, or the words after the options (joined by spaces).",
                                 valueName: "promise"))
    var words: [String]

    /// The promise: the words given, joined by spaces (`badge generate Run a marathon`).
    var prompt: String { words.joined(separator: " ") }

    func validate() throws {
        if BadgeRequest.isBlank(prompt) {
            throw ValidationError("the promise is empty; describe it in a few words, e.g. \"A pair of dumbbells\"")
        }
        _ = try choice()
    }

    /// The choice --choose and --pick ask for, checked: nil for a plain generate.
    func choice() throws -> Choice? {
        let range = Candidates.countRange
        if let choose, !range.contains(choose) {
            throw ValidationError("--choose must be from \(range.lowerBound) to \(range.upperBound) candidates, not \(choose)")
        }
        guard choose != nil || pick != nil else { return nil }
        let count = choose ?? Choice.defaultCount
        if let pick, !(1...count).contains(pick) {
            throw ValidationError("--pick must be from 1 to \(count) (there are \(count) candidates), not \(pick)")
        }
        return Choice(count: count, pick: pick)
    }

    func run() async throws {
        let context = try global.makeContext()
        try await badge.run(prompt: prompt, backendName: backend, source: source, context: context, choice: try choice())
    }
}

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Make a badge from an existing picture (shorthand for generate --backend import --source FILE)."
    )

    @OptionGroup var global: GlobalOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("Import backend instance to use.", valueName: "name"),
            completion: .custom(Completions.backendNames))
    var backend: String = "import"

    @OptionGroup var badge: BadgeOptions

    @Argument(help: "The picture: a path, or - for standard input.", completion: .file())
    var file: String

    @Argument(help: ArgumentHelp("The promise it stands for: in quotes, or the words after the file (joined by spaces); asked for on a terminal when not given.",
                                 valueName: "promise"))
    var words: [String] = []

    /// The promise given: the words after the file, joined by spaces; nil when there are none.
    var prompt: String? { words.isEmpty ? nil : words.joined(separator: " ") }

    func run() async throws {
        let promise = try prompt ?? askedPromise()
        let context = try global.makeContext()
        try await badge.run(prompt: promise, backendName: backend, source: file, context: context)
    }

    /// The promise when none follows the file: asked for when standard input
    /// and standard error are a terminal (Enter takes the file's name, which
    /// the question shows); refused elsewhere, with the command that gives one,
    /// rather than a promise made up from the file's name.
    func askedPromise() throws -> String {
        let name = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        guard file != "-", isatty(STDIN_FILENO) == 1, Terminal.stderrIsTerminal else {
            throw BadgeError(.usage, "import needs the promise the picture stands for",
                             hint: "give it after the file: badge import \(Badge.shellQuoted(file)) \"Walk every day\"")
        }
        let shown = OutsideText.printable(name, keepingNewlines: false)
        let answer = try Questions.ask("The promise this picture stands for, in your words (Enter: \"\(shown)\", the file's name):") { answer in
            answer.isEmpty ? name : answer
        }
        return answer ?? name
    }
}
