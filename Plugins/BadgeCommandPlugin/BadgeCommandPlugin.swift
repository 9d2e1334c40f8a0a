import Foundation
import PackagePlugin

/// `swift package badge ARGUMENTS...`: runs the badge tool with ARGUMENTS, in
/// the package's directory, so a package can stamp its own badges in its
/// build scripts. Nothing else: the tool does the work, as its README says.
@main
struct BadgeCommandPlugin: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let tool = try context.tool(named: "badge")
        let process = Process()
        process.executableURL = tool.url
        process.arguments = arguments
        process.currentDirectoryURL = context.package.directoryURL
        try process.run()
        process.waitUntilExit()
        if process.terminationReason == .uncaughtSignal {
            Diagnostics.error("badge was killed by signal \(process.terminationStatus)")
        } else if process.terminationStatus != 0 {
            Diagnostics.error("badge \(arguments.first ?? "") failed with exit status \(process.terminationStatus)")
        }
    }
}
