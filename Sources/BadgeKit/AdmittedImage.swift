import Foundation
import Logging

/// An image the intake has admitted: a PNG whose format (by its bytes),
/// header, limits and chunk CRCs the intake checked. What a backend made is
/// also decoded in full by the environment's decoder unless this process
/// encoded it, converted to a PNG of the size asked for when it was anything
/// else, and otherwise rebuilt as a still picture (`PNG.stillImage`) unless
/// this process encoded it. Its metadata is what the intake learned (the request, the
/// backend, the size read from the header), not yet stamped into the bytes.
///
/// The second stage of every badge: a backend's ``GeneratedImage`` becomes
/// one here, and an `AdmittedImage` becomes a ``CheckedBadge`` only by
/// stamping and the PNG check (`CheckedBadge.init(stamping:into:)`).
///
/// Only this file makes one. Swift has no friend access, so the rule is held
/// by access control: the initialiser is `fileprivate`, the properties'
/// setters are `private` (so an initialiser written in another file, even an
/// extension in BadgeKit, cannot assign them), and the two intakes that
/// call it live here: ``ImageIntake/admit(_:madeWith:source:)`` for a PNG
/// badge made earlier and `Pipeline.admit(_:for:backend:commitment:workspace:elapsed:)`
/// for what a backend made.
package struct AdmittedImage: Sendable {
    /// The PNG's bytes, not yet stamped.
    package private(set) var png: Data
    /// What the intake read from the header: format PNG, and the dimensions.
    package private(set) var header: ImageIntake.Header
    /// What the intake knows about the image; `size` is the header's width.
    package private(set) var metadata: BadgeMetadata
    /// zlib's check of the image data made while this process encoded it, if
    /// it was: `CheckedBadge` compares the stamped bytes with it.
    package private(set) var inflated: PNGDataCheck.Inflated?

    fileprivate init(png: Data, header: ImageIntake.Header, metadata: BadgeMetadata, inflated: PNGDataCheck.Inflated? = nil) {
        var metadata = metadata
        metadata.size = header.width
        self.png = png
        self.header = header
        self.metadata = metadata
        self.inflated = inflated
    }
}

extension ImageIntake {
    /// The intake of a PNG badge made earlier (a batch's output read back, a
    /// candidate picked): the header, the limits and every chunk's CRC
    /// checked, as for any image. `metadata` is what it was made with; its
    /// size becomes the header's width.
    package func admit(_ png: Data, madeWith metadata: BadgeMetadata, source: String? = nil) throws -> AdmittedImage {
        let header = try inspect(png, accepting: [.png], source: source)
        return AdmittedImage(png: png, header: header, metadata: metadata)
    }
}

extension Pipeline {
    /// The intake of a badge made earlier, within this pipeline's limits
    /// (with room for any PNG of its size this process encoded); `source` is the
    /// file it was read from, for the errors.
    package func admit(_ png: Data, madeWith metadata: BadgeMetadata, source: String? = nil) throws -> AdmittedImage {
        try ImageIntake(limits: limits.admittingDrawing(side: metadata.size)).admit(png, madeWith: metadata, source: source)
    }

    /// The intake of one image a backend made in `workspace`: its notes logged,
    /// its bytes read (once), format and size read from them, an untrusted
    /// image decoded in full, and anything but a PNG of the asked size
    /// converted.
    func admit(
        _ image: GeneratedImage, for request: BadgeRequest, backend: BackendInstance, commitment: Commitment, workspace: Workspace,
        elapsed: Duration
    ) async throws -> AdmittedImage {
        let log = environment.logger
        // With the backend's own notes: which words chose the motif, the palette and the style.
        var finished: Logger.Metadata = ["backend": "\(backend.name)", "elapsed": "\(elapsed)", "model": "\(image.model ?? "-")"]
        for (key, value) in image.extra { finished[key] = "\(value)" }
        log.debug("backend finished", metadata: finished)
        // A backend's "warning" note is for the user: what it could not do, and what to install.
        // The backend leads the line, as the configuration's warnings do: a note that ends in an
        // option ("give a shorter one with --caption") is not followed by a key=value.
        if let warning = image.extra["warning"] {
            log.warning("backend \"\(OutsideText.printable(backend.name, keepingNewlines: false))\": \(OutsideText.printable(warning, keepingNewlines: false))")
        }
        try Task.checkCancellation()
        guard workspace.contains(image.file) else {
            throw BadgeError(.generationFailed, "the backend returned a file outside its workspace", backend: backend.name,
                             path: image.file.path)
        }
        var data: Data
        if let bytes = image.bytes {
            data = bytes
        } else {
            do {
                let limit = (image.isEncodedInProcess ? limits.admittingDrawing(side: request.size) : limits).maxFileBytes
                data = try RegularFile.contents(of: image.file.path, followSymlinks: false, limit: limit)
            } catch .tooLarge(let size, let limit) {
                throw BadgeError(.imageTooLarge, "the image is \(size) bytes; the limit is \(limit)", backend: backend.name,
                                 path: image.file.path, hint: "raise intake.maxFileBytes in the configuration, or use a smaller file")
            } catch {
                throw BadgeError(.generationFailed, "the backend reported an image file it did not write", backend: backend.name,
                                 path: image.file.path, cause: error.description)
            }
        }
        let intake = ImageIntake(limits: image.isEncodedInProcess ? limits.admittingDrawing(side: request.size) : limits)
        var header: ImageIntake.Header
        do {
            header = try intake.inspect(data, accepting: Set(ImageFormat.allCases))
        } catch let error as BadgeError {
            throw error.attributed(to: backend.name)
        }
        log.debug("intake passed", metadata: [
            "format": "\(header.format.rawValue)", "width": "\(header.width)", "height": "\(header.height)", "bytes": "\(data.count)",
        ])
        let fits = header.format == .png && header.width == request.size && header.height == request.size
        if !image.isEncodedInProcess || !fits {
            guard let decoder = environment.decoder else {
                if fits || header.format == .png {
                    return AdmittedImage(png: try outsidePNG(data, image), header: header,
                                         metadata: metadata(for: request, image, backend, commitment))
                }
                throw BadgeError(.unsupportedFormat, "the backend made a \(header.format.rawValue.uppercased()) image and nothing here can convert it",
                                 backend: backend.name, hint: "make the backend write PNG")
            }
            // Decoding counts against the backend's time limit, and Ctrl-C ends it.
            let stop = DecodeStop(deadline: image.deadline)
            do {
                if fits {
                    try await withTaskCancellationHandler {
                        try await decoder.validate(data, header: header, stop: stop)
                    } onCancel: { stop.stop() }
                    data = try outsidePNG(data, image)
                } else {
                    // A JPEG, a WebP, or a picture of another size becomes the PNG badge the user asked for.
                    let input = data
                    data = try await withTaskCancellationHandler {
                        try await decoder.normalized(input, header: header, side: request.size, stop: stop)
                    } onCancel: { stop.stop() }
                    header = ImageIntake.Header(format: .png, width: request.size, height: request.size)
                    log.debug("converted", metadata: ["to": "png \(header.width)×\(header.height)", "bytes": "\(data.count)"])
                }
            } catch let error as BadgeError {
                throw error.attributed(to: backend.name)
            }
        }
        return AdmittedImage(png: data, header: header, metadata: metadata(for: request, image, backend, commitment),
                             inflated: image.inflated)
    }

    /// A PNG kept at its size is rebuilt unless this process encoded it: cut to
    /// the chunks of a still picture (`PNG.stillImage`), so nothing a server,
    /// a plugin or an imported file carried beside its pixels is committed.
    private func outsidePNG(_ data: Data, _ image: GeneratedImage) throws -> Data {
        image.isEncodedInProcess ? data : try PNG.stillImage(data)
    }

    /// What the intake records of an image: the request, the backend and what
    /// it said, and the commitment (its size is the header's, set by `AdmittedImage`).
    private func metadata(
        for request: BadgeRequest, _ image: GeneratedImage, _ backend: BackendInstance, _ commitment: Commitment
    ) -> BadgeMetadata {
        let now = environment.now()
        return BadgeMetadata(
            commitmentDate: commitment.date ?? now, timeZone: commitment.timeZone.identifier, createdAt: now,
            prompt: request.prompt, backend: backend.name, backendType: backend.type, style: request.style,
            size: request.size, seed: image.seed ?? request.seed, model: image.model.map { Self.kept($0, atMost: Self.maxModelLength) },
            revisedPrompt: image.revisedPrompt.map { Self.kept($0, atMost: Self.maxRevisedPromptLength) },
            extra: image.extra.mapValues { Self.kept($0, atMost: Self.maxExtraValueLength) })
    }

    /// The longest model name, revised prompt and metadata value a badge
    /// keeps (in characters): a backend's words are stored in the PNG,
    /// printed by `show` and sent by the studio.
    package static let maxModelLength = 256
    package static let maxRevisedPromptLength = 4000
    package static let maxExtraValueLength = 2000

    /// What a backend said, as a badge keeps it: without control characters
    /// (other tools read the PNG's text unfiltered) and cut at `limit`
    /// Unicode scalars, "…" marking the cut. Scalars, not characters: one
    /// character may hold millions of combining marks.
    static func kept(_ text: String, atMost limit: Int) -> String {
        let printable = OutsideText.printable(text)
        guard printable.unicodeScalars.count > limit else { return printable }
        var cut = String.UnicodeScalarView(printable.unicodeScalars.prefix(limit - 1))
        cut.append("…")
        return String(cut)
    }
}
