import Canvas
import Foundation

/// A face of the card as premultiplied floating-point RGBA, so that bilinear
/// sampling never darkens the transparent edge.
package struct FaceTexture: Sendable {
    package let width: Int
    package let height: Int
    let texels: [Float]

    package init(_ canvas: Canvas) {
        width = canvas.width
        height = canvas.height
        var texels = [Float](repeating: 0, count: canvas.width * canvas.height * 4)
        canvas.pixels.withUnsafeBufferPointer { px in
            for i in 0..<(canvas.width * canvas.height) {
                let a = Float(px[i * 4 + 3]) / 255
                texels[i * 4] = Float(px[i * 4]) * a
                texels[i * 4 + 1] = Float(px[i * 4 + 1]) * a
                texels[i * 4 + 2] = Float(px[i * 4 + 2]) * a
                texels[i * 4 + 3] = a * 255
            }
        }
        self.texels = texels
    }
}

/// Renders a face turned about its vertical axis as a pinhole camera sees it:
/// the edge that comes toward the camera grows, the one that goes away
/// shrinks. Each output pixel is traced back onto the card (inverse mapping)
/// and sampled bilinearly; where the card is steeply foreshortened, several
/// samples across the pixel's footprint are averaged so the picture does not
/// shimmer.
package struct PerspectiveWarp: Sendable {
    /// Side of the square output, in pixels.
    package let outputSize: Int
    /// Side of the card at rest, in output pixels. Smaller than the output, so
    /// the near edge has room to grow as the card turns.
    package let cardSide: Double
    /// Distance of the camera from the card, in output pixels.
    package let cameraDistance: Double

    /// With the camera `distance` card widths away, the near edge at 90° is
    /// distance/(distance − ½) times the card's height; the card is shrunk by
    /// that much so nothing is ever cut off.
    package init(outputSize: Int, distance: Double = 3) {
        self.outputSize = outputSize
        let growth = distance / (distance - 0.5)
        cardSide = Double(outputSize) / growth
        cameraDistance = distance * cardSide
    }

    /// The card showing `face` turned by `degrees` about its vertical axis
    /// (positive: the right edge goes away from the camera), on a transparent
    /// background. `degrees` within ±90° shows the face's front side; beyond,
    /// its reverse, which is what callers avoid by choosing the face with
    /// `CardSide.showing(at:)`.
    package func render(_ face: FaceTexture, degrees: Double, into canvas: Canvas) {
        precondition(canvas.width == outputSize && canvas.height == outputSize, "the canvas must be the output size")
        let theta = degrees * .pi / 180
        let cosT = cos(theta), sinT = sin(theta)
        let d = cameraDistance
        let half = Double(outputSize) / 2
        let scaleX = Double(face.width) / cardSide, scaleY = Double(face.height) / cardSide
        let w = outputSize

        // For screen column sx the ray meets the card at parameter t along the
        // camera ray (independent of the row) and at card coordinate X.
        func trace(_ sx: Double) -> (t: Double, x: Double)? {
            let denominator = d * cosT - sx * sinT
            guard abs(denominator) > 1e-9 else { return nil }
            let t = d * cosT / denominator
            guard t > 0 else { return nil }
            return (t, t * sx * cosT - d * (1 - t) * sinT)
        }

        canvas.withMutablePixels { out in
            face.texels.withUnsafeBufferPointer { tex in
                for column in 0..<w {
                    let sx = Double(column) + 0.5 - half
                    guard let centre = trace(sx), let left = trace(sx - 0.5), let right = trace(sx + 0.5) else { continue }
                    let uLeft = (left.x + cardSide / 2) * scaleX, uRight = (right.x + cardSide / 2) * scaleX
                    let lo = min(uLeft, uRight), hi = max(uLeft, uRight)
                    if hi < -1 || lo > Double(face.width) + 1 { continue }
                    let samples = max(1, min(32, Int((hi - lo).rounded(.up))))
                    for row in 0..<w {
                        let sy = Double(row) + 0.5 - half
                        let v = (centre.t * sy + cardSide / 2) * scaleY - 0.5
                        if v < -1 || v > Double(face.height) { continue }
                        var acc: (Float, Float, Float, Float) = (0, 0, 0, 0)
                        for k in 0..<samples {
                            let u = lo + (hi - lo) * (Double(k) + 0.5) / Double(samples) - 0.5
                            let s = Self.bilinear(tex, face.width, face.height, u, v)
                            acc = (acc.0 + s.0, acc.1 + s.1, acc.2 + s.2, acc.3 + s.3)
                        }
                        let n = Float(samples)
                        let a = acc.3 / n
                        guard a > 0.5 else { continue }
                        let i = (row * w + column) * 4
                        let inverse = 255 / a
                        out[i] = UInt8(min(255, acc.0 / n * inverse + 0.5))
                        out[i + 1] = UInt8(min(255, acc.1 / n * inverse + 0.5))
                        out[i + 2] = UInt8(min(255, acc.2 / n * inverse + 0.5))
                        out[i + 3] = UInt8(min(255, a + 0.5))
                    }
                }
            }
        }
    }

    /// Premultiplied bilinear sample at texel coordinates (texel centres at
    /// integers); outside the face is transparent, which anti-aliases the edge.
    @inline(__always)
    static func bilinear(_ tex: UnsafeBufferPointer<Float>, _ width: Int, _ height: Int, _ u: Double, _ v: Double) -> (Float, Float, Float, Float) {
        let x0 = Int(u.rounded(.down)), y0 = Int(v.rounded(.down))
        let fx = Float(u - Double(x0)), fy = Float(v - Double(y0))
        var r: Float = 0, g: Float = 0, b: Float = 0, a: Float = 0
        @inline(__always) func add(_ x: Int, _ y: Int, _ weight: Float) {
            guard weight > 0, x >= 0, y >= 0, x < width, y < height else { return }
            let i = (y * width + x) * 4
            r += tex[i] * weight
            g += tex[i + 1] * weight
            b += tex[i + 2] * weight
            a += tex[i + 3] * weight
        }
        add(x0, y0, (1 - fx) * (1 - fy))
        add(x0 + 1, y0, fx * (1 - fy))
        add(x0, y0 + 1, (1 - fx) * fy)
        add(x0 + 1, y0 + 1, fx * fy)
        return (r, g, b, a)
    }
}
