import BadgeKit
import BadgeKitTesting
import Canvas
import Foundation
import Testing
@testable import ImportBackend

/// JPEG, GIF and WebP: read by their bytes, checked before decoding, refused
/// when truncated or when their headers claim enormous sizes.
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

    private func importing(_ data: Data, named name: String) async throws -> GeneratedImage {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("badge-formats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent(name)
        try data.write(to: file)
        let (image, png, _) = try await GeneratorConformance.generateOnce(
            ImportGenerator(), BadgeRequest(prompt: "p", size: 64, source: file.path))
        #expect(try ImageIntake().inspect(png).format == .png, "the badge itself is always a PNG")
        return image
    }

    @Test(arguments: [ImageFormat.jpeg, .gif, .webp])
    func everyAcceptedFormatImportsWhateverItsName(format: ImageFormat) async throws {
        let data = try Self.encoded(format)
        #expect(try ImageIntake().inspect(data, accepting: Set(ImageFormat.allCases)) == ImageIntake.Header(format: format, width: 120, height: 80))
        let image = try await importing(data, named: "holiday.png")  // the name lies; the bytes decide
        #expect(image.width == 64)
        // The middle of the picture is the yellow disc, wherever the format took it.
        let decoded = try GDImage.decode(data)
        let centre = decoded.pixel(60, 40)
        #expect(centre.r > 200 && centre.g > 150 && centre.b < 120, "\(format): \(centre)")
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
            #expect(error.code == .imageTooLarge, "\(format): \(error)")
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
struct OrientationTests {
    /// A JPEG stored so that, shown as `orientation` says, a red marker is top-left.
    /// Where the marker must be stored is written out by hand, from what each
    /// orientation means (6: the stored picture is turned 90° clockwise to be
    /// shown, so its bottom-left corner becomes the top-left), not computed.
    static func storedJPEG(orientation: Int) throws -> Data {
        let swaps = orientation >= 5
        let (sw, sh) = swaps ? (24, 48) : (48, 24)  // stored size; shown is always 48×24
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
        stored.fill(.roundedRect(x: corner.0 ? Double(sw - 12) : 0, y: corner.1 ? Double(sh - 12) : 0, width: 12, height: 12, radius: 0),
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
        let image = try GDImage.decode(data)
        #expect(image.width == 48 && image.height == 24, "orientation \(orientation): \(image.width)×\(image.height)")
        let corner = image.pixel(3, 3), opposite = image.pixel(44, 20)
        #expect(corner.r > 180 && corner.b < 100, "orientation \(orientation): top-left is \(corner)")
        #expect(opposite.b > 150 && opposite.r < 100, "orientation \(orientation): bottom-right is \(opposite)")
    }

    /// Found while writing the fuzz harness (its seed corpus keeps the input): an
    /// APP1 segment shorter than its own "Exif" header was sliced backwards and trapped.
    @Test(arguments: 2...7)
    func anExifSegmentShorterThanItsHeaderIsIgnored(length: Int) throws {
        let bytes = [0xFF, 0xD8, 0xFF, 0xE1, 0, UInt8(length)] + Array("Exif\0\0".utf8) + [UInt8](repeating: 0, count: 10)
        #expect(ImageIntake.jpegOrientation(Data(bytes)) == 1)
        #expect(ImageIntake.jpegOrientation(Data([0x00] + bytes).dropFirst()) == 1)
        #expect(throws: BadgeError.self) { try ImageIntake().inspect(Data(bytes), accepting: Set(ImageFormat.allCases)) }
    }
}

/// What other generators said about a picture comes along; nothing personal does.
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
}
