import ArgumentParser
import BadgeKit
import ExecBackend
import Foundation
import Logging

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Configuration file (default: $BADGE_CONFIG, then $XDG_CONFIG_HOME/badge/config.json).", valueName: "file"),
            completion: .file(extensions: ["json"]))
    var config: String?

    @Option(name: .long, help: ArgumentHelp("Store directory (default: $BADGE_STORE, the config's store, then $XDG_DATA_HOME/badge).", valueName: "dir"),
            completion: .directory)
    var store: String?

    @Flag(name: .shortAndLong, help: "Log what happens, step by step, to standard error.")
    var verbose = false

    /// An empty path would name the current folder: `--store ""` made it the store.
    func validate() throws {
        if store == "" { throw ValidationError("--store needs a directory; \"\" would be the current folder") }
        if config == "" { throw ValidationError("--config needs a file; \"\" names none") }
    }

    /// Reads the configuration and wires the environment: one place, for every command.
    func makeContext() throws -> CommandContext {
        let variables = ProcessInfo.processInfo.environment
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        let logger = StderrLogHandler.logger(verbose: verbose)
        let config = try BadgeConfig.load(explicit: config, variables: variables, workingDirectory: cwd)
        let secrets = Self.secrets(of: config, variables: variables)
        Terminal.scrubber.withLock { $0 = SecretScrubber(secrets: secrets) }
        let environment = BadgeEnvironment(
            sourceDate: try BadgeEnvironment.sourceDate(from: variables), variables: variables, logger: logger, http: Backends.http, decoder: Backends.decoder, workingDirectory: cwd)
        let storeDirectory = config.storeDirectory(explicit: store, variables: variables, workingDirectory: cwd)
        logger.debug("configuration", metadata: ["source": "\(config.file ?? "built-in")", "store": "\(storeDirectory.path)"])
        return CommandContext(
            config: config, environment: environment, registry: Backends.registry(limits: config.intake),
            store: BadgeStore(directory: storeDirectory, historyLimit: config.historyLimit))
    }
}

extension GlobalOptions {
    /// The values the configuration's backends read as secrets (`apiKeyEnv`,
    /// `passwordEnv`, and an exec plugin's `env` references whose name, or the
    /// name they are passed as, says token, key, secret, password or auth),
    /// and a Basic header's base64 made of one: never printed or logged.
    static func secrets(of config: BadgeConfig, variables: [String: String]) -> [String] {
        var found: [String] = []
        for backend in config.backends {
            let options = backend.options
            if backend.type == "exec", let env = try? options.value("env")?.stringMap() {
                found += EnvironmentTemplate.secrets(in: env, variables: variables)
            }
            for key in ["apiKeyEnv", "passwordEnv"] {
                if let name = try? options.value(key)?.string(), let value = variables[name], !value.isEmpty { found.append(value) }
            }
            if let user = try? options.value("username")?.string(), let name = try? options.value("passwordEnv")?.string(),
               let password = variables[name] {
                found.append(Data("\(user):\(password)".utf8).base64EncodedString())
            }
        }
        return found
    }
}

/// What a command needs, built from the global options.
struct CommandContext {
    var config: BadgeConfig
    var environment: BadgeEnvironment
    var registry: BackendRegistry
    var store: BadgeStore

    func backend(named name: String) throws -> BackendInstance {
        try registry.makeBackend(named: backendName(name), in: config, environment: environment)
    }

    /// The configured instance `name` means, matched the way people type it: exactly,
    /// else without regard to case when only one instance is spelt so (`Procedural`).
    func backendName(_ name: String) -> String {
        guard config.backend(named: name) == nil else { return name }
        let matches = config.backends.map(\.name).filter { $0.lowercased() == name.lowercased() }
        return matches.count == 1 ? matches[0] : name
    }
}

/// Values the shell completes (argument-parser's `CompletionKind.custom`): asked of the
/// binary as the user types, from the effective configuration and store, honouring a
/// `--config` or `--store` already on the command line. Any failure completes nothing.
enum Completions {
    static func backendNames(_ arguments: [String], _ index: Int, _ prefix: String) -> [String] {
        guard let config = try? config(arguments) else { return [] }
        return config.backends.map(\.name).filter { $0.hasPrefix(prefix) }
    }

    static func historyIDs(_ arguments: [String], _ index: Int, _ prefix: String) -> [String] {
        guard let config = try? config(arguments) else { return [] }
        let variables = ProcessInfo.processInfo.environment
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        let store = BadgeStore(directory: config.storeDirectory(explicit: value(of: "--store", in: arguments), variables: variables, workingDirectory: cwd))
        return ((try? store.history()) ?? []).map(\.metadata.id).filter { $0.hasPrefix(prefix) }
    }

    private static func config(_ arguments: [String]) throws -> BadgeConfig {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        return try BadgeConfig.load(explicit: value(of: "--config", in: arguments), variables: ProcessInfo.processInfo.environment,
                                    workingDirectory: cwd)
    }

    private static func value(of option: String, in arguments: [String]) -> String? {
        for (i, argument) in arguments.enumerated() {
            if argument.hasPrefix(option + "=") { return String(argument.dropFirst(option.count + 1)) }
            if argument == option, i + 1 < arguments.count { return arguments[i + 1] }
        }
        return nil
    }
}

/// The global options (`--config`, `--store`, `--verbose`) where git and kubectl
/// take theirs: before the subcommand. argument-parser reads a command's options
/// after its name, so `badge --store DIR show` is rewritten to
/// `badge show --store DIR` before parsing. Any command whose options include every
/// global option (every command that declares `@OptionGroup var global: GlobalOptions`)
/// takes them this way; the names are read from `GlobalOptions` itself.
enum GlobalArguments {
    /// A global option's names, and whether it takes a value.
    struct Spec: Sendable {
        var valued: Set<String>
        var flags: Set<String>
        var longNames: Set<String>
    }

    /// Read once from `GlobalOptions`' own help: `--config <file>`, `-v, --verbose`.
    static let spec: Spec = {
        var spec = Spec(valued: [], flags: [], longNames: [])
        for line in GlobalOptions.helpMessage(includeHidden: true, columns: 10_000).split(separator: "\n") {
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("-") else { continue }
            let words = trimmed.split(separator: " ").prefix(4).map(String.init)
            let names = words.prefix { $0.hasPrefix("-") }.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) }
            guard !names.contains("--help") else { continue }
            let takesValue = words.dropFirst(names.count).first?.hasPrefix("<") == true
            for name in names {
                if takesValue { spec.valued.insert(name) } else { spec.flags.insert(name) }
                if name.hasPrefix("--") { spec.longNames.insert(name) }
            }
        }
        return spec
    }()

    /// The global options that lead `arguments`, moved after the subcommand they
    /// come before. Throws when that command does not take them (rather than
    /// letting the option be lost), or when a value is missing.
    static func hoisted(_ arguments: [String]) throws -> [String] {
        // Only a command line that starts with an option, and not the shell's completion call (---completion).
        guard let first = arguments.first, first.hasPrefix("-"), !first.hasPrefix("---") else { return arguments }
        let spec = self.spec
        var globals: [String] = []
        var index = 0
        scan: while index < arguments.count {
            let token = arguments[index]
            let name = String(token.split(separator: "=", maxSplits: 1).first ?? "")
            switch true {
            case token.hasPrefix("--") && token.contains("=") && spec.valued.contains(name):
                globals.append(token)
                index += 1
            case spec.valued.contains(token):
                guard index + 1 < arguments.count else {
                    throw BadgeError(.usage, "missing value for '\(token)'", hint: "badge \(token) VALUE COMMAND ..., e.g. badge --store ~/badges show")
                }
                globals += [token, arguments[index + 1]]
                index += 2
            case spec.flags.contains(token):
                globals.append(token)
                index += 1
            default:
                break scan
            }
        }
        guard !globals.isEmpty else { return arguments }
        // The subcommand path after them: `show`, `card back`, ...
        var command: ParsableCommand.Type = Badge.self
        var end = index
        while end < arguments.count, let next = command.configuration.subcommands.first(where: { $0._commandName == arguments[end] }) {
            command = next
            end += 1
        }
        guard end > index else {
            guard index < arguments.count else {
                throw BadgeError(.usage, "\(globals[0].split(separator: "=")[0]) goes with a command, and none follows",
                                 hint: "e.g. badge \(globals.joined(separator: " ")) show; 'badge --help' lists the commands")
            }
            // Help, or a mistyped command (`badge --store DIR shwo`): argument-parser and the suggestions answer.
            return Array(arguments[index...]) + globals
        }
        guard takesGlobalOptions(command) else {
            let path = (["badge"] + arguments[index..<end]).joined(separator: " ")
            let used = globals.filter { $0.hasPrefix("-") }.map { String($0.split(separator: "=").first ?? "") }
            throw BadgeError(.usage, "'\(path)' does not take \(used.joined(separator: ", "))",
                             hint: "'\(path) --help' lists its options")
        }
        return Array(arguments[index..<end]) + globals + Array(arguments[end...])
    }

    /// Whether `command` declares every global option (a group of subcommands, `card`, does not).
    static func takesGlobalOptions(_ command: ParsableCommand.Type) -> Bool {
        command.configuration.subcommands.isEmpty && spec.longNames.isSubset(of: Badge.longOptions(of: command))
    }

    /// The top-level help's section for them, in the help's own layout.
    static func helpSection(columns: Int?) -> String {
        let help = GlobalOptions.helpMessage(columns: columns)
        guard let start = help.range(of: "OPTIONS:\n") else { return "" }
        var lines: [String] = []
        for line in help[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("-h, --help") { break }
            lines.append(String(line))
        }
        while lines.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeLast() }
        return "GLOBAL OPTIONS (before or after the command):\n" + lines.joined(separator: "\n") + "\n"
    }

    /// argument-parser's description of the top-level command
    /// (`--experimental-dump-help`, which the man page is made from) with the
    /// global options among its own, as the top-level help lists them. Any
    /// other text as it is.
    static func dumpWithGlobalOptions(_ dump: String) -> String {
        guard dump.hasPrefix("{"), var root = try? JSONParser.parse(dump), var command = root["command"],
              command["commandName"]?.value == .string("badge"), command["superCommands"] == nil,
              let global = globalArgumentsDump()
        else { return dump }
        guard case let .array(own) = command["arguments"]?.value ?? .array([]) else { return dump }
        command["arguments"] = JSONNode(.array(global + own), at: command.location)
        root["command"] = command
        return JSONWriter.write(root)
    }

    /// The global options as argument-parser describes them, less its `--help`.
    private static func globalArgumentsDump() -> [JSONNode]? {
        let dump: String
        do {
            _ = try GlobalOptionsDump.parseAsRoot(["--experimental-dump-help"])
            return nil
        } catch {
            dump = GlobalOptionsDump.fullMessage(for: error)
        }
        guard let root = try? JSONParser.parse(dump), case let .array(arguments)? = root["command"]?["arguments"]?.value
        else { return nil }
        return arguments.filter { argument in
            guard case let .array(names)? = argument["names"]?.value else { return true }
            return !names.contains { $0["name"]?.value == .string("help") }
        }
    }
}

/// A command made of the global options alone, for their description.
private struct GlobalOptionsDump: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "badge")
    @OptionGroup var global: GlobalOptions
}

/// The shell completion scripts argument-parser writes, with one change for bash:
/// its script registers `complete -o filenames`, so bash treats every word it
/// completes as a file name, and `badge ca<Tab>` becomes `card/` wherever a `card/`
/// folder exists. Here filename handling is turned on only where a file or a
/// directory is completed (`compopt -o filenames`, from bash 4).
enum CompletionScripts {
    static let bashRegistration = "complete -o filenames -F _badge badge"
    static let bashAddCompletions = "__badge_add_completions() {\n"

    static func adjusted(_ script: String) -> String {
        guard script.contains(bashRegistration), let start = script.range(of: bashAddCompletions) else { return script }
        var script = script
        script.replaceSubrange(start, with: bashAddCompletions + """
                local argument
                for argument in "${@}"; do
                    case "${argument}" in
                        -f|-fX|-d) compopt -o filenames 2>/dev/null; break ;;
                        -W) break ;;
                    esac
                done

            """)
        return script.replacingOccurrences(of: bashRegistration, with: "complete -F _badge badge")
    }
}
