import ArgumentParser
import BadgeKit
import Foundation
import ProceduralBackend

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a procedural badge's provenance: re-render it from its own metadata and compare the pixels.",
        discussion: "Exit code 0 when every pixel matches, 1 when they differ or the badge cannot be re-rendered."
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The badge to check (default: the current badge).", completion: .file(extensions: ["png"]))
    var file: String?

    @Flag(help: "Print the result as JSON.")
    var json = false

    func run() async throws {
        let context = try global.makeContext()
        let url = file.map { BadgeConfig.resolvePath($0, relativeTo: context.environment.workingDirectory) } ?? context.store.badgeURL
        guard try BadgeStore.fileSize(url, what: "cannot read the badge", code: file == nil ? .store : .io) != nil else {
            throw BadgeError(.notFound, "no such file", path: url.path,
                             hint: file == nil ? "make a badge first: badge generate \"A pair of dumbbells\"" : "check the path")
        }
        let report = try await Provenance.verify(url)
        if json {
            try Terminal.json(report)
        } else if report.matches {
            Terminal.out("verified: every pixel matches a fresh rendering (\(report.artEngine), seed \(report.seed), \(report.style)\(report.styleSource.shown), \(report.size) px)")
        } else {
            Terminal.out("NOT verified: \(report.differingPixels) of \(report.pixels) pixels differ from a fresh rendering of \"\(report.prompt)\" (seed \(report.seed))")
        }
        if !report.matches { throw ExitCode.failure }
    }
}
