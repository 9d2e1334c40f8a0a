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
    static func decodeScaledJPEG(_ data: Data, eighths: Int, orientation: Int, source: String?) throws -> GDImage? {
        var decoded = badge_jpeg_image()
        let status = data.withUnsafeBytes { raw -> Int32 in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return Int32(BADGE_JPEG_FAILED) }
            return badge_jpeg_decode_scaled(base, UInt(raw.count), Int32(eighths), &decoded)
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
        default:
            throw BadgeError(.invalidImage, "the JPEG could not be decoded", path: source, cause: message.isEmpty ? nil : message,
                             hint: "the file is corrupt or truncated")
        }
        guard decoded.warnings == 0 else {
            throw BadgeError(.invalidImage, "the JPEG is corrupt or truncated (the decoder reported \(decoded.warnings) problem\(decoded.warnings == 1 ? "" : "s"))",
                             path: source, cause: message.isEmpty ? nil : message, hint: "the image data is damaged; export it again")
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
