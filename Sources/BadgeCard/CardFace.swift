import Canvas
import Foundation

/// The card's shape, shared by both faces: a rounded square with the app's
/// corner radius (20 points on a 300-point card).
public enum CardShape {
    public static let cornerFraction = 20.0 / 300

    public static func cornerRadius(width: Int, height: Int) -> Double {
        Double(min(width, height)) * cornerFraction
    }

    /// Multiplies every pixel's alpha by the card's anti-aliased outline, so
    /// the corners are cut the way `.clipShape(RoundedRectangle(...))` cuts them.
    public static func clip(_ canvas: Canvas) throws {
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

    /// The badge as the card's front: its picture with the corners rounded.
    public static func front(_ badge: GDImage) throws -> Canvas {
        let canvas = try Canvas(badge)
        try clip(canvas)
        return canvas
    }
}
