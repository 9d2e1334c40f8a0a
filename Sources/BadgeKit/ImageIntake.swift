import Foundation

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

        public init(format: ImageFormat, width: Int, height: Int) {
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
        return .unknown
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
        default:
            throw BadgeError(.unsupportedFormat, "\(format.rawValue.uppercased()) images are not accepted yet", path: source)
        }
        try check(header, source: source)
        return header
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
}
