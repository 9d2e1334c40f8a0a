import ArgumentParser
import BadgeKit
import Foundation

/// badge's command line, for a `main` function: badge's own or that of a
/// package that builds its own `badge` with backends of its own.
///
/// ```swift
/// @main struct MyBadge {
///     static func main() async { await BadgeMain.run(registering: [SolidGenerator.self]) }
/// }
/// ```
public enum BadgeMain {
    /// Runs the command in `CommandLine.arguments` with badge's backends and
    /// `backends`, then ends the process with the command's exit code: 0
    /// success, 1 failure (the current badge is unchanged), 64 usage error.
    public static func run(registering backends: [any RegisteringGenerator.Type] = []) async -> Never {
        Backends.extra.withLock { $0 = backends }
        // A file-size limit (ulimit -f) must fail the write with EFBIG, which the
        // store reports and survives, rather than kill the process.
        signal(SIGXFSZ, SIG_IGN)
        Prewarm.start(for: CommandLine.arguments)
        do {
            var command = try Badge.parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await Interrupts.runCancellable { try await asyncCommand.run() }
            } else {
                try command.run()
            }
        } catch let error as BadgeError {
            Terminal.printError(error)
            Foundation.exit(error.exitCode)
        } catch {
            Badge.exit(withError: error)
        }
        Foundation.exit(0)
    }
}

/// The `badge` command: turns a promise into one image and remembers the day
/// you committed to it.
struct Badge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "badge",
        abstract: "Turn a promise into a Promise Badge and remember the day you committed.",
        discussion: """
            Generate a badge from a promise with a backend (procedural drawing, an \\
            imported picture, ...). The store keeps the one current badge, with its \\
            commitment date inside the PNG, and the badges it replaced.

            Exit codes: 0 success, 1 failure (the current badge is unchanged), 64 usage error.
            """,
        version: BadgeMetadata.version,
        subcommands: [
            GenerateCommand.self, ImportCommand.self, ShowCommand.self, HistoryCommand.self,
            RestoreCommand.self, BatchCommand.self, CardCommand.self, BackendsCommand.self, ConfigCommand.self, VerifyCommand.self,
            PromptCommand.self,
        ]
    )
}
