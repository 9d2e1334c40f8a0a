import Canvas
import Foundation

/// Frosted glass in front of the badge, like `.ultraThinMaterial` in light
/// mode: the front laid on a pale sheet, shrunk to a few dozen pixels,
/// blurred, and enlarged again with a cubic B-spline (smooth at any
/// enlargement, where bilinear shows creases), then washed toward white with
/// a faint sheen from the top. Cheap at any size: the blur runs on the small copy.
enum FrostedMaterial {
    static let paper = RGBA(246, 246, 248)
    static let smallSide = 32.0
    /// WCAG luminance: against the ink (0.011) a contrast of 9:1 or more.
    static let minimumLuminance = 0.5

    static func render(_ front: GDImage) throws -> Canvas {
        let w = front.width, h = front.height
        let scale = smallSide / Double(max(w, h))
        let sw = max(4, Int((Double(w) * scale).rounded())), sh = max(4, Int((Double(h) * scale).rounded()))
        let flat = try Canvas(width: sw, height: sh, background: paper)
        flat.composite(try Canvas(try front.resized(width: sw, height: sh)))
        let blurred = try Canvas(try GDImage(flat).blurred(radius: 3))
        let canvas = try enlarge(blurred, width: w, height: h)
        // Washed at least 45% toward the paper, and more where the badge is
        // dark, so the dark ink on top always reads.
        let paperLuminance = paper.luminance
        canvas.withMutablePixels { px in
            for i in stride(from: 0, to: px.count, by: 4) {
                let colour = RGBA(px[i], px[i + 1], px[i + 2])
                let l = colour.luminance
                let wash = max(0.45, (minimumLuminance - l) / max(paperLuminance - l, 0.01))
                let c = colour.mixed(with: paper, min(1, wash))
                px[i] = c.r
                px[i + 1] = c.g
                px[i + 2] = c.b
                px[i + 3] = 255
            }
        }
        canvas.fill(.roundedRect(x: 0, y: 0, width: Double(w), height: Double(h), radius: 0),
                    with: .linear(start: Point(0, 0), end: Point(0, Double(h)),
                                  stops: [(0, RGBA(255, 255, 255, 110)), (0.6, RGBA(255, 255, 255, 0))]))
        return canvas
    }

    /// Separable cubic B-spline enlargement of an opaque canvas.
    static func enlarge(_ source: Canvas, width: Int, height: Int) throws -> Canvas {
        let sw = source.width, sh = source.height
        var src = [Double](repeating: 0, count: sw * sh * 3)
        for y in 0..<sh {
            for x in 0..<sw {
                let p = source.pixel(x, y)
                src[(y * sw + x) * 3] = Double(p.r)
                src[(y * sw + x) * 3 + 1] = Double(p.g)
                src[(y * sw + x) * 3 + 2] = Double(p.b)
            }
        }
        // Rows first: sh rows of `width` samples.
        var rows = [Double](repeating: 0, count: width * sh * 3)
        for x in 0..<width {
            let (first, weights) = taps(Double(x), from: sw, to: width)
            for y in 0..<sh {
                for c in 0..<3 {
                    var v = 0.0
                    for k in 0..<4 { v += weights[k] * src[(y * sw + clamp(first + k, sw)) * 3 + c] }
                    rows[(y * width + x) * 3 + c] = v
                }
            }
        }
        let out = try Canvas(width: width, height: height)
        out.withMutablePixels { px in
            for y in 0..<height {
                let (first, weights) = taps(Double(y), from: sh, to: height)
                for x in 0..<width {
                    let i = (y * width + x) * 4
                    for c in 0..<3 {
                        var v = 0.0
                        for k in 0..<4 { v += weights[k] * rows[(clamp(first + k, sh) * width + x) * 3 + c] }
                        px[i + c] = UInt8(max(0, min(255, v + 0.5)))
                    }
                    px[i + 3] = 255
                }
            }
        }
        return out
    }

    private static func clamp(_ i: Int, _ count: Int) -> Int { max(0, min(count - 1, i)) }

    /// The four source samples around output position `o` and their B-spline weights.
    private static func taps(_ o: Double, from n: Int, to m: Int) -> (Int, [Double]) {
        let s = (o + 0.5) * Double(n) / Double(m) - 0.5
        let i = Int(s.rounded(.down))
        let t = s - Double(i)
        let t2 = t * t, t3 = t2 * t
        return (i - 1, [
            (1 - t) * (1 - t) * (1 - t) / 6,
            (3 * t3 - 6 * t2 + 4) / 6,
            (-3 * t3 + 3 * t2 + 3 * t + 1) / 6,
            t3 / 6,
        ])
    }
}
