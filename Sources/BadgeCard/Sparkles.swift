import Canvas
import Foundation

/// The "sparkles" symbol drawn as vector shapes: three four-pointed stars
/// with concave sides, big, medium and small, laid out like SF Symbols'
/// glyph. Drawn rather than typeset, so it never depends on a font having it.
package enum Sparkles {
    /// (centre x, centre y, half-height) in a unit box; each star is a little
    /// narrower than it is tall.
    static let stars: [(x: Double, y: Double, r: Double)] = [
        (0.40, 0.60, 0.40),
        (0.80, 0.20, 0.20),
        (0.82, 0.83, 0.13),
    ]

    /// Draws the symbol filling the square of side `size` at (x, y).
    package static func draw(on canvas: Canvas, x: Double, y: Double, size: Double, color: RGBA) {
        for star in stars {
            canvas.fill(.polygon(points(cx: x + star.x * size, cy: y + star.y * size, rx: star.r * size * 0.82, ry: star.r * size)),
                        with: .solid(color))
        }
    }

    /// A superellipse |x/rx|^(2/e) + |y/ry|^(2/e) = 1 with e > 2: four points
    /// joined by inward-curving sides, like a sparkle.
    static func points(cx: Double, cy: Double, rx: Double, ry: Double, exponent e: Double = 2.6) -> [Point] {
        let count = 96
        return (0..<count).map { k in
            let t = Double(k) / Double(count) * 2 * .pi
            let c = cos(t), s = sin(t)
            let px = (c < 0 ? -1.0 : 1.0) * pow(abs(c), e)
            let py = (s < 0 ? -1.0 : 1.0) * pow(abs(s), e)
            return Point(cx + rx * px, cy + ry * py)
        }
    }
}
