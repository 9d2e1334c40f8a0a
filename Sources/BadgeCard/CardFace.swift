import Canvas
import Foundation

/// The card's shape, shared by both faces: a rounded square with the app's
/// corner radius (20 points on a 300-point card).
package enum CardShape {
    package static let cornerFraction = 20.0 / 300

    package static func cornerRadius(width: Int, height: Int) -> Double {
        Double(min(width, height)) * cornerFraction
    }

    /// Multiplies every pixel's alpha by the card's anti-aliased outline, so
    /// the corners are cut the way `.clipShape(RoundedRectangle(...))` cuts them.
    package static func clip(_ canvas: Canvas) throws {
        let mask = try Canvas(width: canvas.width, height: canvas.height)
        mask.fill(.roundedRect(x: 0, y: 0, width: Double(canvas.width), height: Double(canvas.height),
                               radius: cornerRadius(width: canvas.width, height: canvas.height)), with: .solid(.white))
        mask.withMutablePixels { m in
            canvas.withMutablePixels { px in
                for i in stride(from: 3, to: px.count, by: 4) where m[i] < 255 {
                    px[i] = UInt8((Int(px[i]) * Int(m[i]) + 127) / 255)
                }
            }
        }
    }

    /// A round badge's disc: transparent in its corners and opaque in its
    /// middle. `radius` reaches the edge of its opaque part along the middle
    /// row; `face` is the face within its rim (0.385 of 0.455, as the
    /// procedural badges draw it). Nil for a square picture.
    package struct Disc: Sendable, Equatable {
        package var center: Double
        package var radius: Double
        package var face: Double
    }

    package static func disc(of image: GDImage) -> Disc? {
        let w = image.width, h = image.height
        guard w == h, w >= 16 else { return nil }
        let inset = max(1, w / 64)
        let corners = [(inset, inset), (w - 1 - inset, inset), (inset, h - 1 - inset), (w - 1 - inset, h - 1 - inset)]
        guard corners.allSatisfy({ image.pixel($0.0, $0.1).a == 0 }), image.pixel(w / 2, h / 2).a == 255 else { return nil }
        guard let left = (0..<(w / 2)).first(where: { image.pixel($0, h / 2).a >= 128 }) else { return nil }
        let center = Double(w) / 2, radius = center - Double(left)
        return Disc(center: center, radius: radius, face: radius * 0.385 / 0.455)
    }

    /// The badge as the card's front: its picture with the corners rounded.
    package static func front(_ badge: GDImage) throws -> Canvas {
        let canvas = try Canvas(badge)
        try clip(canvas)
        return canvas
    }
}
