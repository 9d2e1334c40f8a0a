import Foundation

public enum ImageFormat: String, Sendable, Codable, CaseIterable {
    case png, jpeg, gif, webp
}

/// Limits every image passes before anything decodes it.
public struct ImageLimits: Sendable, Hashable, Codable {
    public var maxFileBytes: Int
    public var maxSide: Int
    public var maxPixels: Int
    /// The most memory decoding one image may take, as estimated from its
    /// header before it is decoded (`ImageIntake.decodeBytes`).
    public var maxDecodeBytes: Int

    public static let defaultMaxDecodeBytes = 256 << 20
    public static let `default` = ImageLimits(maxFileBytes: 20 << 20, maxSide: 8192, maxPixels: 40_000_000)

    /// These limits, with room in the file size for any PNG of a `side` px
    /// square this process encoded itself: its pixels are bounded by the size
    /// asked for, and every one may be incompressible (a 4096 px tile of
    /// grain is ~27 MB, past the default 20 MiB meant for others' images).
    /// A side past `maxSide` (a file's claim) is taken as `maxSide`.
    public func admittingDrawing(side: Int) -> ImageLimits {
        var limits = self
        let side = min(max(side, 0), maxSide)
        // Every row stored: a filter byte and four bytes a pixel, 5 bytes
        // per 64 KB stored block, and a megabyte for chunks and metadata.
        let stored = side * (1 + 4 * side)
        limits.maxFileBytes = max(maxFileBytes, stored + stored / 65535 * 5 + (1 << 20))
        limits.maxDecodeBytes = max(maxDecodeBytes, 4 * side * side)
        return limits
    }

    public init(maxFileBytes: Int, maxSide: Int, maxPixels: Int, maxDecodeBytes: Int = ImageLimits.defaultMaxDecodeBytes) {
        self.maxFileBytes = maxFileBytes
        self.maxSide = maxSide
        self.maxPixels = maxPixels
        self.maxDecodeBytes = maxDecodeBytes
    }
}

/// The first look at any image, from any backend or file, before anything
/// decodes it: what format the bytes are (by magic bytes, never by name), the
/// dimensions the header claims, and the limits. Pure Swift and cheap.
public struct ImageIntake: Sendable {
    public var limits: ImageLimits

    public init(limits: ImageLimits = .default) { self.limits = limits }

    /// What the header says.
    public struct Header: Sendable, Equatable {
        public var format: ImageFormat
        public var width: Int
        public var height: Int

        package init(format: ImageFormat, width: Int, height: Int) {
            self.format = format
            self.width = width
            self.height = height
        }
    }

    /// What a file's leading bytes say it is, including formats badge refuses.
    public enum Sniffed: Equatable, Sendable {
        case accepted(ImageFormat)
        case refused(String)
        case unknown
    }

    public static func sniff(_ data: Data) -> Sniffed {
        let b = [UInt8](data.prefix(32))
        func starts(_ p: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + p.count && Array(b[offset..<(offset + p.count)]) == p
        }
        if starts(PNG.signature) { return .accepted(.png) }
        if starts([0xFF, 0xD8, 0xFF]) { return .accepted(.jpeg) }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .accepted(.gif) }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .accepted(.webp) }
        if starts(Array("BM".utf8)) { return .refused("a BMP image") }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .refused("a TIFF image") }
        if starts(Array("ftyp".utf8), at: 4) {
            let brand = b.count >= 12 ? String(decoding: b[8..<12], as: UTF8.self) : ""
            return .refused(brand.hasPrefix("avi") ? "an AVIF image" : "a HEIF/HEIC image")
        }
        if starts(Array("<svg".utf8)) || starts(Array("<?xml".utf8)) { return .refused("an SVG or XML document") }
        if starts(Array("gd2\0".utf8)) { return .refused("a GD2 image") }
        if starts(Array("%PDF".utf8)) { return .refused("a PDF document") }
        if starts(Array("#define".utf8)) { return .refused("an XBM image") }
        if starts(Array("/* XPM */".utf8)) { return .refused("an XPM image") }
        // libgd's own format: 0xFFFE (true colour) or 0xFFFF (palette), then the size.
        if starts([0xFF, 0xFE]) || starts([0xFF, 0xFF]) { return .refused("a GD image") }
        if looksLikeTGA(data, header: b) { return .refused("a TGA image") }
        return .unknown
    }

    /// TGA has no magic bytes: version 2 files end with "TRUEVISION-XFILE.\0";
    /// older ones are known by a header whose every field holds a legal value.
    static func looksLikeTGA(_ data: Data, header b: [UInt8]) -> Bool {
        if data.count >= 44, data.suffix(18).elementsEqual(Array("TRUEVISION-XFILE.\0".utf8)) { return true }
        guard b.count >= 18 else { return false }
        let colorMapType = b[1], imageType = b[2], depth = b[16]
        let width = Int(b[12]) | Int(b[13]) << 8, height = Int(b[14]) | Int(b[15]) << 8
        guard colorMapType <= 1, [1, 2, 3, 9, 10, 11].contains(imageType), [8, 15, 16, 24, 32].contains(depth),
              width > 0, height > 0, b[17] & 0xC0 == 0 else { return false }
        // Without a colour map its five descriptor bytes are zero; image types 1 and 9 need one.
        if colorMapType == 0 { return b[3...7].allSatisfy { $0 == 0 } && imageType != 1 && imageType != 9 }
        return imageType == 1 || imageType == 9
    }

    /// Checks format, dimensions and limits. For PNG it also walks every chunk
    /// and verifies its CRC, so a truncated or corrupt file never reaches a decoder.
    public func inspect(_ data: Data, accepting accepted: Set<ImageFormat> = [.png], source: String? = nil) throws -> Header {
        guard data.count <= limits.maxFileBytes else {
            throw BadgeError(.imageTooLarge, "the image is \(data.count) bytes; the limit is \(limits.maxFileBytes)",
                             path: source, hint: "raise intake.maxFileBytes in the configuration, or use a smaller file")
        }
        let acceptedList = accepted.map(\.rawValue).sorted().joined(separator: ", ").uppercased()
        let format: ImageFormat
        switch Self.sniff(data) {
        case let .accepted(f) where accepted.contains(f): format = f
        case let .accepted(f):
            throw BadgeError(.unsupportedFormat, "the file is a \(f.rawValue.uppercased()) image; accepted here: \(acceptedList)", path: source)
        case let .refused(what):
            throw BadgeError(.unsupportedFormat, "the file is \(what); accepted: \(acceptedList)", path: source,
                             hint: "convert it to PNG first")
        case .unknown:
            throw BadgeError(.unsupportedFormat, data.isEmpty ? "the file is empty" : "the file is not an image badge can read; accepted: \(acceptedList)",
                             path: source)
        }
        let header: Header
        switch format {
        case .png: header = try pngHeader(data, source: source)
        case .jpeg: header = try jpegHeader(data, source: source)
        case .gif: header = try gifHeader(data, source: source)
        case .webp: header = try webpHeader(data, source: source)
        }
        try check(header, source: source)
        let needed = Self.decodeBytes(data, header)
        if needed > limits.maxDecodeBytes {
            throw BadgeError(.imageTooLarge,
                             "decoding the image would take about \(needed >> 20) MB of memory; the limit is \(limits.maxDecodeBytes >> 20) MB",
                             path: source, cause: Self.decodeCost(data, header),
                             hint: "raise intake.maxDecodeBytes in the configuration, or save the image smaller (8-bit, not interlaced or progressive)")
        }
        return header
    }

    /// The most scans a progressive JPEG may have, as libjpeg-turbo's own
    /// tools suggest (`-maxscans 100`): real files have about ten, and every
    /// scan is another pass over all of the image's coefficients.
    public static let maxJPEGScans = 100

    // MARK: - Decoding memory

    /// What decoding the image will take in memory, worked out from its
    /// header: the decoded image (4 bytes a pixel, as libgd holds it) and
    /// what the decoder needs beside it: gd reads every PNG into one buffer
    /// of the whole frame (a byte a sample, 16-bit samples stripped) before
    /// it fills its image, and a grey or palette PNG into a palette image
    /// first (a byte a pixel); an interlaced PNG is also held whole at its
    /// own bit depth (twice: as stored and deinterlaced); a progressive JPEG
    /// keeps every DCT coefficient of the image (2 bytes a sample, at the
    /// components' sampling); a WebP is decoded to a 4-byte-a-pixel buffer
    /// first (lossless, also inside a VP8X container: plus its own ARGB
    /// buffer of the same size; lossy: plus its YUV planes and any alpha
    /// plane); a GIF is read as one byte a pixel first.
    public static func decodeBytes(_ data: Data, _ header: Header) -> Int {
        let pixels = header.width * header.height
        return 4 * pixels + workingBytes(data, header)
    }

    static func workingBytes(_ data: Data, _ header: Header) -> Int {
        let pixels = header.width * header.height
        switch header.format {
        case .png:
            guard let ihdr = pngIHDR(data) else { return 0 }
            let frame = header.width * ihdr.channels * header.height
            let palette = ihdr.colorType == 0 || ihdr.colorType == 3 ? pixels : 0
            guard ihdr.interlaced else { return frame + palette }
            let rowBytes = (header.width * ihdr.bitsPerPixel + 7) / 8 + 1
            return frame + palette + 2 * rowBytes * header.height
        case .jpeg:
            // No frame found where the intake found one: count it as the worst, progressive 4:4:4.
            guard let frame = jpegFrame(data) else { return 3 * pixels * 2 }
            guard frame.progressive else { return 0 }
            let hMax = frame.sampling.map(\.h).max() ?? 1, vMax = frame.sampling.map(\.v).max() ?? 1
            return frame.sampling.reduce(0) { sum, factor in
                let columns = (header.width * factor.h + hMax * 8 - 1) / (hMax * 8)
                let rows = (header.height * factor.v + vMax * 8 - 1) / (vMax * 8)
                return sum + columns * rows * 64 * 2
            }
        case .webp:
            let coding = webpCoding(data)
            return coding.lossless ? 8 * pixels : 4 * pixels + pixels * 3 / 2 + (coding.alpha ? pixels : 0)
        case .gif:
            return pixels
        }
    }

    /// How a WebP's image is coded: lossless (VP8L) or lossy (VP8), and
    /// whether a lossy one has an alpha plane (ALPH). A simple file's first
    /// chunk says; an extended one (VP8X) is walked chunk by chunk to its image.
    static func webpCoding(_ data: Data) -> (lossless: Bool, alpha: Bool) {
        var offset = 12
        var alpha = false
        while offset + 8 <= data.count {
            let base = data.startIndex + offset
            let fourCC = String(decoding: data[base..<(base + 4)], as: UTF8.self)
            switch fourCC {
            case "VP8L": return (true, false)
            case "VP8 ": return (false, alpha)
            case "ALPH": alpha = true
            default: break
            }
            let size = Int(data[base + 4]) | Int(data[base + 5]) << 8 | Int(data[base + 6]) << 16 | Int(data[base + 7]) << 24
            offset += 8 + size + (size & 1)
        }
        // No image chunk found: the larger of the two.
        return (true, false)
    }

    /// Why the estimate is what it is, in words, for the error.
    static func decodeCost(_ data: Data, _ header: Header) -> String {
        let size = "\(header.width)×\(header.height)"
        switch header.format {
        case .png:
            guard let ihdr = pngIHDR(data) else { return "a \(size) PNG" }
            return "a \(size) PNG of \(ihdr.bitsPerPixel) bits a pixel\(ihdr.interlaced ? ", interlaced" : ""), read into a buffer of the whole frame"
        case .jpeg:
            return "a \(size) \(jpegFrame(data)?.progressive == true ? "progressive" : "baseline") JPEG"
        case .webp:
            return "a \(size) \(webpCoding(data).lossless ? "lossless" : "lossy") WebP"
        case .gif:
            return "a \(size) GIF"
        }
    }

    /// Bits a pixel, channels, colour type and interlacing, from an IHDR the intake has checked.
    static func pngIHDR(_ data: Data) -> (bitsPerPixel: Int, channels: Int, colorType: Int, interlaced: Bool)? {
        guard data.count >= 33 else { return nil }
        let base = data.startIndex + 16
        let depth = Int(data[base + 8]), colorType = Int(data[base + 9])
        let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][colorType] ?? 4
        return (depth * channels, channels, colorType, data[base + 12] != 0)
    }

    /// A JPEG's frame: progressive or not, and each component's sampling
    /// factors. The segments before it are skipped by their lengths however
    /// many there are (a megabyte of APP padding included), as a decoder does.
    static func jpegFrame(_ data: Data) -> (progressive: Bool, sampling: [(h: Int, v: Int)])? {
        data.withUnsafeBytes { raw -> (progressive: Bool, sampling: [(h: Int, v: Int)])? in
            let bytes = raw.bindMemory(to: UInt8.self)
            var i = 2
            while i + 4 <= bytes.count, bytes[i] == 0xFF {
                let marker = Int(bytes[i + 1])
                if marker == 0xFF { i += 1; continue }
                if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
                if marker == 0xD9 || marker == 0xDA { return nil }
                let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
                if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) {
                    guard i + 10 <= bytes.count else { return nil }
                    let count = Int(bytes[i + 9])
                    var sampling: [(h: Int, v: Int)] = []
                    for c in 0..<count {
                        let at = i + 10 + c * 3 + 1
                        guard at < bytes.count else { break }
                        sampling.append((max(1, Int(bytes[at] >> 4)), max(1, Int(bytes[at] & 0x0F))))
                    }
                    return ([0xC2, 0xC6, 0xCA, 0xCE].contains(marker), sampling.isEmpty ? [(1, 1)] : sampling)
                }
                i += 2 + max(length, 2)
            }
            return nil
        }
    }

    /// The scans of a JPEG: its start-of-scan markers, counted by walking the
    /// segments and the entropy-coded data between them (where 0xFF is
    /// followed by 0x00 as stuffing, or by a restart marker).
    public static func jpegScanCount(_ data: Data) -> Int {
        data.withUnsafeBytes { raw -> Int in
            let bytes = raw.bindMemory(to: UInt8.self)
            var scans = 0
            var i = 2
            while i + 1 < bytes.count {
                guard bytes[i] == 0xFF else {
                    // Entropy-coded data: on to the next 0xFF (memchr, a photo's megabytes in a millisecond or two).
                    guard let next = memchr(raw.baseAddress! + i, 0xFF, bytes.count - i) else { break }
                    i = raw.baseAddress!.distance(to: UnsafeRawPointer(next))
                    continue
                }
                let marker = bytes[i + 1]
                if marker == 0xFF { i += 1; continue }
                if marker == 0x00 || (0xD0...0xD7).contains(marker) || marker == 0x01 || marker == 0xD8 { i += 2; continue }
                if marker == 0xD9 { break }
                guard i + 4 <= bytes.count else { break }
                let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
                if marker == 0xDA { scans += 1 }
                i += 2 + max(length, 2)
            }
            return scans
        }
    }

    public func check(_ header: Header, source: String?) throws {
        guard header.width > 0, header.height > 0 else {
            throw BadgeError(.invalidImage, "the image header claims \(header.width)×\(header.height) pixels", path: source)
        }
        if header.width > limits.maxSide || header.height > limits.maxSide {
            throw BadgeError(.imageTooLarge, "the image is \(header.width)×\(header.height); the limit is \(limits.maxSide) pixels a side",
                             path: source, hint: "raise intake.maxSide in the configuration, or scale the image down first")
        }
        if header.width * header.height > limits.maxPixels {
            throw BadgeError(.imageTooLarge, "the image has \(header.width * header.height) pixels; the limit is \(limits.maxPixels)",
                             path: source, hint: "raise intake.maxPixels in the configuration, or scale the image down first")
        }
    }

    private func pngHeader(_ data: Data, source: String?) throws -> Header {
        let chunks: [PNGChunk]
        do {
            chunks = try PNG.chunks(in: data)
        } catch var error as BadgeError {
            error.path = source
            throw error
        }
        guard let ihdr = chunks.first, ihdr.type == "IHDR", ihdr.data.count == 13 else {
            throw BadgeError(.invalidImage, "the PNG does not start with a valid IHDR chunk", path: source)
        }
        let width = Int(PNG.readUInt32(ihdr.data, at: ihdr.data.startIndex))
        let height = Int(PNG.readUInt32(ihdr.data, at: ihdr.data.startIndex + 4))
        let depth = ihdr.data[ihdr.data.startIndex + 8], colorType = ihdr.data[ihdr.data.startIndex + 9]
        let validDepths: [UInt8: [UInt8]] = [0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16]]
        guard let depths = validDepths[colorType], depths.contains(depth) else {
            throw BadgeError(.invalidImage, "the PNG header has an invalid colour type \(colorType) / bit depth \(depth)", path: source)
        }
        guard chunks.contains(where: { $0.type == "IDAT" }) else {
            throw BadgeError(.invalidImage, "the PNG has no image data (no IDAT chunk)", path: source)
        }
        if colorType == 3 && !chunks.contains(where: { $0.type == "PLTE" }) {
            throw BadgeError(.invalidImage, "the palette PNG has no PLTE chunk", path: source)
        }
        return Header(format: .png, width: width, height: height)
    }

    // MARK: - Other formats' headers

    private func byte(_ data: Data, _ i: Int) -> Int { Int(data[data.startIndex + i]) }
    private func be16(_ data: Data, _ i: Int) -> Int { byte(data, i) << 8 | byte(data, i + 1) }
    private func le16(_ data: Data, _ i: Int) -> Int { byte(data, i) | byte(data, i + 1) << 8 }
    private func le24(_ data: Data, _ i: Int) -> Int { byte(data, i) | byte(data, i + 1) << 8 | byte(data, i + 2) << 16 }

    private func truncated(_ what: String, _ source: String?) -> BadgeError {
        BadgeError(.invalidImage, "the \(what) is truncated before its dimensions", path: source, hint: "the file was cut short")
    }

    /// Walks the JPEG markers to the first start-of-frame (SOF0–SOF15 but DHT, JPG, DAC).
    private func jpegHeader(_ data: Data, source: String?) throws -> Header {
        var i = 2
        while i + 4 <= data.count {
            guard byte(data, i) == 0xFF else {
                throw BadgeError(.invalidImage, "the JPEG is corrupt (no marker at byte \(i))", path: source)
            }
            let marker = byte(data, i + 1)
            if marker == 0xFF { i += 1; continue }  // fill byte
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
            if marker == 0xD9 || marker == 0xDA { break }  // end of image, or scan data before any frame
            let length = be16(data, i + 2)
            guard length >= 2 else { throw BadgeError(.invalidImage, "the JPEG has a bad segment length at byte \(i)", path: source) }
            if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard i + 9 <= data.count else { throw truncated("JPEG", source) }
                let header = Header(format: .jpeg, width: be16(data, i + 7), height: be16(data, i + 5))
                try check(header, source: source)
                try checkJPEGEnd(data, source: source)
                if Self.jpegScanCount(data) > Self.maxJPEGScans {
                    throw BadgeError(.invalidImage, "the JPEG has more than \(Self.maxJPEGScans) scans", path: source,
                                     hint: "a real photo has about ten; this file is built to be slow to decode. Export it again")
                }
                return header
            }
            i += 2 + length
        }
        throw BadgeError(.invalidImage, "the JPEG has no frame header (SOF)", path: source, hint: "the file is truncated or corrupt")
    }

    /// A JPEG ends with an EOI marker (some writers pad after it).
    private func checkJPEGEnd(_ data: Data, source: String?) throws {
        let tail = [UInt8](data.suffix(256))
        guard tail.count >= 2, (0..<(tail.count - 1)).contains(where: { tail[$0] == 0xFF && tail[$0 + 1] == 0xD9 }) else {
            throw BadgeError(.invalidImage, "the JPEG is truncated (it has no end-of-image marker)", path: source,
                             hint: "the file was cut short; download or copy it again")
        }
    }

    /// The logical screen, and the first image's frame, whichever is larger.
    private func gifHeader(_ data: Data, source: String?) throws -> Header {
        guard data.count >= 13 else { throw truncated("GIF", source) }
        var width = le16(data, 6), height = le16(data, 8)
        var i = 13
        if byte(data, 10) & 0x80 != 0 { i += 3 << ((byte(data, 10) & 0x07) + 1) }
        // Skip extensions up to the first image descriptor.
        while i < data.count {
            switch byte(data, i) {
            case 0x2C:
                guard i + 10 <= data.count else { throw truncated("GIF", source) }
                width = max(width, le16(data, i + 1) + le16(data, i + 5))
                height = max(height, le16(data, i + 3) + le16(data, i + 7))
                try checkGIFImageData(data, descriptorAt: i, source: source)
                return Header(format: .gif, width: width, height: height)
            case 0x21:
                i += 2
                while i < data.count, byte(data, i) != 0 { i += byte(data, i) + 1 }
                i += 1
            default:
                throw BadgeError(.invalidImage, "the GIF is corrupt (unexpected block at byte \(i))", path: source)
            }
        }
        throw BadgeError(.invalidImage, "the GIF has no image", path: source, hint: "the file is truncated or corrupt")
    }

    /// gd decodes a cut-off GIF without a word: walk the first image's data
    /// sub-blocks to their terminator so a truncated file is refused here.
    private func checkGIFImageData(_ data: Data, descriptorAt start: Int, source: String?) throws {
        var i = start + 10
        let packed = byte(data, start + 9)
        if packed & 0x80 != 0 { i += 3 << ((packed & 0x07) + 1) }
        i += 1  // LZW minimum code size
        while i < data.count {
            let length = byte(data, i)
            if length == 0 { return }
            i += length + 1
        }
        throw BadgeError(.invalidImage, "the GIF is truncated inside its image data", path: source,
                         hint: "the file was cut short; download or copy it again")
    }

    /// VP8 (lossy), VP8L (lossless) or VP8X (extended); animated WebP is refused.
    private func webpHeader(_ data: Data, source: String?) throws -> Header {
        guard data.count >= 30 else { throw truncated("WebP", source) }
        let chunk = String(decoding: data[(data.startIndex + 12)..<(data.startIndex + 16)], as: UTF8.self)
        switch chunk {
        case "VP8 ":
            guard byte(data, 23) == 0x9D, byte(data, 24) == 0x01, byte(data, 25) == 0x2A else {
                throw BadgeError(.invalidImage, "the WebP (VP8) frame header is corrupt", path: source)
            }
            return Header(format: .webp, width: le16(data, 26) & 0x3FFF, height: le16(data, 28) & 0x3FFF)
        case "VP8L":
            guard byte(data, 20) == 0x2F else { throw BadgeError(.invalidImage, "the WebP (VP8L) header is corrupt", path: source) }
            let bits = byte(data, 21) | byte(data, 22) << 8 | byte(data, 23) << 16 | byte(data, 24) << 24
            return Header(format: .webp, width: (bits & 0x3FFF) + 1, height: ((bits >> 14) & 0x3FFF) + 1)
        case "VP8X":
            if byte(data, 20) & 0x02 != 0 {
                throw BadgeError(.unsupportedFormat, "the file is an animated WebP; accepted: a still image", path: source)
            }
            return Header(format: .webp, width: le24(data, 24) + 1, height: le24(data, 27) + 1)
        default:
            throw BadgeError(.invalidImage, "the WebP has an unknown first chunk \"\(chunk)\"", path: source)
        }
    }

    // MARK: - EXIF orientation

    /// The EXIF orientation (1–8) of a JPEG, or 1 when it has none. Phones store
    /// pictures sideways and say so here; a reader that ignores it shows them rotated.
    public static func jpegOrientation(_ data: Data) -> Int {
        jpegExif(data).map(orientation(inTIFF:)) ?? 1
    }

    /// The TIFF structure of a JPEG's EXIF segment (APP1 "Exif\0\0"), from the
    /// segments before the image data; nil when there is none. Fill bytes
    /// (0xFF runs) before a marker are skipped, as decoders do.
    public static func jpegExif(_ data: Data) -> [UInt8]? {
        let bytes = [UInt8](data.prefix(256 << 10))
        var i = 2
        while i + 4 <= bytes.count, bytes[i] == 0xFF {
            let marker = bytes[i + 1]
            if marker == 0xFF { i += 1; continue }
            if marker == 0xDA || marker == 0xD9 { return nil }
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            guard length >= 2 else { return nil }
            let body = i + 4
            // The segment's own end, not the buffer's: a segment shorter than its
            // "Exif" header (a fuzzer's find) must not be sliced backwards.
            let end = min(bytes.count, i + 2 + length)
            if marker == 0xE1, body + 14 <= end, Array(bytes[body..<(body + 6)]) == Array("Exif\0\0".utf8) {
                return Array(bytes[(body + 6)..<end])
            }
            i += 2 + length
        }
        return nil
    }

    static func orientation(inTIFF t: [UInt8]) -> Int {
        guard t.count >= 8 else { return 1 }
        let little = t[0] == 0x49
        func u16(_ o: Int) -> Int { o + 2 <= t.count ? (little ? Int(t[o]) | Int(t[o + 1]) << 8 : Int(t[o]) << 8 | Int(t[o + 1])) : 0 }
        func u32(_ o: Int) -> Int { o + 4 <= t.count ? (little ? u16(o) | u16(o + 2) << 16 : u16(o) << 16 | u16(o + 2)) : 0 }
        let ifd = u32(4)
        let count = u16(ifd)
        for k in 0..<min(count, 256) {
            let entry = ifd + 2 + k * 12
            guard entry + 12 <= t.count else { break }
            if u16(entry) == 0x0112 {
                let value = u16(entry + 8)
                return (1...8).contains(value) ? value : 1
            }
        }
        return 1
    }
}
