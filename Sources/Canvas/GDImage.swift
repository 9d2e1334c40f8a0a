import BadgeKit
import CGD
import Foundation

/// A libgd true-colour image, owned: freed when this goes away. Not
/// thread-safe; create and use it within one blocking call.
public final class GDImage {
    let pointer: gdImagePtr

    public var width: Int { Int(badge_gd_sx(pointer)) }
    public var height: Int { Int(badge_gd_sy(pointer)) }

    init(taking pointer: gdImagePtr) {
        self.pointer = pointer
    }

    deinit { badge_gdImageDestroy(pointer) }

    /// A blank, fully transparent image.
    public convenience init(width: Int, height: Int) throws {
        try LibGD.load()
        guard width > 0, height > 0, width <= Canvas.maxSide, height <= Canvas.maxSide,
              let image = badge_gdImageCreateTrueColor(Int32(width), Int32(height))
        else {
            throw BadgeError(.generationFailed, "libgd could not create a \(width)×\(height) image", hint: "is memory short?")
        }
        self.init(taking: image)
        badge_gdImageAlphaBlending(image, 0)
        badge_gdImageSaveAlpha(image, 1)
        let transparent = Int32(127 << 24)
        for y in 0..<Int32(height) {
            let row = badge_gd_row(image, y)!
            for x in 0..<width { row[x] = transparent }
        }
    }

    /// The canvas's pixels, copied into a gd image (gd keeps 7 bits of alpha).
    public convenience init(_ canvas: Canvas) throws {
        try self.init(width: canvas.width, height: canvas.height)
        canvas.pixels.withUnsafeBufferPointer { px in
            for y in 0..<canvas.height {
                let row = badge_gd_row(pointer, Int32(y))!
                var i = y * canvas.width * 4
                for x in 0..<canvas.width {
                    row[x] = Self.gdColor(px[i], px[i + 1], px[i + 2], px[i + 3])
                    i += 4
                }
            }
        }
    }

    @inline(__always)
    static func gdColor(_ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8) -> Int32 {
        // gd: 0 = opaque, 127 = transparent.
        Int32(127 - Int(a) >> 1) << 24 | Int32(r) << 16 | Int32(g) << 8 | Int32(b)
    }

    public func pixel(_ x: Int, _ y: Int) -> RGBA {
        let v = badge_gd_row(pointer, Int32(y))![x]
        let alpha = 127 - Int(v >> 24 & 0x7F)
        return RGBA(UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF), UInt8(min(255, alpha * 2 + (alpha > 0 ? 1 : 0))))
    }

    // MARK: - Encoding

    /// PNG bytes at zlib `compression` level 0–9, alpha kept.
    public func pngData(compression: Int = 6) throws -> Data {
        badge_gdImageSaveAlpha(pointer, 1)
        var size: Int32 = 0
        guard let bytes = badge_gdImagePngPtrEx(pointer, &size, Int32(max(0, min(9, compression)))), size > 0 else {
            throw BadgeError(.generationFailed, "libgd could not encode the PNG")
        }
        defer { badge_gdFree(bytes) }
        return Data(bytes: bytes, count: Int(size))
    }

    /// JPEG bytes at `quality` 1–100 (alpha is dropped); `progressive`
    /// writes libjpeg's progressive scan sequence (gd's interlace flag).
    public func jpegData(quality: Int = 90, progressive: Bool = false) throws -> Data {
        pointer.pointee.interlace = progressive ? 1 : 0
        return try encoded("JPEG") { size in badge_gdImageJpegPtr(pointer, size, Int32(max(1, min(100, quality)))) }
    }

    /// GIF bytes (gd quantises to a palette).
    public func gifData() throws -> Data {
        try encoded("GIF") { size in badge_gdImageGifPtr(pointer, size) }
    }

    /// Lossy WebP bytes at `quality` 1–100.
    public func webpData(quality: Int = 90) throws -> Data {
        try encoded("WebP") { size in badge_gdImageWebpPtrEx(pointer, size, Int32(max(1, min(100, quality)))) }
    }

    private func encoded(_ name: String, _ encode: (UnsafeMutablePointer<Int32>) -> UnsafeMutableRawPointer?) throws -> Data {
        var size: Int32 = 0
        guard let bytes = encode(&size), size > 0 else {
            throw LibGD.failure(BadgeError(.generationFailed, "libgd could not encode the \(name)"))
        }
        defer { badge_gdFree(bytes) }
        return Data(bytes: bytes, count: Int(size))
    }

    // MARK: - Decoding

    private static let errorCounter: Void = badge_gd_install_error_counter()

    /// Decodes a PNG that `ImageIntake` has already checked (signature, CRCs,
    /// dimensions within `limits`); refuses it if gd reports any problem.
    public static func decodePNG(_ data: Data, limits: ImageLimits = .default, source: String? = nil) throws -> GDImage {
        try decode(data, accepting: [.png], limits: limits, source: source)
    }

    /// Decodes PNG, JPEG, GIF (first frame) or still WebP, chosen by the bytes.
    /// The intake checks format and dimensions against `limits` first, so gd
    /// never allocates for a decode bomb; any warning gd raises while decoding
    /// (a truncated JPEG or GIF still "decodes") refuses the image.
    ///
    /// `fitting` says what the image is for, so a JPEG can be decoded at a
    /// fraction of its size when that still covers it (shrink-on-load).
    /// A JPEG is decoded by libjpeg under `stop` and a scan limit
    /// (`decodeScaledJPEG`); gd decodes only what libjpeg cannot give as RGB.
    public static func decode(
        _ data: Data, accepting accepted: Set<ImageFormat> = Set(ImageFormat.allCases), limits: ImageLimits = .default,
        source: String? = nil, fitting: Fitting? = nil, stop: DecodeStop = DecodeStop()
    ) throws -> GDImage {
        let header = try ImageIntake(limits: limits).inspect(data, accepting: accepted, source: source)
        return try decode(data, inspected: header, source: source, fitting: fitting, stop: stop)
    }

    /// Decodes bytes the intake has already inspected (`header` is what it read).
    package static func decode(
        _ data: Data, inspected header: ImageIntake.Header, source: String? = nil, fitting: Fitting? = nil,
        stop: DecodeStop = DecodeStop()
    ) throws -> GDImage {
        let prepared = header.format == .png ? try PNGForGD.prepare(data, source: source) : data
        let orientation = header.format == .jpeg ? ImageIntake.jpegOrientation(data) : 1
        if header.format == .jpeg {
            let eighths = fitting?.jpegEighths(width: header.width, height: header.height) ?? 8
            if let scaled = try decodeScaledJPEG(data, eighths: eighths, orientation: orientation, source: source, stop: stop) {
                return scaled
            }
        }
        let decoded = try gdDecode(prepared, format: header.format, source: source)
        return orientation != 1 ? try decoded.oriented(orientation) : decoded
    }

    /// gd's own decoder for bytes the intake has passed; refuses the image
    /// if gd reported any problem.
    static func gdDecode(_ data: Data, format: ImageFormat, source: String?) throws -> GDImage {
        let name = format.rawValue.uppercased()
        try LibGD.load()
        _ = errorCounter
        badge_gd_reset_problems()
        let image: gdImagePtr? = data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return nil }
            let bytes = UnsafeMutableRawPointer(mutating: base)
            switch format {
            case .png: return badge_gdImageCreateFromPngPtr(Int32(raw.count), bytes)
            case .jpeg: return badge_gdImageCreateFromJpegPtrEx(Int32(raw.count), bytes, 0)
            case .gif: return badge_gdImageCreateFromGifPtr(Int32(raw.count), bytes)
            case .webp: return badge_gdImageCreateFromWebpPtr(Int32(raw.count), bytes)
            }
        }
        let problems = badge_gd_problems()
        guard let image else {
            throw LibGD.failure(BadgeError(.invalidImage, "the \(name) could not be decoded", path: source, hint: "the file is corrupt or truncated"))
        }
        let decoded = GDImage(taking: image)
        guard problems == 0 else {
            throw BadgeError(.invalidImage, "the \(name) is corrupt or truncated (the decoder reported \(problems) problem\(problems == 1 ? "" : "s"))",
                             path: source, hint: "the image data is damaged; export it again")
        }
        if badge_gd_is_truecolor(image) == 0 {
            badge_gdImagePaletteToTrueColor(image)
        }
        return decoded
    }

    // MARK: - Orientation

    /// This image as EXIF orientation `orientation` (1–8) says it should be shown.
    public func oriented(_ orientation: Int) throws -> GDImage {
        guard (2...8).contains(orientation) else { return self }
        let w = width, h = height
        let swaps = orientation >= 5
        let out = try GDImage(width: swaps ? h : w, height: swaps ? w : h)
        for y in 0..<out.height {
            let row = badge_gd_row(out.pointer, Int32(y))!
            for x in 0..<out.width {
                let (sx, sy) = Self.storedPixel(shownAt: x, y, orientation: orientation, width: w, height: h)
                row[x] = badge_gd_row(pointer, Int32(sy))![sx]
            }
        }
        return out
    }

    /// For the pixel shown at (x, y), the stored pixel it comes from, in an
    /// image stored `width`×`height` with EXIF orientation `orientation`.
    @inline(__always)
    static func storedPixel(shownAt x: Int, _ y: Int, orientation: Int, width w: Int, height h: Int) -> (Int, Int) {
        switch orientation {
        case 2: return (w - 1 - x, y)
        case 3: return (w - 1 - x, h - 1 - y)
        case 4: return (x, h - 1 - y)
        case 5: return (y, x)
        case 6: return (y, h - 1 - x)
        case 7: return (w - 1 - y, h - 1 - x)
        case 8: return (w - 1 - y, x)
        default: return (x, y)
        }
    }

    // MARK: - Resampling

    /// What shows behind the picture: in the letterbox bars of `contain`, and
    /// through transparent pixels.
    public enum Backdrop: Sendable, Hashable {
        /// Kept transparent (the PNG keeps its alpha).
        case transparent
        case color(RGBA)
        /// The picture itself, filling the square, strongly blurred and a little dimmed.
        case blurred
    }

    /// A `side`×`side` square of this image: `cover` crops the centre, `contain`
    /// letterboxes it on `background` (cover keeps transparency).
    public func squared(side: Int, contain: Bool, background: RGBA) throws -> GDImage {
        try squared(side: side, contain: contain, backdrop: contain ? .color(background) : .transparent)
    }

    /// A `side`×`side` square of this image over `backdrop`: `cover` crops the
    /// centre, `contain` shows all of it.
    public func squared(side: Int, contain: Bool, backdrop: Backdrop) throws -> GDImage {
        let w = Double(width), h = Double(height), s = Double(side)
        let crop = min(w, h)
        let sx = Int32(((w - crop) / 2).rounded()), sy = Int32(((h - crop) / 2).rounded())
        // Within 2x, bilinear sampling loses nothing and is several times faster
        // than gd's area-averaging copy, which shrinking further still needs.
        let bilinear = !contain && crop / s <= 2
        if bilinear, backdrop == .transparent, let scaled = try? croppedAndScaled(x: sx, y: sy, crop: Int32(crop), side: side) {
            // Copying it onto a transparent square would give the same pixels: it is the square.
            badge_gdImageAlphaBlending(scaled.pointer, 0)
            badge_gdImageSaveAlpha(scaled.pointer, 1)
            return scaled
        }
        let target: GDImage
        switch backdrop {
        case .transparent:
            target = try GDImage(width: side, height: side)
        case let .color(color):
            target = try GDImage(width: side, height: side)
            let fill = Self.gdColor(color.r, color.g, color.b, color.a)
            for y in 0..<Int32(side) {
                let row = badge_gd_row(target.pointer, y)!
                for x in 0..<side { row[x] = fill }
            }
        case .blurred:
            // Blurred small and scaled up: the same softness for a fraction of the work.
            let small = max(16, side / 4)
            let filled = try squared(side: small, contain: false, backdrop: .color(.white))
            // Bilinear scaling: gd's resampled copy enlarges in visible steps.
            let soft = try filled.blurred(radius: max(2, small / 12)).scaledBilinear(side: side)
            let dim = Int32(102) << 24  // black at 80 % transparency
            badge_gdImageAlphaBlending(soft.pointer, 1)
            badge_gdImageFilledRectangle(soft.pointer, 0, 0, Int32(side - 1), Int32(side - 1), dim)
            target = soft
        }
        // Over a backdrop, transparent pixels are composited; on a transparent one, copied as they are.
        badge_gdImageAlphaBlending(target.pointer, backdrop == .transparent ? 0 : 1)
        if contain {
            let scale = min(s / w, s / h)
            let dw = max(1, Int((w * scale).rounded())), dh = max(1, Int((h * scale).rounded()))
            badge_gdImageCopyResampled(target.pointer, pointer, Int32((side - dw) / 2), Int32((side - dh) / 2), 0, 0,
                                 Int32(dw), Int32(dh), Int32(width), Int32(height))
        } else {
            if bilinear, let scaled = try? croppedAndScaled(x: sx, y: sy, crop: Int32(crop), side: side) {
                badge_gdImageCopy(target.pointer, scaled.pointer, 0, 0, 0, 0, Int32(side), Int32(side))
            } else {
                badge_gdImageCopyResampled(target.pointer, pointer, 0, 0, sx, sy, Int32(side), Int32(side), Int32(crop), Int32(crop))
            }
        }
        badge_gdImageAlphaBlending(target.pointer, 0)
        return target
    }
}

extension GDImage {
    /// The `crop`×`crop` square at (`x`, `y`), scaled bilinearly to `side`×`side`.
    func croppedAndScaled(x: Int32, y: Int32, crop: Int32, side: Int) throws -> GDImage {
        var rect = gdRect(x: x, y: y, width: crop, height: crop)
        guard let cropped = badge_gdImageCrop(pointer, &rect) else {
            throw BadgeError(.generationFailed, "libgd could not crop a \(crop)×\(crop) square", hint: "is memory short?")
        }
        return try GDImage(taking: cropped).scaledBilinear(side: side)
    }

    /// This image scaled bilinearly to `side`×`side`.
    func scaledBilinear(side: Int) throws -> GDImage {
        badge_gdImageSetInterpolationMethod(pointer, GD_BILINEAR_FIXED)
        guard let scaled = badge_gdImageScale(pointer, UInt32(side), UInt32(side)) else {
            throw BadgeError(.generationFailed, "libgd could not scale an image to \(side)×\(side)", hint: "is memory short?")
        }
        return GDImage(taking: scaled)
    }

    /// This image resampled to `width`×`height` (aspect ratio not kept).
    public func resized(width newWidth: Int, height newHeight: Int) throws -> GDImage {
        let target = try GDImage(width: newWidth, height: newHeight)
        badge_gdImageCopyResampled(target.pointer, pointer, 0, 0, 0, 0, Int32(newWidth), Int32(newHeight), Int32(width), Int32(height))
        return target
    }
}

/// Full decoding for the pipeline's check of untrusted images.
public struct GDImageDecoder: ImageDecoding {
    public init() {}

    public func validate(_ data: Data, header: ImageIntake.Header, stop: DecodeStop) async throws {
        try await BlockingExecutor.run { _ = try GDImage.decode(data, inspected: header, stop: stop) }
    }

    public func normalized(_ data: Data, header: ImageIntake.Header, side: Int, stop: DecodeStop) async throws -> Data {
        try await BlockingExecutor.run {
            let image = try GDImage.decode(data, inspected: header, fitting: .init(side: side, cover: true), stop: stop)
            let square = image.width == side && image.height == side
                ? image : try image.squared(side: side, contain: false, background: .white)
            return try square.pngData(compression: 3)
        }
    }
}
