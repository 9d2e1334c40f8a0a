#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import BadgeCard
import BadgeKit
import Canvas
import Foundation
import ProceduralBackend

struct CardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "card",
        abstract: "The badge as the app's card: its back face, the flip, a page to turn it with your finger.",
        subcommands: [CardBackCommand.self, CardFlipCommand.self, CardHTMLCommand.self]
    )
}

struct CardBackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "back",
        abstract: "Draw the back of the card: frosted glass, sparkles, and the commitment date.",
        discussion: "The back is the same size as the badge. With no --badge, the current badge is used."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var source: CardSource

    @Option(name: .shortAndLong, help: ArgumentHelp("The PNG to write (- for standard output).", valueName: "file"),
            completion: .file(extensions: ["png"]))
    var output = "badge-back.png"

    func run() async throws {
        let context = try global.makeContext()
        let badge = try source.load(context, command: ["back", "-o", output])
        let target = OutputFile.target(output, context)
        let (png, size) = try await BlockingExecutor.run {
            let face = try badge.backFace().render(front: try badge.decode())
            return (try PNGEncoder.encode(face, level: 6), face.width)
        }
        try await OutputFile.write(png, to: target, what: "the back of the card")
        OutputFile.report("Wrote the back of the card (\(size)×\(size), \(BackFace.label) \(badge.longDate)): \(target.displayPath)", for: target)
    }
}

struct CardFlipCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flip",
        abstract: "Animate the card turning over, with the app's snap and wiggle.",
        discussion: """
            The file's extension picks the format: .png writes an animated PNG in true \
            colour (transparent around the card), .gif a GIF (on a white background \
            unless --background says otherwise).
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var source: CardSource

    @Option(name: .shortAndLong, help: ArgumentHelp("The animation to write: .png (animated PNG) or .gif.", valueName: "file"),
            completion: .file(extensions: ["png", "gif"]))
    var output: String

    @Option(name: .customLong("fps"), help: ArgumentHelp("Frames a second, \(FlipAnimation.frameRates.lowerBound)–\(FlipAnimation.frameRates.upperBound) (a GIF: at most \(FlipAnimation.gifFrameRates.upperBound)).", valueName: "n"))
    var frameRate = 30

    @Option(help: ArgumentHelp("Side of the frames in pixels, 16–2048 (default: the badge's size, at most 512).", valueName: "px"))
    var size: Int?

    @Option(help: ArgumentHelp("Which way the card turns: left or right.", valueName: "way"))
    var direction: FlipTimeline.Direction = .left

    @Option(help: ArgumentHelp("Seconds the card rests on each face before the animation loops.", valueName: "s"))
    var hold = 1.0

    @Option(help: ArgumentHelp("Colour behind the card, #RRGGBB (default: transparent; white for a GIF).", valueName: "colour"))
    var background: String?

    func validate() throws {
        guard FlipAnimation.frameRates.contains(frameRate) else {
            throw ValidationError("--fps must be from \(FlipAnimation.frameRates.lowerBound) to \(FlipAnimation.frameRates.upperBound), not \(frameRate)")
        }
        if let size, !(16...2048).contains(size) { throw ValidationError("--size must be from 16 to 2048 pixels, not \(size)") }
        guard (0...60).contains(hold) else { throw ValidationError("--hold must be from 0 to 60 seconds") }
        if let background, RGBA(hex: background) == nil { throw ValidationError("--background takes a colour as #RRGGBB, not '\(background)'") }
        guard let format = FlipAnimation.Format(pathExtension: (output as NSString).pathExtension) else {
            throw ValidationError("--output must end in .png (an animated PNG) or .gif, not '\(output)'")
        }
        if format == .gif, !FlipAnimation.gifFrameRates.contains(frameRate) {
            throw ValidationError("a GIF cannot play \(frameRate) frames a second; use --fps \(FlipAnimation.gifFrameRates.upperBound) or less, or write a .png")
        }
    }

    func run() async throws {
        let context = try global.makeContext()
        let badge = try source.load(context, command: ["flip", "-o", output])
        let target = OutputFile.target(output, context)
        let format = FlipAnimation.Format(pathExtension: (output as NSString).pathExtension) ?? .apng
        let configured = FlipAnimation(timeline: FlipTimeline(direction: direction), frameRate: frameRate, size: size ?? 0,
                                      hold: hold, background: background.flatMap { RGBA(hex: $0) })
        let explicitSize = size
        let (file, frames, duration) = try await BlockingExecutor.run {
            let image = try badge.decode()
            var animation = configured
            animation.size = explicitSize ?? min(512, max(16, image.width))
            let faces = try animation.faces(badge: image, back: try badge.backFace())
            return (try animation.encode(format, front: faces.front, back: faces.back), animation.frames.count, animation.timeline.duration)
        }
        try await OutputFile.write(file, to: target, what: "the flip")
        let kind = format == .gif ? "GIF" : "animated PNG"
        OutputFile.report("Wrote the flip (\(kind), \(frames) frames at \(frameRate) fps, the turn takes \(String(format: "%.2f", duration)) s): \(target.displayPath)", for: target)
    }
}

extension FlipTimeline.Direction: ExpressibleByArgument {
    /// `left`, `Left` or `LEFT`: matched without regard to case.
    public init?(argument: String) {
        self.init(rawValue: argument.lowercased())
    }
}

struct CardHTMLCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "html",
        abstract: "Write a page that shows the badge as a card you turn with your finger.",
        discussion: """
            Writes DIR/index.html: one self-contained file (the images, style and script \
            inline; no network). Drag the card sideways to turn it, tap it or press Space \
            or an arrow key to flip it. Works offline, on a phone, from any static host.
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var source: CardSource

    @Argument(help: ArgumentHelp("The directory to write index.html into (created if missing).", valueName: "dir"),
              completion: .directory)
    var directory: String

    @Flag(help: "Embed the front as SVG, sharp on any screen (a procedural badge, drawn again from its metadata once that matches its PNG).")
    var svg = false

    func run() async throws {
        let context = try global.makeContext()
        let badge = try source.load(context, command: ["html", directory])
        let folder = OutputFile.url(directory, context)
        let target = folder.appendingPathComponent(CardPage.fileName)
        var front = (data: badge.png, type: "image/png")
        if svg {
            guard badge.metadata.backendType == ProceduralGenerator.type else {
                throw BadgeError(.unsupportedFormat,
                                 "--svg: this badge was made by the \(badge.metadata.backendType) backend as a picture; only procedural badges are drawn as vectors",
                                 path: badge.path, hint: "leave out --svg: the card shows the PNG")
            }
            front = (try await Provenance.vectorCopy(of: URL(fileURLWithPath: badge.path)).svg, "image/svg+xml")
        }
        let html = try await BlockingExecutor.run { [front] in
            let back = try BackFace.png(forBadge: badge.png, metadata: badge.metadata, locale: UserLocale.current, limits: badge.limits, source: badge.path)
            return CardPage(front: front.data, frontType: front.type, back: back, promise: badge.metadata.promise, date: badge.longDate).html
        }
        try await BlockingExecutor.run {
            do throws(MakeDirectoryFailure) {
                try makeDirectories(folder)
            } catch {
                let notAFolder = if case .notAFolder = error { true } else { false }
                throw error.error("the card page's folder", at: folder, code: notAFolder ? .usage : .io,
                                  hint: notAFolder ? "give a folder (it is created if missing)" : "choose a folder you can write to")
            }
        }
        try await OutputFile.write(Data(html.utf8), to: .path(target), what: "the card page")
        Terminal.out("Wrote the card page: \(target.path)\nOpen it in a browser; drag the badge sideways, tap it, or press Space to turn it over.")
    }
}
