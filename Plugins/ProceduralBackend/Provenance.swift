import BadgeKit
import Canvas
import Foundation

/// Checks where a procedural badge came from: re-renders it from the metadata
/// inside it and compares the pixels.
package enum Provenance {
    package struct Report: Sendable, Encodable {
        package var matches: Bool
        package var pixels: Int
        package var differingPixels: Int
        package var prompt: String
        /// A string of digits in JSON (LosslessUInt64).
        package var seed: LosslessUInt64
        /// The style drawn, and who chose it ("request", "prompt", "default"), as `badge show` has them.
        package var style: String
        package var styleSource: BadgeMetadata.StyleSource
        package var size: Int
        package var artEngine: String
    }

    /// Art engines this version of badge no longer draws, and the release that does.
    /// One engine is kept in the code: a badge drawn by an earlier one is redrawn
    /// by the release that drew it, not by a copy of that engine kept here.
    static let retired = ["art-engine 2": "0.2.0", "art-engine 3": "0.2.0", "art-engine 4": "0.2.0", "art-engine 5": "0.3.0"]

    /// The badge is opened once: its metadata and its pixels are read from the
    /// same descriptor, so what is verified is one file, whatever happens at
    /// its path meanwhile.
    package static func verify(_ url: URL) async throws -> Report {
        try await verified(url).report
    }

    /// `verify`'s report, the badge's metadata and the request it was drawn from.
    package static func verified(_ url: URL) async throws -> (report: Report, metadata: BadgeMetadata, request: BadgeRequest) {
        let file: RegularFile
        do {
            file = try RegularFile(url.path)
        } catch {
            throw BadgeError(.io, "cannot read the badge", path: url.path, cause: error.description, hint: "check the path")
        }
        guard let metadata = BadgeMetadata(entries: try PNG.readHeaderText(from: file, path: url.path)) else {
            throw BadgeError(.invalidImage, "the file carries no badge metadata", path: url.path,
                             hint: "only badges written by badge can be verified")
        }
        let request = try redrawable(metadata, path: url.path)
        // Room for the largest PNG of its size (a 4096 px tile of grain is ~27 MB).
        let limits = ImageLimits.default.admittingDrawing(side: request.size)
        let data = try readBadge(file, path: url.path, limit: limits.maxFileBytes)
        return (try await compared(data, metadata: metadata, request: request, limits: limits, path: url.path), metadata, request)
    }

    /// `verify` of a badge already read: its PNG bytes and the metadata in them.
    package static func verified(png data: Data, metadata: BadgeMetadata, source: String) async throws -> (report: Report, request: BadgeRequest) {
        let request = try redrawable(metadata, path: source)
        let limits = ImageLimits.default.admittingDrawing(side: request.size)
        return (try await compared(data, metadata: metadata, request: request, limits: limits, path: source), request)
    }

    /// The request a badge was drawn from, when this engine can draw it again.
    private static func redrawable(_ metadata: BadgeMetadata, path: String) throws -> BadgeRequest {
        guard metadata.backendType == ProceduralGenerator.type else {
            throw BadgeError(.unsupportedFormat, "this badge was made by the \(metadata.backendType) backend \"\(metadata.backend)\"; only procedural badges can be re-rendered",
                             path: path)
        }
        guard let model = metadata.model, model == ProceduralGenerator.artEngineVersion else {
            let drawnBy = metadata.model.map { OutsideText.printable($0) } ?? "an unknown art engine"
            let release = metadata.model.flatMap { retired[$0] }
            throw BadgeError(.unsupportedFormat, "this badge was drawn by \(drawnBy); this version of badge draws only with \(ProceduralGenerator.artEngineVersion)",
                             path: path,
                             hint: release.map { "verify it with badge \($0), which draws \(drawnBy)" } ?? "verify it with the version of badge that made it")
        }
        guard let seed = metadata.seed else {
            throw BadgeError(.invalidImage, "the badge's metadata has no seed", path: path)
        }
        let request = BadgeRequest(prompt: metadata.prompt, style: metadata.style, size: metadata.size, seed: seed,
                                   caption: metadata.extra["caption-text"])
        do {
            try request.validate()
        } catch let error as BadgeError {
            throw BadgeError(.invalidImage, "the badge's metadata asks for what no badge is: \(error.message)", path: path)
        }
        return request
    }

    /// The badge's pixels against a fresh rendering of `request`.
    private static func compared(
        _ data: Data, metadata: BadgeMetadata, request: BadgeRequest, limits: ImageLimits, path: String
    ) async throws -> Report {
        let art = BadgeArt(request: request, caption: metadata.extra["caption"] != "off", compression: 1)
        let model = ProceduralGenerator.artEngineVersion
        let seed = request.seed
        let (differing, style) = try await BlockingExecutor.run { () throws -> (Int, (name: String, source: BadgeMetadata.StyleSource)) in
            let original = try GDImage.decodePNG(data, limits: limits, source: path)
            let rendered = try art.render()
            // The style drawn, as the badge's metadata says, else as the fresh rendering's note says.
            let style = metadata.styleDrawn ?? BadgeMetadata.styleDrawn(asked: nil, note: rendered.notes["style"])
                ?? (BadgeArt.Style.medal.rawValue, .default)
            let fresh = try GDImage.decodePNG(rendered.png, limits: limits)
            guard original.width == fresh.width, original.height == fresh.height else { return (original.width * original.height, style) }
            var count = 0
            for y in 0..<fresh.height { for x in 0..<fresh.width where original.pixel(x, y) != fresh.pixel(x, y) { count += 1 } }
            return (count, style)
        }
        return Report(matches: differing == 0, pixels: metadata.size * metadata.size, differingPixels: differing,
                      prompt: metadata.prompt, seed: LosslessUInt64(seed), style: style.name,
                      styleSource: style.source, size: metadata.size,
                      artEngine: model)
    }

    /// The SVG of the badge at `url`, drawn again from its own metadata: only
    /// once a fresh rendering of it matches its PNG pixel for pixel, so the
    /// SVG is the picture that was committed. Its `<metadata>` is the PNG's.
    package static func vectorCopy(of url: URL) async throws -> (svg: Data, metadata: BadgeMetadata) {
        let (report, metadata, request) = try await verified(url)
        return (try await vectorCopy(metadata, request: request, report: report, path: url.path), metadata)
    }

    /// `vectorCopy` of a badge already read: its PNG bytes and the metadata in them.
    package static func vectorCopy(png data: Data, metadata: BadgeMetadata, source: String) async throws -> Data {
        let (report, request) = try await verified(png: data, metadata: metadata, source: source)
        return try await vectorCopy(metadata, request: request, report: report, path: source)
    }

    /// Whether a badge of this metadata can be drawn again as SVG here: a
    /// procedural badge of this art engine (its pixels are checked when it is).
    package static func isRedrawable(_ metadata: BadgeMetadata) -> Bool {
        metadata.backendType == ProceduralGenerator.type && metadata.model == ProceduralGenerator.artEngineVersion && metadata.seed != nil
    }

    private static func vectorCopy(_ metadata: BadgeMetadata, request: BadgeRequest, report: Report, path: String) async throws -> Data {
        guard report.matches else {
            throw BadgeError(.invalidImage, "the badge does not match a fresh rendering of its promise (\(report.differingPixels) of \(report.pixels) pixels differ), so an SVG of it would not be the same picture",
                             path: path, hint: "badge verify says more; a badge that was edited after it was made cannot be redrawn")
        }
        let generator = ProceduralGenerator(caption: metadata.extra["caption"] != "off")
        let image = try await generator.generateVector(request)
        let svg = image.document(metadata.textEntries)
        try SVGCheck.verify(svg, backend: metadata.backend)
        return svg
    }

    /// The whole file, from its start, through the descriptor its metadata
    /// was read from, unless it is larger than any badge of its size can be.
    private static func readBadge(_ file: borrowing RegularFile, path: String, limit: Int) throws -> Data {
        guard lseek(file.fd, 0, SEEK_SET) == 0 else {
            throw BadgeError(.io, "cannot read the badge", path: path, cause: BadgeError.errnoDescription(errno))
        }
        do {
            return try file.readAll(limit: limit)
        } catch let .tooLarge(size, limit) {
            throw BadgeError(.imageTooLarge, "the file is \(size) bytes; no badge of its size is larger than \(limit)", path: path)
        } catch {
            throw BadgeError(.io, "cannot read the badge", path: path, cause: error.description, hint: "check the path")
        }
    }
}
