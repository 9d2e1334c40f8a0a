import BadgeKit
import CGD
import Foundation

/// Text through FreeType, with the font found by fontconfig.
public struct Font: Sendable {
    /// A fontconfig pattern ("DejaVu Sans:bold") or a font file's path.
    public var name: String

    public init(_ name: String) { self.name = name }

    public static let captionPattern = Font("DejaVu Sans:bold")
    public static let captionFile = Font("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")

    private static let fontConfig: Void = {
        gdFontCacheSetup()
        _ = gdFTUseFontConfig(1)
    }()

    /// The first of the caption fonts that FreeType can open here.
    public static func caption() throws -> Font {
        for font in [captionPattern, captionFile] where (try? font.measure("Ag", pixelSize: 20)) != nil {
            return font
        }
        throw BadgeError(.generationFailed, "no caption font was found (DejaVu Sans Bold)",
                         hint: "install it: apt-get install fonts-dejavu-core fontconfig")
    }

    /// The ink box of `text` at `pixelSize`: width, height, and the offset of its
    /// top-left corner from the baseline origin.
    public func measure(_ text: String, pixelSize: Double) throws -> (width: Int, height: Int, left: Int, top: Int) {
        _ = Self.fontConfig
        var box = [Int32](repeating: 0, count: 8)
        let error = name.withCString { fontName in
            text.withCString { string in
                gdImageStringFT(nil, &box, 0, UnsafeMutablePointer(mutating: fontName), Self.points(pixelSize), 0, 0, 0,
                                UnsafeMutablePointer(mutating: string))
            }
        }
        if let error {
            throw BadgeError(.generationFailed, "cannot render text with the font \"\(name)\"", cause: String(cString: error))
        }
        // brect: lower-left, lower-right, upper-right, upper-left (x, y).
        let left = Int(min(box[0], box[6])), right = Int(max(box[2], box[4]))
        let top = Int(min(box[5], box[7])), bottom = Int(max(box[1], box[3]))
        return (right - left, bottom - top, left, top)
    }

    static func points(_ pixelSize: Double) -> Double { pixelSize * 72 / 96 }
}

extension GDImage {
    /// Draws `text` anti-aliased with its ink box's top-left corner at (x, y).
    public func draw(_ text: String, font: Font, pixelSize: Double, color: RGBA, x: Int, y: Int) throws {
        let box = try font.measure(text, pixelSize: pixelSize)
        gdImageAlphaBlending(pointer, 1)
        defer { gdImageAlphaBlending(pointer, 0) }
        var brect = [Int32](repeating: 0, count: 8)
        let error = font.name.withCString { fontName in
            text.withCString { string in
                gdImageStringFT(pointer, &brect, Self.gdColor(color.r, color.g, color.b, color.a),
                                UnsafeMutablePointer(mutating: fontName), Font.points(pixelSize), 0,
                                Int32(x - box.left), Int32(y - box.top), UnsafeMutablePointer(mutating: string))
            }
        }
        if let error {
            throw BadgeError(.generationFailed, "cannot draw text", cause: String(cString: error))
        }
    }
}

extension Canvas {
    /// Draws `text` with its ink box's top-left corner at (x, y): FreeType renders
    /// it into a small gd image just big enough, which is composited here, so the
    /// canvas never needs a full-size gd copy.
    public func draw(_ text: String, font: Font, pixelSize: Double, color: RGBA, x: Int, y: Int) throws {
        let box = try font.measure(text, pixelSize: pixelSize)
        let pad = 2
        let label = try GDImage(width: box.width + pad * 2, height: box.height + pad * 2)
        try label.draw(text, font: font, pixelSize: pixelSize, color: color, x: pad, y: pad)
        pixels.withUnsafeMutableBufferPointer { buffer in
            for ly in 0..<label.height {
                let cy = y - pad + ly
                guard cy >= 0 && cy < height else { continue }
                for lx in 0..<label.width {
                    let cx = x - pad + lx
                    guard cx >= 0 && cx < width else { continue }
                    let p = label.pixel(lx, ly)
                    guard p.a > 0 else { continue }
                    Self.blend(buffer, at: (cy * width + cx) * 4, (Double(p.r), Double(p.g), Double(p.b), 255), Double(p.a) / 255)
                }
            }
        }
    }
}
