#if canImport(Glibc)
import Glibc
#endif
import BadgeKit
import Foundation
import Logging
import Subprocess

/// A backend that runs any program speaking the exec protocol (type `exec`,
/// docs/PLUGINS.md): extending badge in any language, without recompiling.
///
/// The program is trusted to draw, not to behave: whatever it prints is
/// parsed strictly and bounded, it is stopped at its time limit with its whole
/// process group, it sees only a minimal environment, and the only thing read
/// back is the regular file at the output path it was given, which then
/// passes the pipeline's intake like any other image.
package struct ExecGenerator: BadgeGenerator {
    package static let type = "exec"
    /// The plugin gets every `--option` and the style, and decides what they mean.
    package var requestOptionKeys: Set<String>? { nil }
    /// An availability answer is meant to be cheap; it never waits longer than this.
    static let availabilityLimit: Duration = .seconds(10)

    let name: String
    let options: ExecOptions
    /// badge's own environment: PATH, HOME, LANG and `${NAME}` references come from here.
    let variables: [String: String]
    let logger: Logger
    let limits: ImageLimits
    let memo = AvailabilityMemo()

    init(name: String, options: ExecOptions, variables: [String: String], logger: Logger, limits: ImageLimits) {
        self.name = name
        self.options = options
        self.variables = variables
        self.logger = logger
        self.limits = limits
        scrubber = SecretScrubber(secrets: EnvironmentTemplate.secrets(in: options.environment, variables: variables))
    }

    package static func register(in registry: inout BackendRegistry, limits: ImageLimits) {
        registry.register(type, summary: "runs a program that speaks the exec protocol (docs/PLUGINS.md), in any language") { config, environment in
            let base = config.options.file.map { URL(fileURLWithPath: $0).deletingLastPathComponent() } ?? environment.workingDirectory
            return ExecGenerator(
                name: config.name, options: try ExecOptions(config.options, base: base), variables: environment.variables,
                logger: environment.logger, limits: limits)
        }
    }

    // MARK: - Availability

    package func availability() async -> Availability {
        if memo.isFresh { return .available }
        var answer = await askAvailability()
        if case let .unavailable(reason, hint) = answer {
            answer = .unavailable(reason: scrubber.scrub(reason), hint: hint.map(scrubber.scrub))
        }
        memo.remember(answer)
        return answer
    }

    private func askAvailability() async -> Availability {
        let executable: String
        let environment: [String: String]
        do {
            (executable, environment) = try prepare(ExecProtocol.environment(nil, output: nil))
        } catch let error as BadgeError {
            return .unavailable(reason: error.message, hint: error.hint)
        } catch {
            return .unavailable(reason: "\(error)", hint: nil)
        }
        let process = PluginProcess(
            backend: name, executable: executable, arguments: options.arguments, environment: environment,
            workingDirectory: options.workingDirectory, timeout: min(options.timeout, Self.availabilityLimit), grace: options.grace,
            logger: logger)
        let finished: PluginProcess.Finished
        do {
            finished = try await process.run(request: ExecProtocol.availabilityRequest())
        } catch let error as BadgeError {
            return .unavailable(reason: "its availability check failed: \(error.message)", hint: error.cause ?? error.hint)
        } catch let flood as PluginProcess.OutputFlood {
            return .unavailable(reason: "its availability check printed more than \(flood.limit / 1024) KiB and was stopped", hint: nil)
        } catch is CancellationError {
            return .unavailable(reason: "its availability check was cancelled", hint: nil)
        } catch {
            return .unavailable(reason: "it cannot be started: \(error)",
                                hint: "check that it is executable and, for a script, that its first line is a #! line")
        }
        let hint = "run it by hand: echo '{\"protocol\":1,\"kind\":\"availability\"}' | \(commandLine)"
        guard let line = Self.resultLine(finished.standardOutput) else {
            return .unavailable(reason: "it answered the availability check with no result line (\(Self.describe(finished.status)))",
                                hint: PluginProcess.lastWords(finished.standardError) ?? hint)
        }
        do {
            let answer = try ExecProtocol.availabilityOutcome(line)
            if answer.isAvailable, !finished.status.isSuccess {
                return .unavailable(reason: "it said it is available but \(Self.describe(finished.status))", hint: hint)
            }
            return answer
        } catch {
            return .unavailable(reason: "it broke the exec protocol: \(error.message)", hint: hint)
        }
    }

    // MARK: - Generating

    package func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
        let started = ContinuousClock.now
        try request.validate()
        let output = workspace.file("image.png")
        let (executable, environment) = try prepare(ExecProtocol.environment(request, output: output))
        let merged = options.options.merging(request.options) { $1 }
        let process = PluginProcess(
            backend: name, executable: executable, arguments: options.arguments, environment: environment,
            workingDirectory: options.workingDirectory, timeout: options.timeout, grace: options.grace, logger: logger)

        let finished: PluginProcess.Finished
        do {
            finished = try await process.run(request: ExecProtocol.generateRequest(request, options: merged, output: output))
        } catch let flood as PluginProcess.OutputFlood {
            throw failure("printed more than \(flood.limit / 1024) KiB on standard output and was stopped",
                          hint: "standard output carries one result line only; write logs to standard error")
        } catch let error as SubprocessError {
            throw BadgeError(.backendUnavailable, "cannot start the plugin", backend: name, path: executable, cause: "\(error)",
                             hint: "check that it is executable and, for a script, that its first line is a #! line")
        }
        try Task.checkCancellation()

        let metadata = try interpret(finished)
        let bytes = try await PluginImage.read(output, limits: limits, backend: name)
        removeStrays(in: workspace, keeping: output)
        // What it said goes into the PNG, a batch's manifest and the studio's answers: its secrets masked.
        // A key that holds a piece of a secret is dropped (the mask is no key); the values are masked.
        var extra: [String: String] = [:]
        for (key, value) in metadata.extra where scrubber.scrub(key) == key { extra[key] = scrubber.scrub(value) }
        return GeneratedImage(
            file: output,
            model: metadata.model.map(scrubber.scrub) ?? "exec \(URL(fileURLWithPath: options.program).lastPathComponent)",
            seed: metadata.seed, revisedPrompt: metadata.revisedPrompt.map(scrubber.scrub), extra: extra,
            bytes: bytes, deadline: started.advanced(by: options.timeout))
    }

    /// The secrets this plugin is given through its `env` (`EnvironmentTemplate.secrets`),
    /// and any piece of one, masked in whatever of its words badge keeps or passes on:
    /// its metadata, its errors and its availability answer. A batch's manifest, a
    /// badge's text and the studio's JSON are not printed through the terminal's scrubber.
    let scrubber: SecretScrubber

    /// Turns the program's exit and its result line into metadata, or the error a user should read.
    private func interpret(_ finished: PluginProcess.Finished) throws -> ExecProtocol.Metadata {
        let status = finished.status
        let said = PluginProcess.lastWords(finished.standardError)
        if case let .signaled(signal) = status {
            throw failure("was killed by signal \(signal) (\(Self.signalName(signal)))", cause: said,
                          hint: signal == SIGKILL ? "the system may have run out of memory" : nil)
        }
        guard let line = Self.resultLine(finished.standardOutput) else {
            if !status.isSuccess {
                throw failure("\(Self.describe(status)) without printing a result line", cause: said, hint: Self.exitHint(status))
            }
            throw failure("exited without printing a result line on standard output", cause: said,
                          hint: "print one JSON line, {\"ok\": true} or {\"ok\": false, \"error\": \"...\"} (docs/PLUGINS.md)")
        }
        let outcome: ExecProtocol.Outcome
        do {
            outcome = try ExecProtocol.generateOutcome(line)
        } catch {
            throw failure("broke the exec protocol: \(error.message)", cause: "its last line was: \(line.prefix(200))",
                          hint: "the last line on standard output must be the JSON result (docs/PLUGINS.md)")
        }
        switch outcome {
        case let .failure(message, hint):
            throw failure("failed: \(message)", hint: hint)
        case let .success(metadata):
            guard status.isSuccess else {
                throw failure("reported success but \(Self.describe(status))", cause: said, hint: Self.exitHint(status))
            }
            return metadata
        }
    }

    // MARK: - Environment and program

    /// The program's path and its whole environment: PATH, HOME, LANG and
    /// TMPDIR from badge's own, the protocol's BADGE_* variables, and the
    /// configured `env` with `${NAME}` filled in. Nothing else of badge's
    /// environment (API keys included) reaches the plugin.
    func prepare(_ protocolVariables: [String: String]) throws -> (executable: String, environment: [String: String]) {
        var environment: [String: String] = [
            "PATH": variables["PATH"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/bin:/usr/bin:/bin",
            "LANG": variables["LANG"].flatMap { $0.isEmpty ? nil : $0 } ?? "C.UTF-8",
        ]
        for key in ["HOME", "TMPDIR"] { if let value = variables[key], !value.isEmpty { environment[key] = value } }
        environment.merge(protocolVariables) { $1 }
        for key in options.environment.keys.sorted() {
            let template = options.environment[key]!
            guard let value = EnvironmentTemplate.expand(template, from: variables) else {
                let missing = EnvironmentTemplate.references(in: template).first { variables[$0] == nil } ?? key
                throw BadgeError(.backendUnavailable, "the environment variable \(missing) is not set", backend: name,
                                 hint: "export \(missing)=... (this backend's env passes it to the plugin as \(key))")
            }
            environment[key] = value
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: options.workingDirectory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw BadgeError(.backendUnavailable, "its working directory does not exist", backend: name,
                             path: options.workingDirectory.path, hint: "create it, or fix workingDirectory in the configuration")
        }
        guard let executable = ExecutableLookup.find(options.program, path: environment["PATH"]!) else {
            throw BadgeError(
                .backendUnavailable, "the program \"\(options.program)\" was not found or is not executable", backend: name,
                hint: options.program.contains("/") ? "check the path in command[0] (relative paths start at the configuration file's directory) and chmod +x"
                    : "install it, or give its full path in command[0]")
        }
        // What runs as badge's user: the program, and every file its arguments name (the
        // script an interpreter runs, through env, uv run or options before it).
        try FileTrust.check(executable, what: "program \(executable)", code: .backendUnavailable, backend: name)
        for argument in options.arguments where !argument.isEmpty && !argument.hasPrefix("-") {
            let path = URL.file(argument, relativeTo: options.workingDirectory).path
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                try FileTrust.check(path, what: "file \(path) in its command", code: .backendUnavailable, backend: name)
            }
        }
        return (executable, environment)
    }

    private var commandLine: String {
        ([options.program] + options.arguments).map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
    }

    private func failure(_ message: String, cause: String? = nil, hint: String? = nil) -> BadgeError {
        return BadgeError(.generationFailed, "the plugin \(URL(fileURLWithPath: options.program).lastPathComponent) " + scrubber.scrub(message),
                          backend: name, cause: cause.map(scrubber.scrub), hint: hint.map(scrubber.scrub))
    }

    /// Files the plugin left in the workspace beside its image: removed, and named in the log.
    private func removeStrays(in workspace: Workspace, keeping output: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: workspace.directory.path)) ?? []
        let strays = names.filter { $0 != output.lastPathComponent }
        guard !strays.isEmpty else { return }
        logger.warning("the plugin left files beside its image; removed", metadata: ["backend": "\(name)", "files": "\(strays.sorted())"])
        for stray in strays { try? FileManager.default.removeItem(at: workspace.file(stray)) }
    }

    // MARK: - Reading what it printed

    /// The last non-empty line of standard output: the result. Earlier lines are ignored.
    static func resultLine(_ output: Data) -> String? {
        String(decoding: output, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.last { !$0.isEmpty }
    }

    static func describe(_ status: TerminationStatus) -> String {
        switch status {
        case let .exited(code): return code == 0 ? "exited with status 0" : "exited with status \(code)"
        case let .signaled(signal): return "was killed by signal \(signal) (\(signalName(signal)))"
        }
    }

    static func exitHint(_ status: TerminationStatus) -> String? {
        switch status {
        case .exited(126): return "status 126: a program it ran could not be executed (permissions, or a bad #! line)"
        case .exited(127): return "status 127: a program it ran was not found (check PATH; badge passes only PATH, HOME, LANG, TMPDIR and env)"
        default: return nil
        }
    }

    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGSEGV: return "SIGSEGV"
        case SIGABRT: return "SIGABRT"
        case SIGKILL: return "SIGKILL"
        case SIGTERM: return "SIGTERM"
        case SIGINT: return "SIGINT"
        case SIGBUS: return "SIGBUS"
        case SIGPIPE: return "SIGPIPE"
        case SIGILL: return "SIGILL"
        case SIGFPE: return "SIGFPE"
        default: return "signal \(signal)"
        }
    }
}
