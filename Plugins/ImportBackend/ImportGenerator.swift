import BadgeKit
import Canvas
import Foundation
import Synchronization

/// Makes a badge from a picture the user already has: checked by the intake
/// before anything decodes it, then fitted to the square badge.
package struct ImportGenerator: BadgeGenerator {
    package static let type = "import"

    /// Drawing is CPU work on this machine: one request per core.
    package var preferredConcurrency: Int? { ImageThreads.processorCount }

    package enum Fit: String, Sendable, CaseIterable {
        /// Fill the square, cropping the centre.
        case cover
        /// Show all of it, letterboxed on `background`.
        case contain
    }

    package var fit: Fit
    /// What shows behind the picture (letterbox bars, transparent pixels);
    /// nil: transparency kept for `cover`, white for `contain`.
    package var backdrop: GDImage.Backdrop?
    package var limits: ImageLimits
    package var workingDirectory: URL
    /// Reads standard input for the source "-" (a seam for tests).
    package var readStandardInput: @Sendable (Int) throws -> Data

    package init(
        fit: Fit = .cover, background: RGBA? = nil, backdrop: GDImage.Backdrop? = nil, limits: ImageLimits = .default,
        workingDirectory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
        readStandardInput: @escaping @Sendable (Int) throws -> Data = ImportGenerator.readStandardInput
    ) {
        self.fit = fit
        self.backdrop = backdrop ?? background.map { .color($0) }
        self.limits = limits
        self.workingDirectory = workingDirectory
        self.readStandardInput = readStandardInput
    }

    package static func register(in registry: inout BackendRegistry, limits: ImageLimits) {
        registry.register(type, summary: "imports a picture you already have (PNG, JPEG, GIF, WebP)") { config, environment in
            let options = config.options
            try options.allowOnly(["type", "fit", "background"])
            var backdrop: GDImage.Backdrop?
            if let value = options.value("background") {
                let text = try value.string()
                guard let parsed = Self.backdrop(named: text) else {
                    throw value.error(Self.backgroundProblem, hint: Self.backgroundHint)
                }
                backdrop = parsed
            }
            return ImportGenerator(
                fit: Fit(rawValue: try options.value("fit")?.oneOf(Fit.allCases.map(\.rawValue)) ?? "cover")!,
                backdrop: backdrop, limits: limits, workingDirectory: environment.workingDirectory)
        }
    }

    package func availability() async -> Availability { .available }

    /// `--option fit=...` and `--option background=...` override the configuration per request.
    package var requestOptionKeys: Set<String>? { ["fit", "background"] }
    /// A picture is imported as it is: `--style` does not apply.
    package var styles: [String]? { [] }
    package var readsSource: Bool { true }

    static let backgroundProblem = "expected a colour as \"#RRGGBB\", \"blur\" or \"transparent\""
    static let backgroundHint = "e.g. \"#FFFFFF\"; \"blur\" letterboxes on a blurred copy of the picture"

    static func backdrop(named text: String) -> GDImage.Backdrop? {
        switch text {
        case "transparent": return .transparent
        case "blur": return .blurred
        default: return RGBA(hex: text).map { .color($0) }
        }
    }

    /// Its keys, and values `applying` takes.
    package func checkRequestOptions(_ options: [String: String], backend: String) throws {
        try checkRequestOptionKeys(options, backend: backend)
        do {
            _ = try applying(options)
        } catch var error as BadgeError {
            error.backend = backend
            throw error
        }
    }

    /// This generator with the request's `fit` and `background` options applied.
    func applying(_ options: [String: String]) throws -> ImportGenerator {
        var copy = self
        if let text = options["fit"] {
            guard let fit = Fit(rawValue: text) else {
                let names = Fit.allCases.map(\.rawValue)
                let near = ConfigObject.closest(to: text, in: names).map { "did you mean \"\($0)\"? " } ?? ""
                throw BadgeError(.usage, "\(RequestOptionNaming.setting("fit", text)): expected one of \(names.joined(separator: ", "))",
                                 hint: near + "cover fills the square, contain shows the whole picture")
            }
            copy.fit = fit
        }
        if let text = options["background"] {
            guard let backdrop = Self.backdrop(named: text) else {
                throw BadgeError(.usage, RequestOptionNaming.setting("background", text) + ": " + Self.backgroundProblem, hint: Self.backgroundHint)
            }
            copy.backdrop = backdrop
        }
        return copy
    }

    package func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
        try request.validate()
        let generator = try applying(request.options)
        return try await generator.importPicture(request, in: workspace)
    }

    private func importPicture(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
        guard let source = request.source, !source.isEmpty else {
            throw BadgeError(.usage, "the import backend needs a picture", hint: "pass --source FILE (or - for standard input)")
        }
        let limits = self.limits
        let read: @Sendable () throws -> Data
        let origin: String
        if source == "-" {
            origin = "standard input"
            read = { [readStandardInput] in try readStandardInput(limits.maxFileBytes + 1) }
        } else {
            let path = BadgeConfig.resolvePath(source, relativeTo: workingDirectory).path
            origin = path
            read = { try RegularFile.picture(at: path, limit: limits.maxFileBytes) }
        }
        let fit = self.fit
        let backdrop = self.backdrop ?? (fit == .cover ? .transparent : .color(.white))
        // Read, and through the intake on the same thread: a picture it refuses costs nothing more.
        let (picture, header) = try await BlockingExecutor.run {
            let bytes = try read()
            return (PictureBytes(bytes), try ImageIntake(limits: limits).inspect(bytes, accepting: Set(ImageFormat.allCases), source: origin))
        }
        var extra = Self.provenance(of: picture.bytes)
        // Which picture, by its bytes: a file's name ("holiday-GPS.jpg") can say more than the user means
        // to share. Hashed on a thread of its own while the other decodes (the decode uses one core).
        // The bytes are taken for the hash here, before the decode can take them: read inside the
        // child task, they were at times already gone, and the hash was the empty file's.
        let hashed = picture.bytes
        async let digest = BlockingExecutor.run { [hashed] in try BatchHash.sha256(hashed) }
        let encoded = try await BlockingExecutor.run { () throws -> (png: Data, inflated: PNGDataCheck.Inflated?) in
            // Each stage's image is released as soon as the next exists, and the file's bytes once decoded
            // (once hashed too): a photo's decode is the largest thing this process holds, and it must be
            // gone before the encoding starts.
            let canvas = try { () throws -> Canvas in
                let square = try GDImage.decode(picture.take(), inspected: header, source: origin,
                                                fitting: .init(side: request.size, cover: fit == .cover))
                    .squared(side: request.size, contain: fit == .contain, backdrop: backdrop)
                return try Canvas(square)
            }()
            // badge's deflate (level 2, both cores), with libdeflate's check of each band beside it.
            return try PNGEncoder.encodeInflating(canvas, inflating: true)
        }
        let file = try workspace.write(encoded.png, to: "badge.png")
        extra["source-sha256"] = try await digest
        // The picture was decoded in full above, under the intake's limits; what is committed is
        // this process's own encoding of those pixels, checked as the procedural drawing's is.
        return GeneratedImage(encodedInProcess: file, model: "import (\(fit.rawValue))", extra: extra,
                              bytes: encoded.png, inflated: encoded.inflated)
    }

    /// A picture's bytes, held until the decode takes them: a photo's file
    /// (6 MB for 12 MP) is then freed before the encoding starts, once every
    /// other reader (the hash) is done with it, rather than at the end.
    private final class PictureBytes: Sendable {
        private let held: Mutex<Data>

        init(_ bytes: Data) { held = Mutex(bytes) }

        /// The bytes, while they are held (empty once taken).
        var bytes: Data { held.withLock { $0 } }

        /// The bytes, no longer held here.
        func take() -> Data {
            held.withLock { bytes in
                defer { bytes = Data() }
                return bytes
            }
        }
    }

    /// What other generators wrote into a PNG about how it was made: the
    /// prompt and settings of AUTOMATIC1111 (`parameters`), ComfyUI (`prompt`,
    /// `workflow`), or an earlier badge. Only these text chunks are read; EXIF
    /// and anything else personal are never carried over.
    static func provenance(of data: Data) -> [String: String] {
        if ImageIntake.sniff(data) == .accepted(.jpeg) {
            // AUTOMATIC1111 writes its parameters into a JPEG's EXIF UserComment. Anything
            // else there (a camera owner's note) is personal and stays behind.
            guard let comment = ExifUserComment.read(fromJPEG: data), ExifUserComment.looksLikeGeneratorParameters(comment)
            else { return [:] }
            return ["source-parameters": String(comment.prefix(2000))]
        }
        guard ImageIntake.sniff(data) == .accepted(.png), let chunks = try? PNG.chunks(in: data, verifyCRC: false) else { return [:] }
        let entries = chunks.filter { $0.type == "tEXt" || $0.type == "iTXt" }.compactMap(PNG.textEntry)
        var found: [String: String] = [:]
        func keep(_ key: String, _ text: String) { found[key] = String(text.prefix(2000)) }
        for entry in entries {
            switch entry.keyword {
            case "parameters": keep("source-parameters", entry.text)
            case "prompt": keep("source-comfyui-prompt", entry.text)
            case "workflow": keep("source-comfyui-workflow", entry.text)
            default: break
            }
        }
        if let badge = BadgeMetadata(entries: entries) {
            keep("source-badge-id", badge.id)
            keep("source-badge-prompt", badge.prompt)
            keep("source-badge-commitment-date", badge.commitmentDateString)
        }
        return found
    }

    package static let readStandardInput: @Sendable (Int) throws -> Data = { limit in
        let data = try BadgeKit.readStandardInput(limit: limit)
        if data.count >= limit {
            throw BadgeError(.imageTooLarge, "standard input holds more than \(limit - 1) bytes",
                             hint: "raise intake.maxFileBytes in the configuration")
        }
        return data
    }
}
