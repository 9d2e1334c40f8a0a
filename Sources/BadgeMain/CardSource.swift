import ArgumentParser
import BadgeCard
import BadgeKit
import Canvas
import Foundation

/// Which badge a `badge card` command shows: the current one, or a file.
struct CardSource: ParsableArguments {
    @Option(name: .customLong("badge"), help: ArgumentHelp("A badge file to use instead of the current badge.", valueName: "file"),
            completion: .file(extensions: ["png"]))
    var file: String?

    /// The badge's bytes, where they came from, and its metadata. A PNG
    /// without a commitment date is refused here: a card has nothing to show
    /// on its back without one.
    ///
    /// `command` is the card command run (`back`, `flip`, `html DIR`): a hint
    /// names it again, with the badge to use.
    func load(_ context: CommandContext, command: [String]) throws -> CardBadge {
        guard let file else {
            guard let (badge, data) = try context.store.currentWithBytes() else {
                throw BadgeError(.notFound, "there is no badge yet", path: context.store.badgeURL.path,
                                 hint: "make one with: badge generate \"A pair of dumbbells\", or pass --badge FILE")
            }
            return CardBadge(png: data, path: badge.url.path, metadata: badge.metadata,
                             limits: context.config.intake.admittingDrawing(side: badge.metadata.size))
        }
        let url = URL.file(file, relativeTo: context.environment.workingDirectory)
        let data = try read(url)
        let entries: [(keyword: String, text: String)]
        do {
            entries = try PNG.chunks(in: data, verifyCRC: false, stopAtIDAT: true).compactMap(PNG.textEntry)
        } catch var error as BadgeError {
            error.path = url.path
            if !data.starts(with: PNG.signature) {
                // A photo, say: the card needs a badge, which badge import makes from it, as a preview.
                error.hint = Self.previewHint(for: file, command: command)
            } else {
                error.hint = error.hint ?? "a card is made from a Promise Badge PNG (badge generate --output, or the store's badge.png)"
            }
            throw error
        }
        guard let metadata = BadgeMetadata(entries: entries) else {
            throw BadgeError(.invalidImage, "this PNG has no commitment date (no badge:commitment-date metadata)", path: url.path,
                             hint: "use a badge made by badge generate or badge import; " + Self.previewHint(for: file, command: command))
        }
        // A badge may be larger than others' pictures: a 4096 px tile of grain
        // is ~27 MB. Its pixels are still held to the limits.
        return CardBadge(png: data, path: url.path, metadata: metadata, limits: context.config.intake.admittingDrawing(side: metadata.size))
    }

    /// The two commands that make a card from a picture that is no badge: a
    /// preview badge made from it (the current badge is left alone), then the
    /// card command again with that badge.
    static func previewHint(for file: String, command: [String]) -> String {
        let name = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        let preview = Badge.shellQuoted((name.isEmpty || name == "-" ? "picture" : name) + "-badge.png")
        return "make a badge from this picture as a preview, which leaves the current badge alone: badge import --output \(preview) "
            + "\(Badge.shellQuoted(file)) \"your promise\"; then: " + (["badge", "card"] + command.map(Badge.shellQuoted)).joined(separator: " ")
            + " --badge \(preview)"
    }

    /// Opened once without blocking (a FIFO is refused, not waited on), checked by descriptor, read from it.
    private func read(_ url: URL) throws -> Data {
        do {
            return try RegularFile.contents(of: url.path, limit: BadgeStore.maxBadgeBytes)
        } catch {
            throw BadgeError(.io, "cannot read the badge", path: url.path, cause: error.description, hint: "check the path")
        }
    }
}

/// A badge read for the card.
struct CardBadge: Sendable {
    var png: Data
    var path: String
    var metadata: BadgeMetadata
    var limits: ImageLimits

    var longDate: String { metadata.longCommitmentDate(locale: UserLocale.current) }

    func decode() throws -> GDImage {
        try GDImage.decodePNG(png, limits: limits, source: path)
    }

    func backFace() throws -> BackFace {
        BackFace(date: longDate, font: try Font.caption())
    }
}
