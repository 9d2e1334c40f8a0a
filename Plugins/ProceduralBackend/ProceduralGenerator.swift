import BadgeKit
import Canvas
import Foundation

/// Draws a badge from the words of the promise, in Swift: no network, no
/// model, the same bytes for the same prompt, seed, style and size.
package struct ProceduralGenerator: VectorGenerator {
    package static let type = "procedural"

    /// Drawing is CPU work on this machine: one request per core, and one
    /// more, which keeps every core drawing while a badge's work hands over
    /// between threads (docs/PERFORMANCE.md, batch).
    package var preferredConcurrency: Int? { ImageThreads.processorCount + 1 }
    /// Recorded in every badge it draws; bumped whenever the pixels change
    /// (`badge verify` redraws only this engine's badges: Provenance.retired).
    package static let artEngineVersion = "art-engine \(BadgeArt.currentEngine)"
    package static let styles = BadgeArt.Style.allCases.map(\.rawValue)

    package var styles: [String]? { Self.styles }

    package func style(askedForIn prompt: String) -> String? {
        PromptReading(prompt).style?.rawValue
    }

    package var caption: Bool
    package var compression: Int

    package init(caption: Bool = true, compression: Int = 2) {
        self.caption = caption
        self.compression = compression
    }

    package static func register(in registry: inout BackendRegistry) {
        registry.register(type, summary: "draws a badge from the words of the promise (no network)") { config, _ in
            let options = config.options
            try options.allowOnly(["type", "caption", "compression"])
            return ProceduralGenerator(
                caption: try options.bool("caption") ?? true,
                compression: try options.int("compression", in: 0...9) ?? 2)
        }
    }

    /// Reads a sample promise, so that the word lists, lexicons and emoji
    /// table a reading consults (built the first time they are used) are ready
    /// before the real promise is read: for a spare thread at start-up.
    package static func prepareReading() {
        _ = PromptReading("I will run 5 km a day 🏃").scene
    }

    package func availability() async -> Availability { .available }

    package func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
        let art = try self.art(for: request)
        let result = try await CancellationFlag.run { flag in
            var cancellable = art
            cancellable.cancellation = flag
            return try cancellable.render()
        }
        let file = try workspace.write(result.png, to: "badge.png")
        // The intake takes the bytes as they are rather than reading the file back.
        return GeneratedImage(
            encodedInProcess: file, model: Self.artEngineVersion,
            seed: request.seed, extra: result.notes, bytes: result.png, inflated: result.inflated)
    }

    /// The same picture as `generate`'s PNG, recorded as a scene and written
    /// as SVG (`SVGDocument`): nothing is rasterised.
    package func generateVector(_ request: BadgeRequest) async throws -> VectorImage {
        let art = try self.art(for: request)
        let (written, notes) = try await BlockingExecutor.run {
            let recording = try art.record()
            return (SVGDocument.Written(recording.scene), recording.notes)
        }
        let title = request.prompt
        return VectorImage(model: Self.artEngineVersion, seed: request.seed, extra: notes) { metadata in
            written.document(title: title, metadata: metadata.map { (Self.metadataName($0.keyword), $0.text) })
        }
    }

    /// A PNG metadata keyword ("badge:x-caption-drawn") as the SVG's element name ("x-caption-drawn").
    static func metadataName(_ keyword: String) -> String {
        keyword.hasPrefix("badge:") ? String(keyword.dropFirst(6)) : keyword
    }

    /// The PNG `generate` writes into its workspace, drawn and encoded as it
    /// does (the drawing threads compress the bands already drawn), on the
    /// caller's thread: for measuring the two together (badge-bench draw).
    package func render(_ request: BadgeRequest) throws -> Data {
        try art(for: request).render().png
    }

    private func art(for request: BadgeRequest) throws -> BadgeArt {
        try request.validate()
        // An unknown style is the user's mistake: say so before any drawing starts.
        _ = try BadgeArt.style(named: request.style, reading: PromptReading(""))
        return BadgeArt(request: request, caption: caption, compression: compression)
    }

    /// The badge's pixels without encoding them, for measuring the drawing alone (badge-bench draw).
    package func draw(_ request: BadgeRequest) throws -> Canvas {
        try request.validate()
        return try BadgeArt(request: request, caption: caption, compression: compression).draw().canvas
    }

    /// Encodes a finished drawing: the bytes `generate` writes, compressed
    /// after the drawing rather than beside it.
    package func encode(_ canvas: Canvas) throws -> Data {
        try PNGEncoder.encode(canvas, level: compression, filter: BadgeArt.filter)
    }
}
