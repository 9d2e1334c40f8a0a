import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Testing

/// Issue #31: the decode-memory estimate could be walked around. A JPEG's
/// frame after a megabyte of APP padding was not found (its coefficients
/// went uncounted), gd's buffer of the whole PNG frame was not counted, and
/// a lossless WebP inside a VP8X container was taken for a lossy one.
@Suite(.threadsOfTheirOwn)
struct DecodeEstimateTests {
    /// `jpeg` (a real progressive JPEG) claiming `width`×`height`, with
    /// `padding` bytes of APP15 segments between SOI and the rest.
    static func padded(_ jpeg: Data, width: Int, height: Int, padding: Int) -> Data {
        var bytes = [UInt8](jpeg)
        // Patch the frame's dimensions (SOF2: FF C2, length, precision, height, width).
        let sof = (0..<(bytes.count - 1)).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC2 }!
        bytes[sof + 5] = UInt8(height >> 8); bytes[sof + 6] = UInt8(height & 0xFF)
        bytes[sof + 7] = UInt8(width >> 8); bytes[sof + 8] = UInt8(width & 0xFF)
        // 4:4:4: every component sampled 1×1.
        for c in 0..<Int(bytes[sof + 9]) { bytes[sof + 11 + 3 * c] = 0x11 }
        var segments: [UInt8] = []
        var left = padding
        while left > 0 {
            let body = min(left, 65533)
            segments += [0xFF, 0xEF, UInt8((body + 2) >> 8), UInt8((body + 2) & 0xFF)] + [UInt8](repeating: 0x41, count: body)
            left -= body
        }
        return Data(Array(bytes[0..<2]) + segments + Array(bytes[2...]))
    }

    static func png(width: Int, height: Int, depth: UInt8, colorType: UInt8) -> Data {
        var ihdr = Data()
        for v in [UInt32(width), UInt32(height)] { ihdr.append(contentsOf: withUnsafeBytes(of: v.bigEndian, Array.init)) }
        ihdr.append(contentsOf: [depth, colorType, 0, 0, 0])
        var chunks = [PNGChunk(type: "IHDR", data: ihdr)]
        if colorType == 3 { chunks.append(PNGChunk(type: "PLTE", data: Data([0, 0, 0]))) }
        return PNG.assemble(chunks + [
            PNGChunk(type: "IDAT", data: Data([0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])),
            PNGChunk(type: "IEND", data: Data()),
        ])
    }

    static func refusal(_ data: Data) -> BadgeError? {
        do {
            _ = try ImageIntake().inspect(data, accepting: Set(ImageFormat.allCases), source: "test")
            return nil
        } catch {
            return error as? BadgeError
        }
    }

    /// 8192×4882, 4:4:4 progressive: refused unpadded, and accepted (peaking
    /// at 407 MB) once 1 MiB of APP padding hid its frame from the estimate.
    @Test func aProgressiveJPEGsFrameIsFoundAfterAMegabyteOfPadding() throws {
        let jpeg = try DecodeBombTests.progressiveJPEG()
        for padding in [0, 1 << 20, (1 << 20) + 70_000, 3 << 20] {
            let data = Self.padded(jpeg, width: 8192, height: 4882, padding: padding)
            #expect(try ImageIntake(limits: ImageLimits(maxFileBytes: 20 << 20, maxSide: 8192, maxPixels: 40_000_000, maxDecodeBytes: 1 << 40))
                .inspect(data, accepting: [.jpeg]).width == 8192)
            let error = try #require(Self.refusal(data), "padding \(padding): must be refused before decoding")
            #expect(error.code == .imageTooLarge)
            #expect(error.message == "decoding the image would take about 381 MB of memory; the limit is 256 MB", "\(error)")
            #expect(error.cause == "a 8192×4882 progressive JPEG", "\(error)")
        }
    }

    /// gd reads a PNG into a buffer of the whole frame before filling its
    /// image: an 8192×4882 RGBA PNG of one colour (164 KB) peaked at 340 MB.
    @Test func gdsWholeFrameBufferIsCountedForEveryPNG() throws {
        let rgba = Self.png(width: 8192, height: 4882, depth: 8, colorType: 6)
        let error = try #require(Self.refusal(rgba), "an 8192×4882 RGBA PNG takes 4 + 4 bytes a pixel")
        #expect(error.code == .imageTooLarge)
        #expect(error.message == "decoding the image would take about 305 MB of memory; the limit is 256 MB", "\(error)")
        #expect(error.cause == "a 8192×4882 PNG of 32 bits a pixel, read into a buffer of the whole frame", "\(error)")
        // 16-bit samples are stripped to 8 before the buffer is filled: the same cost.
        #expect(ImageIntake.decodeBytes(Self.png(width: 8192, height: 4882, depth: 16, colorType: 6),
                                        .init(format: .png, width: 8192, height: 4882)) == 8 * 8192 * 4882)
        // A palette PNG: its frame, the palette image, then the true-colour image.
        #expect(ImageIntake.decodeBytes(Self.png(width: 1000, height: 1000, depth: 8, colorType: 3),
                                        .init(format: .png, width: 1000, height: 1000)) == 6 * 1_000_000)
        // Within the limit it passes: 8192×3000 RGBA is 188 MB.
        #expect(Self.refusal(Self.png(width: 8192, height: 3000, depth: 8, colorType: 6)) == nil)
    }

    /// A real one: the whole-frame buffer is what decoding costs. A 1000×1000
    /// RGBA PNG decodes, and the estimate covers its image and its frame.
    @Test func theEstimateCoversARealDecode() async throws {
        let (estimate, width, height) = try await onOwnThread {
            let canvas = try Canvas(width: 1000, height: 1000, background: RGBA(30, 90, 200, 128))
            let png = try PNGEncoder.encode(canvas, keepAlpha: true)
            let header = try ImageIntake().inspect(png)
            let image = try GDImage.decodePNG(png)
            return (ImageIntake.decodeBytes(png, header), image.width, image.height)
        }
        #expect(estimate >= 7 * 1000 * 1000)
        #expect(width == 1000 && height == 1000)
    }

    static func vp8x(side: Int, image: (String, [UInt8])) -> Data {
        func chunk(_ fourCC: String, _ payload: [UInt8]) -> [UInt8] {
            Array(fourCC.utf8) + withUnsafeBytes(of: UInt32(payload.count).littleEndian, Array.init) + payload + (payload.count % 2 == 1 ? [0] : [])
        }
        let w = side - 1
        let header: [UInt8] = [0x10, 0, 0, 0, UInt8(w & 0xFF), UInt8(w >> 8 & 0xFF), UInt8(w >> 16), UInt8(w & 0xFF), UInt8(w >> 8 & 0xFF), UInt8(w >> 16)]
        let body = chunk("VP8X", header) + chunk("ICCP", [UInt8](repeating: 1, count: 7)) + chunk(image.0, image.1)
        return Data(Array("RIFF".utf8) + withUnsafeBytes(of: UInt32(4 + body.count).littleEndian, Array.init) + Array("WEBP".utf8) + body)
    }

    /// 5000×5000: lossless takes 12 bytes a pixel (300 MB, refused), lossy 9.5 (238 MB, passes).
    @Test func aLosslessWebPInsideVP8XIsEstimatedAsLossless() throws {
        let lossless = Self.vp8x(side: 5000, image: ("VP8L", [0x2F] + [UInt8](repeating: 0, count: 20)))
        let error = try #require(Self.refusal(lossless), "a lossless WebP in VP8X must be refused")
        #expect(error.cause == "a 5000×5000 lossless WebP", "\(error)")
        let lossy = Self.vp8x(side: 5000, image: ("VP8 ", [UInt8](repeating: 0, count: 20)))
        #expect(Self.refusal(lossy) == nil)
    }
}
