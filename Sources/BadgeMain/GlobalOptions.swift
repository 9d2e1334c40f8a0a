import ArgumentParser
import BadgeKit
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
    /// `passwordEnv`), and a Basic header's base64 made of one: never printed or logged.
    static func secrets(of config: BadgeConfig, variables: [String: String]) -> [String] {
        var found: [String] = []
        for backend in config.backends {
            let options = backend.options
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
        try registry.makeBackend(named: name, in: config, environment: environment)
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
