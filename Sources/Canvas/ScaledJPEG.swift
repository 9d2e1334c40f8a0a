import BadgeKit
import CGD
import CJPEG
import Foundation

/// Shrink-on-load for JPEG: libjpeg-turbo decodes straight to M/8 of the
/// stored size (1/8 to 7/8) from the DCT coefficients, so a 12 MP photo meant for a
/// 1024 px badge is never decoded (or held in memory) at full size.
extension GDImage {
    /// What the decoded image must still cover: a `side`×`side` square, by
    /// cropping (`cover`: the short side must reach `side`) or by
    /// letterboxing (`contain`: the long side must).
    public struct Fitting: Sendable, Hashable {
        public var side: Int
        public var cover: Bool

        public init(side: Int, cover: Bool) {
            self.side = side
            self.cover = cover
        }

        /// The smallest M of M/8 (libjpeg's scales) that keeps the measured side
        /// at `side` or more (libjpeg rounds scaled sizes up); 8 is full size.
        public func jpegEighths(width: Int, height: Int) -> Int {
            let measured = cover ? min(width, height) : max(width, height)
            return (1...8).first { (measured * $0 + 7) / 8 >= side } ?? 8
        }
    }

    /// Decodes a JPEG the intake has passed at `eighths`/8 scale, turned
    /// as its EXIF `orientation` says while it is copied (no second image);
    /// nil when libjpeg cannot give RGB for it (CMYK, YCCK), so gd decodes it instead.
    /// The decode ends at once past `ImageIntake.maxJPEGScans` scans, at the first
    /// corrupt-data warning, and when `stop` says so.
    static func decodeScaledJPEG(_ data: Data, eighths: Int, orientation: Int, source: String?, stop: DecodeStop) throws -> GDImage? {
        var decoded = badge_jpeg_image()
        let status = withExtendedLifetime(stop) { () -> Int32 in
            let bounds = badge_jpeg_bounds(
                max_scans: Int32(ImageIntake.maxJPEGScans),
                should_stop: { context in Unmanaged<DecodeStop>.fromOpaque(context!).takeUnretainedValue().shouldStop ? 1 : 0 },
                context: Unmanaged.passUnretained(stop).toOpaque())
            return data.withUnsafeBytes { raw -> Int32 in
                guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return Int32(BADGE_JPEG_FAILED) }
                return badge_jpeg_decode_scaled(base, UInt(raw.count), Int32(eighths), bounds, &decoded)
            }
        }
        defer { free(decoded.rgb) }
        let message = withUnsafeBytes(of: decoded.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        switch status {
        case Int32(BADGE_JPEG_UNSUPPORTED_COLOR):
            return nil
        case Int32(BADGE_JPEG_OK):
            break
        case Int32(BADGE_JPEG_TOO_MANY_SCANS):
            throw BadgeError(.invalidImage, "the JPEG has more than \(ImageIntake.maxJPEGScans) scans", path: source,
                             hint: "a real photo has about ten; this file is built to be slow to decode. Export it again")
        case Int32(BADGE_JPEG_STOPPED):
            throw stop.error(source: source)
        case _ where decoded.warnings > 0:
            throw BadgeError(.invalidImage, "the JPEG is corrupt or truncated", path: source, cause: message.isEmpty ? nil : message,
                             hint: "the image data is damaged; export it again")
        default:
            throw BadgeError(.invalidImage, "the JPEG could not be decoded", path: source, cause: message.isEmpty ? nil : message,
                             hint: "the file is corrupt or truncated")
        }
        let width = Int(decoded.width), height = Int(decoded.height)
        let swaps = orientation >= 5
        let image = try GDImage(width: swaps ? height : width, height: swaps ? width : height)
        let rgb = decoded.rgb!
        for y in 0..<image.height {
            let row = badge_gd_row(image.pointer, Int32(y))!
            if orientation <= 1 {
                var i = y * width * 3
                for x in 0..<width {
                    row[x] = Int32(rgb[i]) << 16 | Int32(rgb[i + 1]) << 8 | Int32(rgb[i + 2])
                    i += 3
                }
                continue
            }
            for x in 0..<image.width {
                let (sx, sy) = storedPixel(shownAt: x, y, orientation: orientation, width: width, height: height)
                let i = (sy * width + sx) * 3
                row[x] = Int32(rgb[i]) << 16 | Int32(rgb[i + 1]) << 8 | Int32(rgb[i + 2])
            }
        }
        return image
    }
}
