import ArgumentParser
import BadgeKit
import Foundation
import Logging

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Configuration file (default: $BADGE_CONFIG, then $XDG_CONFIG_HOME/badge/config.json).", valueName: "file"))
    var config: String?

    @Option(name: .long, help: ArgumentHelp("Store directory (default: $BADGE_STORE, the config's store, then $XDG_DATA_HOME/badge).", valueName: "dir"))
    var store: String?

    @Flag(name: .shortAndLong, help: "Log what happens, step by step, to standard error.")
    var verbose = false

    /// Reads the configuration and wires the environment: one place, for every command.
    func makeContext() throws -> CommandContext {
        let variables = ProcessInfo.processInfo.environment
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        let logger = StderrLogHandler.logger(verbose: verbose)
        let config = try BadgeConfig.load(explicit: config, variables: variables, workingDirectory: cwd)
        let environment = BadgeEnvironment(
            sourceDate: try BadgeEnvironment.sourceDate(from: variables), variables: variables, logger: logger, http: Backends.http, decoder: Backends.decoder, workingDirectory: cwd)
        let storeDirectory = config.storeDirectory(explicit: store, variables: variables, workingDirectory: cwd)
        logger.debug("configuration", metadata: ["source": "\(config.file ?? "built-in")", "store": "\(storeDirectory.path)"])
        return CommandContext(
            config: config, environment: environment, registry: Backends.registry(limits: config.intake),
            store: BadgeStore(directory: storeDirectory, historyLimit: config.historyLimit))
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
