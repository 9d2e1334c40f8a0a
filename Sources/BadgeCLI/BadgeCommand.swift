import ArgumentParser
import BadgeKit
import Foundation

/// The `badge` command: turns a promise into one image and remembers the day
/// you committed to it.
@main
struct Badge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "badge",
        abstract: "Turn a promise into a Promise Badge and remember the day you committed.",
        discussion: """
            Generate a badge from a promise with a backend (procedural drawing, an \
            imported picture, ...). The store keeps the one current badge, with its \
            commitment date inside the PNG, and the badges it replaced.

            Exit codes: 0 success, 1 failure (the current badge is unchanged), 64 usage error.
            """,
        // Not replacingOccurrences(of:with:): bridged to NSString, it costs every run ~0.4 ms.
        version: BadgeMetadata.version,
        subcommands: [
            GenerateCommand.self, ImportCommand.self, ShowCommand.self, HistoryCommand.self,
            RestoreCommand.self, BatchCommand.self, CardCommand.self, BackendsCommand.self, ConfigCommand.self, VerifyCommand.self,
            PromptCommand.self,
        ]
    )

    /// Parses, runs, and turns every failure into a message and an exit code:
    /// `BadgeError`s are printed as they describe themselves, never as a trace.
    static func main() async {
        // A file-size limit (ulimit -f) must fail the write with EFBIG, which the
        // store reports and survives, rather than kill the process.
        signal(SIGXFSZ, SIG_IGN)
        Prewarm.start(for: CommandLine.arguments)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await Interrupts.runCancellable { try await asyncCommand.run() }
            } else {
                try command.run()
            }
        } catch let error as BadgeError {
            Terminal.printError(error)
            Foundation.exit(error.exitCode)
        } catch {
            exit(withError: error)
        }
    }
}
