import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Testing
@testable import ImportBackend

/// JPEG, GIF and WebP: read by their bytes, checked before decoding, refused
/// when truncated or when their headers claim enormous sizes.
@Suite(.threadsOfTheirOwn)
struct FormatTests {
    static func picture() throws -> GDImage {
        let canvas = try Canvas(width: 120, height: 80, background: RGBA(30, 90, 200))
        canvas.fill(.circle(center: Point(60, 40), radius: 30), with: .solid(RGBA(250, 200, 40)))
        return try GDImage(canvas)
    }

    static func encoded(_ format: ImageFormat) throws -> Data {
        let image = try picture()
        switch format {
        case .png: return try image.pngData()
        case .jpeg: return try image.jpegData()
        case .gif: return try image.gifData()
        case .webp: return try image.webpData()
        }
    }

    /// The badge's header, as the intake reads it.
    private func importing(_ data: Data, named name: String) async throws -> ImageIntake.Header {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("badge-formats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent(name)
        try data.write(to: file)
        let (_, png, _) = try await GeneratorConformance.generateOnce(
            ImportGenerator(), BadgeRequest(prompt: "p", size: 64, source: file.path))
        let header = try ImageIntake().inspect(png)
        #expect(header.format == .png, "the badge itself is always a PNG")
        return header
    }

    @Test(arguments: [ImageFormat.jpeg, .gif, .webp])
    func everyAcceptedFormatImportsWhateverItsName(format: ImageFormat) async throws {
        let data = try Self.encoded(format)
        #expect(try ImageIntake().inspect(data, accepting: Set(ImageFormat.allCases)) == ImageIntake.Header(format: format, width: 120, height: 80))
        let badge = try await importing(data, named: "holiday.png")  // the name lies; the bytes decide
        #expect(badge.width == 64 && badge.height == 64)
        // The middle of the picture is the yellow disc, wherever the format took it.
        let decoded = try GDImage.decode(data)
        let centre = decoded.pixel(60, 40)
        #expect(centre.r > 200 && centre.g > 150 && centre.b < 120, "\(format): \(centre)")
    }

    /// libjpeg-turbo decodes at the smallest M/8 of the size that still covers the badge.
    @Test func bigJPEGsAreDecodedOnlyAsLargeAsTheBadgeNeeds() throws {
        let canvas = try Canvas(width: 1600, height: 1200, background: RGBA(30, 90, 200))
        canvas.fill(.circle(center: Point(800, 600), radius: 400), with: .solid(RGBA(250, 200, 40)))
        let data = try GDImage(canvas).jpegData(quality: 90)
        #expect(try GDImage.decode(data).width == 1600)
        // cover measures the short side (1200), contain the long one (1600).
        let cases: [(side: Int, cover: Bool, width: Int)] = [
            (1024, true, 1400), (512, true, 800), (300, true, 400), (150, true, 200), (64, true, 200), (1200, true, 1600),
            (1024, false, 1200), (512, false, 600), (400, false, 400), (200, false, 200),
        ]
        for c in cases {
            let image = try GDImage.decode(data, fitting: .init(side: c.side, cover: c.cover))
            #expect(image.width == c.width && image.height == c.width * 3 / 4, "\(c): \(image.width)×\(image.height)")
        }
        // The badge made from the scaled decode looks like the one made from the full decode.
        let full = try GDImage.decode(data).squared(side: 300, contain: false, background: .white)
        let scaled = try GDImage.decode(data, fitting: .init(side: 300, cover: true)).squared(side: 300, contain: false, background: .white)
        var difference = 0
        for y in stride(from: 0, to: 300, by: 3) {
            for x in stride(from: 0, to: 300, by: 3) {
                let a = full.pixel(x, y), b = scaled.pixel(x, y)
                difference += abs(Int(a.r) - Int(b.r)) + abs(Int(a.g) - Int(b.g)) + abs(Int(a.b) - Int(b.b))
            }
        }
        #expect(Double(difference) / (100 * 100 * 3) < 3, "mean difference per channel")
        // A damaged file is refused on this path too.
        let cut = data.prefix(data.count * 2 / 3)
        let error = #expect(throws: BadgeError.self) { try GDImage.decode(Data(cut), fitting: .init(side: 300, cover: true)) }
        #expect(error?.code == .invalidImage)
        #expect(error?.message == "the JPEG is truncated (it has no end-of-image marker)", "\(String(describing: error))")
        #expect(error?.hint?.contains("cut short") == true, "\(String(describing: error))")
    }

    /// Whatever a backend hands over (a JPEG from a model, a picture of another
    /// size) passes the same intake and becomes the PNG badge of the size asked for.
    @Test(arguments: [ImageFormat.jpeg, .webp, .gif, .png])
    func anyBackendsImageBecomesThePNGBadgeAskedFor(format: ImageFormat) async throws {
        let environment = BadgeEnvironment(variables: [:], decoder: GDImageDecoder())
        let backend = BackendInstance(name: "model", type: "fake", generator: FakeGenerator(.writes(try Self.encoded(format))))
        let badge = try await Pipeline(environment: environment).render(
            BadgeRequest(prompt: "p", size: 96, seed: 1), backend: backend, commitment: .init(timeZone: .gmt))
        let png = badge.png, metadata = badge.metadata
        #expect(try ImageIntake().inspect(png) == ImageIntake.Header(format: .png, width: 96, height: 96))
        #expect(metadata.size == 96)
        let centre = try GDImage.decode(png).pixel(48, 48)
        #expect(centre.r > 200 && centre.g > 150 && centre.b < 120, "\(format): the yellow disc is still in the middle: \(centre)")

        let cut = FakeGenerator(.writes(Data(try Self.encoded(format).prefix(300))))
        do {
            _ = try await Pipeline(environment: environment).render(
                BadgeRequest(prompt: "p", size: 96, seed: 1), backend: BackendInstance(name: "model", type: "fake", generator: cut),
                commitment: .init(timeZone: .gmt))
            Issue.record("a truncated \(format) from a backend must be refused")
        } catch let error as BadgeError {
            #expect(error.backend == "model" && error.code == .invalidImage, "\(error)")
            // The reason names the format and that the file is cut short.
            #expect(error.message.lowercased().contains(format.rawValue), "\(error)")
            #expect("\(error.message) \(error.hint ?? "")".contains("truncated"), "\(error)")
        }
    }

    @Test(arguments: [ImageFormat.jpeg, .gif])
    func truncatedFilesAreRefused(format: ImageFormat) async throws {
        let data = try Self.encoded(format)
        let cut = data.prefix(data.count * 2 / 3)
        do {
            _ = try await importing(Data(cut), named: "cut.\(format.rawValue)")
            Issue.record("a truncated \(format) must be refused")
        } catch let error as BadgeError {
            #expect([.invalidImage].contains(error.code), "\(error)")
            #expect(error.path?.hasSuffix("cut.\(format.rawValue)") == true)
        }
    }

    /// A few kilobytes whose headers claim gigapixels: refused from the header alone.
    @Test(arguments: [ImageFormat.png, .gif, .jpeg, .webp])
    func decodeBombsAreRefusedBeforeDecoding(format: ImageFormat) throws {
        var bytes = [UInt8](try Self.encoded(format))
        switch format {
        case .png:
            var chunks = try PNG.chunks(in: Data(bytes))
            var ihdr = [UInt8](chunks[0].data)
            ihdr[0...7] = [0, 0, 0x4E, 0x20, 0, 0, 0x4E, 0x20]  // 20000 × 20000
            chunks[0].data = Data(ihdr)
            bytes = [UInt8](PNG.assemble(chunks))
        case .gif:
            bytes[6...9] = [0xFF, 0xFF, 0xFF, 0x7F]  // 65535 × 32767
        case .jpeg:
            let sof = try #require((2..<(bytes.count - 9)).first { bytes[$0] == 0xFF && [0xC0, 0xC1, 0xC2].contains(bytes[$0 + 1]) })
            bytes[(sof + 5)...(sof + 8)] = [0xB3, 0xB0, 0xB3, 0xB0]  // 46000 × 46000
        case .webp:
            // A VP8 frame header claiming 16383 × 16383.
            bytes[26...29] = [0xFF, 0x3F, 0xFF, 0x3F]
        }
        #expect(bytes.count < 64 << 10)
        do {
            _ = try GDImage.decode(Data(bytes))
            Issue.record("a \(format) bomb must be refused")
        } catch let error as BadgeError {
            let claimed: [ImageFormat: String] = [.png: "20000×20000", .gif: "65535×32767", .jpeg: "46000×46000", .webp: "16383×16383"]
            #expect(error.code == .imageTooLarge, "\(format): \(error)")
            #expect(error.message == "the image is \(claimed[format]!); the limit is 8192 pixels a side", "\(format): \(error)")
            #expect(error.hint?.contains("intake.maxSide") == true, "\(format): \(error)")
        }
    }

    @Test(arguments: [
        ("BM\u{0}\u{0}\u{0}\u{0}", "a BMP image"),
        ("II*\u{0}xxxx", "a TIFF image"),
        ("\u{0}\u{0}\u{0}\u{1C}ftypavif", "an AVIF image"),
        ("<svg xmlns=\"http://www.w3.org/2000/svg\"/>", "an SVG or XML document"),
    ])
    func refusedFormatsAreNamed(text: String, what: String) throws {
        do {
            _ = try GDImage.decode(Data(text.utf8) + Data(count: 32))
            Issue.record("\(what) must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .unsupportedFormat)
            #expect(error.message.contains(what), "\(error)")
        }
    }

    /// Formats without a text signature: TGA (by its footer, or its header alone) and libgd's GD.
    @Test func tgaAndGDAreNamedToo() throws {
        let tgaHeader: [UInt8] = [0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 32, 0, 24, 0x20]
        let pixels = [UInt8](repeating: 0x7F, count: 64 * 32 * 3)
        let tga1 = Data(tgaHeader + pixels)
        let tga2 = Data(tgaHeader + pixels + [UInt8](repeating: 0, count: 8) + Array("TRUEVISION-XFILE.\0".utf8))
        let gd = Data([0xFF, 0xFE, 0, 64, 0, 32, 1] + pixels)
        for (data, what) in [(tga1, "a TGA image"), (tga2, "a TGA image"), (gd, "a GD image")] {
            #expect(ImageIntake.sniff(data) == .refused(what))
            do {
                _ = try ImageIntake().inspect(data, accepting: Set(ImageFormat.allCases))
                Issue.record("\(what) must be refused")
            } catch let error as BadgeError {
                #expect(error.code == .unsupportedFormat && error.message.contains(what), "\(error)")
            }
        }
        // Plain text is not mistaken for a TGA.
        #expect(ImageIntake.sniff(Data("name,prompt\nalice,Run a marathon\n".utf8)) == .unknown)
    }

    @Test func animatedWebPIsRefused() throws {
        var bytes = [UInt8]("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8X".utf8)
        bytes += [10, 0, 0, 0, 0x02, 0, 0, 0, 9, 0, 0, 9, 0, 0] + [UInt8](repeating: 0, count: 16)
        do {
            _ = try GDImage.decode(Data(bytes))
            Issue.record("an animated WebP must be refused")
        } catch let error as BadgeError {
            #expect(error.message.contains("animated WebP"))
        }
    }
}

/// Phone photos carry their orientation in EXIF; the badge shows them upright.
@Suite(.threadsOfTheirOwn)
struct OrientationTests {
    /// A JPEG stored so that, shown as `orientation` says, a red marker is top-left.
    /// Where the marker must be stored is written out by hand, from what each
    /// orientation means (6: the stored picture is turned 90° clockwise to be
    /// shown, so its bottom-left corner becomes the top-left), not computed.
    static func storedJPEG(orientation: Int, scale k: Int = 1) throws -> Data {
        let swaps = orientation >= 5
        let (sw, sh) = swaps ? (24 * k, 48 * k) : (48 * k, 24 * k)  // stored size; shown is always 48k×24k
        let corner: (Bool, Bool)  // (right, bottom) of the stored picture
        switch orientation {
        case 2: corner = (true, false)
        case 3: corner = (true, true)
        case 4: corner = (false, true)
        case 5: corner = (false, false)
        case 6: corner = (false, true)
        case 7: corner = (true, true)
        case 8: corner = (true, false)
        default: corner = (false, false)
        }
        let stored = try Canvas(width: sw, height: sh, background: RGBA(20, 40, 200))
        let m = Double(12 * k)
        stored.fill(.roundedRect(x: corner.0 ? Double(sw) - m : 0, y: corner.1 ? Double(sh) - m : 0, width: m, height: m, radius: 0),
                    with: .solid(RGBA(230, 20, 20)))
        var jpeg = [UInt8](try GDImage(stored).jpegData(quality: 95))
        // APP1 Exif, big-endian TIFF, one IFD0 entry: Orientation (0x0112), SHORT, 1.
        let tiff: [UInt8] = [0x4D, 0x4D, 0, 0x2A, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, UInt8(orientation), 0, 0, 0, 0, 0, 0]
        let payload = Array("Exif\0\0".utf8) + tiff
        let length = payload.count + 2
        jpeg.insert(contentsOf: [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload, at: 2)
        return Data(jpeg)
    }

    @Test(arguments: 1...8)
    func theTopLeftMarkerEndsUpTopLeft(orientation: Int) throws {
        let data = try Self.storedJPEG(orientation: orientation)
        #expect(ImageIntake.jpegOrientation(data) == orientation)
        Self.expectMarkerTopLeft(try GDImage.decode(data), scale: 1, orientation: orientation)
    }

    /// A marker may be preceded by any number of 0xFF fill bytes (ITU T.81 B.1.1.2):
    /// the EXIF segment behind them is still found, as libjpeg finds it.
    @Test func fillBytesBeforeTheExifSegmentAreSkipped() throws {
        var bytes = [UInt8](try Self.storedJPEG(orientation: 6))
        bytes.insert(contentsOf: [0xFF, 0xFF, 0xFF], at: 2)
        #expect(ImageIntake.jpegOrientation(Data(bytes)) == 6)
        Self.expectMarkerTopLeft(try GDImage.decode(Data(bytes)), scale: 1, orientation: 6)
    }

    /// The shown picture is 48k×24k with the red marker in its top-left corner and blue elsewhere.
    static func expectMarkerTopLeft(_ image: GDImage, scale k: Int, orientation: Int) {
        #expect(image.width == 48 * k && image.height == 24 * k, "orientation \(orientation): \(image.width)×\(image.height)")
        let corner = image.pixel(3 * k, 3 * k), opposite = image.pixel(44 * k + k / 2, 20 * k + k / 2)
        #expect(corner.r > 180 && corner.b < 100, "orientation \(orientation): top-left is \(corner)")
        #expect(opposite.b > 150 && opposite.r < 100, "orientation \(orientation): bottom-right is \(opposite)")
    }

    /// Shrink-on-load turns the picture while it copies the scaled pixels: the same result.
    @Test(arguments: 1...8)
    func theMarkerEndsUpTopLeftWhenDecodedAtAQuarter(orientation: Int) throws {
        let data = try Self.storedJPEG(orientation: orientation, scale: 8)
        Self.expectMarkerTopLeft(try GDImage.decode(data, fitting: .init(side: 48, cover: true)), scale: 2, orientation: orientation)
    }

    /// Found while writing the fuzz harness (its seed corpus keeps the input): an
    /// APP1 segment shorter than its own "Exif" header was sliced backwards and trapped.
    @Test(arguments: 2...7)
    func anExifSegmentShorterThanItsHeaderIsIgnored(length: Int) throws {
        let bytes = [0xFF, 0xD8, 0xFF, 0xE1, 0, UInt8(length)] + Array("Exif\0\0".utf8) + [UInt8](repeating: 0, count: 10)
        #expect(ImageIntake.jpegOrientation(Data(bytes)) == 1)
        #expect(ImageIntake.jpegOrientation(Data([0x00] + bytes).dropFirst()) == 1)
        // The marker walk skips the short segment and lands inside "Exif".
        let error = #expect(throws: BadgeError.self) { try ImageIntake().inspect(Data(bytes), accepting: Set(ImageFormat.allCases)) }
        #expect(error?.code == .invalidImage)
        #expect(error?.message == "the JPEG is corrupt (no marker at byte \(4 + length))", "\(String(describing: error))")
    }
}

/// What other generators said about a picture comes along; nothing personal does.
@Suite(.threadsOfTheirOwn)
struct ProvenanceImportTests {
    @Test func promptsFromOtherGeneratorsAreKeptAndExifIsNot() async throws {
        var chunks = try PNG.chunks(in: try GDImage(try Canvas(width: 40, height: 40, background: .white)).pngData())
        func text(_ keyword: String, _ value: String) -> PNGChunk {
            var data = Data(keyword.utf8)
            data.append(0)
            data.append(contentsOf: value.utf8)
            return PNGChunk(type: "tEXt", data: data)
        }
        chunks.insert(text("parameters", "a lighthouse at dawn\nSteps: 20, Sampler: Euler a, Seed: 1234"), at: 1)
        chunks.insert(text("prompt", #"{"3": {"class_type": "KSampler"}}"#), at: 1)
        chunks.insert(PNGChunk(type: "eXIf", data: Data("GPS 52.52N 13.40E".utf8)), at: 1)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("badge-provenance-\(UUID().uuidString).png")
        try PNG.assemble(chunks).write(to: dir)
        defer { try? FileManager.default.removeItem(at: dir) }
        let (image, png, _) = try await GeneratorConformance.generateOnce(ImportGenerator(), BadgeRequest(prompt: "p", size: 64, source: dir.path))
        #expect(image.extra["source-parameters"]?.hasPrefix("a lighthouse at dawn") == true)
        #expect(image.extra["source-comfyui-prompt"]?.contains("KSampler") == true)
        let out = try PNG.chunks(in: png)
        #expect(!out.contains { $0.type == "eXIf" })
        #expect(!String(decoding: png, as: UTF8.self).contains("GPS"))
    }

    /// A JPEG with an EXIF block as cameras and AUTOMATIC1111 write it: IFD0
    /// pointing to an Exif IFD (UserComment) and a GPS IFD (latitude "N").
    static func jpeg(userComment prefix: String, _ text: [UInt8]) throws -> Data {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { u16(v >> 16) + u16(v & 0xFFFF) }
        let comment = Array(prefix.utf8) + [UInt8](repeating: 0, count: 8 - prefix.utf8.count) + text
        var tiff: [UInt8] = Array("MM".utf8) + u16(42) + u32(8)
        tiff += u16(2) + u16(0x8769) + u16(4) + u32(1) + u32(38) + u16(0x8825) + u16(4) + u32(1) + u32(56) + u32(0)
        tiff += u16(1) + u16(0x9286) + u16(7) + u32(comment.count) + u32(74) + u32(0)
        tiff += u16(1) + u16(0x0001) + u16(2) + u32(2) + Array("N".utf8) + [0, 0, 0] + u32(0)
        tiff += comment
        var jpeg = [UInt8](try GDImage(try Canvas(width: 64, height: 48, background: RGBA(200, 90, 30))).jpegData())
        let payload = Array("Exif\0\0".utf8) + tiff
        jpeg.insert(contentsOf: [0xFF, 0xE1] + u16(payload.count + 2) + payload, at: 2)
        return Data(jpeg)
    }

    private func imported(_ data: Data) async throws -> (GeneratedImage, Data) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("badge-exif-\(UUID().uuidString).jpg")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (image, png, _) = try await GeneratorConformance.generateOnce(ImportGenerator(), BadgeRequest(prompt: "p", size: 64, source: file.path))
        return (image, png)
    }

    @Test func automatic1111ParametersInAJPEGAreKept() async throws {
        let parameters = "a lighthouse at dawn, golden hour\nNegative prompt: blurry\nSteps: 25, Sampler: DPM++ 2M, CFG scale: 7, Seed: 42, Size: 512x512"
        let utf16BE = parameters.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        let (image, png) = try await imported(try Self.jpeg(userComment: "UNICODE", utf16BE))
        #expect(image.extra["source-parameters"] == parameters)
        let text = try PNG.chunks(in: png).compactMap(PNG.textEntry).map(\.text).joined()
        #expect(!text.contains("N\u{0}") && !png.contains(Data("Exif".utf8)), "nothing else of the EXIF comes along")
    }

    @Test func aCamerasPersonalCommentStaysBehind() async throws {
        let (image, png) = try await imported(try Self.jpeg(userComment: "ASCII", Array("Dinner with Anna at home".utf8)))
        #expect(image.extra["source-parameters"] == nil)
        #expect(!String(decoding: png, as: UTF8.self).contains("Anna"))
    }
}

/// What shows behind a picture: letterbox bars and transparent pixels.
@Suite(.threadsOfTheirOwn)
struct BackdropTests {
    /// 80×40, a green bar on the left half and transparency on the right half.
    static func halfTransparent() throws -> GDImage {
        let canvas = try Canvas(width: 80, height: 40, background: .clear)
        canvas.fill(.roundedRect(x: 0, y: 0, width: 40, height: 40, radius: 0), with: .solid(RGBA(20, 160, 60)))
        return try GDImage(canvas)
    }

    @Test func coverKeepsTransparencyUnlessABackgroundIsGiven() throws {
        let image = try Self.halfTransparent()
        let kept = try image.squared(side: 40, contain: false, backdrop: .transparent)
        #expect(kept.pixel(35, 20).a < 10, "transparent stays transparent: \(kept.pixel(35, 20))")
        let red = try image.squared(side: 40, contain: false, backdrop: .color(RGBA(230, 20, 20)))
        let p = red.pixel(35, 20)
        #expect(p.a == 255 && p.r > 200 && p.g < 60, "composited on the background: \(p)")
        let q = red.pixel(5, 20)
        #expect(q.g > 140 && q.r < 60, "the picture itself is untouched: \(q)")
    }

    @Test func containLetterboxesOnABlurredCopy() throws {
        // Yellow on the left, blue on the right.
        let canvas = try Canvas(width: 120, height: 60, background: RGBA(30, 90, 200))
        canvas.fill(.roundedRect(x: 0, y: 0, width: 60, height: 60, radius: 0), with: .solid(RGBA(250, 200, 40)))
        let image = try GDImage(canvas)
        let square = try image.squared(side: 120, contain: true, backdrop: .blurred)
        // The bars above and below carry the picture's colours where they are, softened; not white.
        for y in [4, 115] {
            let left = square.pixel(10, y), right = square.pixel(110, y)
            #expect(left.a == 255 && right.a == 255)
            #expect(left.r > left.b + 40, "yellow-ish on the left: \(left)")
            #expect(right.b > right.r + 40, "blue-ish on the right: \(right)")
            #expect(left.r < 240 && right.b < 200, "dimmed, so the picture stands out: \(left) \(right)")
        }
        // The picture itself sits sharp in the middle band.
        let yellow = square.pixel(30, 60), blue = square.pixel(90, 60)
        #expect(yellow.r > 240 && yellow.g > 190 && blue.b > 190 && blue.r < 40, "\(yellow) \(blue)")
    }
}
