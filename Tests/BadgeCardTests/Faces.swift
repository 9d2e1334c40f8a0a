import BadgeCard
import BadgeKit
import Canvas
import Foundation

/// Test pictures: a front that is easy to tell from the back (dark, with a
/// bright mark in one corner, so a mirror image shows).
enum Faces {
    static func front(side: Int = 256) throws -> GDImage {
        let canvas = try Canvas(width: side, height: side, background: RGBA(20, 24, 70))
        let s = Double(side)
        canvas.fill(.circle(center: Point(s * 0.28, s * 0.28), radius: s * 0.16), with: .solid(RGBA(250, 160, 30)))
        canvas.fill(.roundedRect(x: s * 0.55, y: s * 0.62, width: s * 0.3, height: s * 0.12, radius: s * 0.03), with: .solid(.white))
        return try GDImage(canvas)
    }

    static func back(date: String = "November 22, 2026") throws -> BackFace {
        BackFace(date: date, font: try Font.caption())
    }

    static func mean(_ canvas: Canvas, x: Int, y: Int, width: Int, height: Int) -> (r: Double, g: Double, b: Double, a: Double) {
        var sum = (0.0, 0.0, 0.0, 0.0)
        for yy in y..<(y + height) {
            for xx in x..<(x + width) {
                let p = canvas.pixel(xx, yy)
                sum = (sum.0 + Double(p.r), sum.1 + Double(p.g), sum.2 + Double(p.b), sum.3 + Double(p.a))
            }
        }
        let n = Double(width * height)
        return (sum.0 / n, sum.1 / n, sum.2 / n, sum.3 / n)
    }

    static func luminance(_ c: (r: Double, g: Double, b: Double, a: Double)) -> Double {
        (0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b) / 255
    }
}
