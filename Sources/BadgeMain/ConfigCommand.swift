import ArgumentParser
import BadgeKit
import Foundation

struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check or show the configuration.",
        subcommands: [Validate.self, Show.self]
    )

    struct Validate: AsyncParsableCommand {
        // Named here, not derived from the type's name: deriving it costs every run of badge a reflection.
        static let configuration = CommandConfiguration(
            commandName: "validate",
            abstract: "Check a configuration file: JSON syntax, every key, every backend's options."
        )

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The file to check (default: the configuration badge would use).", completion: .file(extensions: ["json"]))
        var file: String?

        func run() async throws {
            var options = global
            if let file { options.config = file }
            let context = try options.makeContext()
            let instances = try context.registry.makeAll(context.config, environment: context.environment)
            let source = context.config.file ?? "built-in defaults (no configuration file)"
            Terminal.out("\(source): valid; backends: \(instances.map { "\($0.name) (\($0.type))" }.joined(separator: ", "))")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Print the effective configuration as JSON, with secrets masked."
        )

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = try global.makeContext()
            _ = try context.registry.makeAll(context.config, environment: context.environment)
            // Its secrets are masked already; what terminals act on in its values (DEL, C1, bidi) is escaped.
            Terminal.write(to: STDOUT_FILENO, OutsideText.escapingControls(inJSON: Data(context.config.effectiveJSON(
                storeDirectory: context.store.directory, variables: context.environment.variables).utf8)))
        }
    }
}
