import Foundation
import PackagePlugin

/// `swift package badge ARGUMENTS...`: builds the badge tool and runs it with
/// ARGUMENTS in the package's directory, so a package can stamp its own
/// badges from its scripts. Nothing else: the tool does the work.
///
/// The tool is built through `packageManager.build` rather than declared as
/// the plugin's dependency: SwiftPM (6.3) cannot give a plugin an executable
/// target whose product has another name ("no product named 'BadgeCLI'",
/// swiftlang/swift-package-manager#8831), and the product is `badge`.
@main
struct BadgeCommandPlugin: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let build = try packageManager.build(.product("badge"), parameters: .init(configuration: .debug, logging: .concise))
        guard build.succeeded,
              let tool = build.builtArtifacts.first(where: { $0.kind == .executable && $0.url.lastPathComponent == "badge" })
        else {
            Diagnostics.error("could not build the badge tool:\n\(build.logText)")
            return
        }
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
