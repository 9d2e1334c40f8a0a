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

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the current badge (or one from the history) as SVG, drawn again from its own metadata.",
        discussion: """
            The SVG is written only once a fresh rendering matches the committed PNG pixel for pixel \
            (as 'badge verify' checks), so it is the picture that was committed, sharp at any size. \
            A badge that cannot be redrawn (a remote model's, an imported picture) has no SVG. \
            --format png writes the committed PNG as it is.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: "A badge id from the history, or a unique prefix of at least 4 characters (default: the current badge).",
              completion: .custom(Completions.historyIDs))
    var id: String?

    @Option(help: ArgumentHelp("svg (the default) or png.", valueName: "format"), completion: .list(BadgeFormat.allCases.map(\.rawValue)))
    var format: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("The file to write (- for standard output, the default when it is not a terminal).", valueName: "file"),
            completion: .file(extensions: ["svg", "png"]))
    var output: String?

    func validate() throws {
        if let format, BadgeFormat(rawValue: format.lowercased()) == nil {
            throw ValidationError("--format takes svg or png, not '\(format)'")
        }
        if output == "" { throw ValidationError("--output needs a file (or - for standard output); \"\" names none") }
    }

    func run() async throws {
        let context = try global.makeContext()
        let store = context.store
        guard let output = output ?? (Terminal.stdoutIsTerminal ? nil : "-") else {
            throw BadgeError(.usage, "export writes a picture, and standard output is a terminal",
                             hint: "give --output badge.svg, or redirect it: badge export > badge.svg")
        }
        let asked = format.flatMap { BadgeFormat(rawValue: $0.lowercased()) }
        let named = output == "-" ? nil : BadgeFormat(extensionOf: output)
        if output != "-", named == nil, (output.split(separator: "/").last ?? "").contains(".") {
            throw BadgeError(.usage, "--output \(OutsideText.printable(output)): badge writes SVG or PNG",
                             hint: "name the file .svg or .png, or give --format for a name without an extension")
        }
        if let asked, let named, asked != named {
            throw BadgeError(.usage, "--format \(asked.rawValue) contradicts --output \(OutsideText.printable(output))", hint: "make them agree")
        }
        let format = asked ?? named ?? .svg
        let id = self.id
        let badge = try await BlockingExecutor.run { () throws -> StoredBadge in
            if let id { return try store.historyEntry(matching: id) }
            guard let current = try store.current() else {
                throw BadgeError(.notFound, "there is no badge yet", path: store.badgeURL.path,
                                 hint: "make one with: badge generate \"A pair of dumbbells\"")
            }
            return current
        }
        let target = OutputFile.target(output, context)
        let data: Data
        switch format {
        case .png:
            data = try RegularFile.contents(of: badge.url.path, limit: BadgeStore.maxBadgeBytes)
        case .svg:
            guard badge.metadata.backendType == ProceduralGenerator.type else {
                throw BadgeError(.unsupportedFormat,
                                 "this badge was made by the \(badge.metadata.backendType) backend \"\(OutsideText.printable(badge.metadata.backend))\" as a picture; only procedural badges are drawn as vectors",
                                 path: badge.url.path, hint: "export it as it is: badge export --format png")
            }
            data = try await Provenance.vectorCopy(of: badge.url).svg
        }
        try await OutputFile.write(data, to: target, what: "the badge")
        let destination = output == "-" ? "standard output" : OutputFile.url(output, context).path
        OutputFile.report("Wrote badge \(badge.metadata.id) as \(format.rawValue.uppercased()) (\(data.count) bytes) to \(destination).", for: target)
    }
}
