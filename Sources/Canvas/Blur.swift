import BadgeKit
import CGD
import Foundation

extension GDImage {
    /// A gaussian-blurred copy (gd's `gdImageCopyGaussianBlurred`), for soft
    /// shadows and glows drawn as a separate layer. `sigma` 0 lets gd choose
    /// (two thirds of the radius).
    public func blurred(radius: Int, sigma: Double = 0) throws -> GDImage {
        guard radius >= 1 else { return try copy() }
        guard let result = badge_gdImageCopyGaussianBlurred(pointer, Int32(min(radius, 512)), sigma) else {
            throw BadgeError(.generationFailed, "libgd could not blur a \(width)×\(height) image", hint: "is memory short?")
        }
        badge_gdImageAlphaBlending(result, 0)
        badge_gdImageSaveAlpha(result, 1)
        return GDImage(taking: result)
    }

    /// An identical, independent image.
    public func copy() throws -> GDImage {
        let out = try GDImage(width: width, height: height)
        badge_gdImageCopy(out.pointer, pointer, 0, 0, 0, 0, Int32(width), Int32(height))
        return out
    }
}

extension Canvas {
    /// A canvas holding `image`'s pixels (gd keeps 7 bits of alpha, so alpha
    /// comes back in steps of two).
    public convenience init(_ image: GDImage) throws {
        try self.init(width: image.width, height: image.height)
        for y in 0..<height {
            for x in 0..<width { setPixel(x, y, image.pixel(x, y)) }
        }
    }

    /// Replaces one pixel (no blending); outside the canvas does nothing.
    public func setPixel(_ x: Int, _ y: Int, _ color: RGBA) {
        guard x >= 0, y >= 0, x < width, y < height else { return }
        let i = (y * width + x) * 4
        pixels[i] = color.r
        pixels[i + 1] = color.g
        pixels[i + 2] = color.b
        pixels[i + 3] = color.a
    }

    /// Composites `layer` over this canvas at `opacity`, top-left corners
    /// together (only where both have pixels): how a blurred shadow layer is
    /// laid under the art.
    public func composite(_ layer: Canvas, opacity: Double = 1) {
        let w = min(width, layer.width), h = min(height, layer.height)
        let width = self.width
        layer.pixels.withUnsafeBufferPointer { src in
            pixels.withUnsafeMutableBufferPointer { dst in
                for y in 0..<h {
                    for x in 0..<w {
                        let s = (y * layer.width + x) * 4
                        guard src[s + 3] > 0 else { continue }
                        Self.blend(dst, at: (y * width + x) * 4, (Double(src[s]), Double(src[s + 1]), Double(src[s + 2]), Double(src[s + 3])), opacity)
                    }
                }
            }
        }
    }
}
