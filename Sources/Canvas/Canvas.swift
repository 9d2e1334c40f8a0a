import BadgeKit
import Foundation

/// An RGBA raster drawn in Swift: anti-aliased shapes by coverage, dithered
/// gradients, soft shadows. Text and encoding go through libgd (`GDImage`).
/// Not thread-safe: one canvas belongs to one drawing call.
public final class Canvas {
    public let width: Int
    public let height: Int
    /// Straight-alpha RGBA, row-major, 4 bytes a pixel.
    public private(set) var pixels: [UInt8]

    public static let maxSide = 8192

    public init(width: Int, height: Int, background: RGBA = .clear) throws {
        guard (1...Self.maxSide).contains(width), (1...Self.maxSide).contains(height) else {
            throw BadgeError(.usage, "a canvas of \(width)×\(height) pixels is out of range",
                             hint: "use 1 to \(Self.maxSide) pixels a side")
        }
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 0, count: width * height * 4)
        if background != .clear { fill(.roundedRect(x: 0, y: 0, width: Double(width), height: Double(height), radius: 0), with: .solid(background)) }
    }

    public func pixel(_ x: Int, _ y: Int) -> RGBA {
        let i = (y * width + x) * 4
        return RGBA(pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3])
    }

    /// Fills `shape` with `paint`. `softness` (pixels) widens the edge into a
    /// smooth falloff, for shadows and glows; 0 gives a crisp anti-aliased edge.
    public func fill(_ shape: Shape, with paint: Paint, opacity: Double = 1, softness: Double = 0) {
        let box = shape.bounds(margin: softness)
        let x0 = max(0, Int(box.x0.rounded(.down))), y0 = max(0, Int(box.y0.rounded(.down)))
        let x1 = min(width, Int(box.x1.rounded(.up))), y1 = min(height, Int(box.y1.rounded(.up)))
        guard x0 < x1, y0 < y1, opacity > 0 else { return }
        let sampler = PaintSampler(paint)
        let soft = max(softness, 0)
        pixels.withUnsafeMutableBufferPointer { buffer in
            for y in y0..<y1 {
                let py = Double(y) + 0.5
                var i = (y * width + x0) * 4
                for x in x0..<x1 {
                    defer { i += 4 }
                    let d = shape.distance(Double(x) + 0.5, py)
                    var coverage: Double
                    if soft > 0 {
                        let t = max(0, min(1, (soft - d) / (2 * soft)))
                        coverage = t * t * (3 - 2 * t)
                    } else {
                        coverage = max(0, min(1, 0.5 - d))
                    }
                    coverage *= opacity
                    if coverage <= 0 { continue }
                    let color = sampler.color(x, y)
                    Self.blend(buffer, at: i, color, coverage)
                }
            }
        }
    }

    /// Source-over compositing of one straight-alpha colour (channels 0–255 as
    /// Doubles, already dithered) at `coverage`.
    @inline(__always)
    static func blend(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, _ c: (Double, Double, Double, Double), _ coverage: Double) {
        let sa = c.3 / 255 * coverage
        if sa <= 0 { return }
        let da = Double(buffer[i + 3]) / 255
        let keep = da * (1 - sa)
        let outA = sa + keep
        func channel(_ s: Double, _ d: UInt8) -> UInt8 {
            let v = (s * sa + Double(d) * keep) / outA
            return UInt8(max(0, min(255, v.rounded())))
        }
        buffer[i] = channel(c.0, buffer[i])
        buffer[i + 1] = channel(c.1, buffer[i + 1])
        buffer[i + 2] = channel(c.2, buffer[i + 2])
        buffer[i + 3] = UInt8(max(0, min(255, (outA * 255).rounded())))
    }
}

/// Evaluates a `Paint` at a pixel, with a 4×4 ordered dither on gradients so
/// that slow ramps never show bands. Deterministic: the dither depends only
/// on the pixel position.
struct PaintSampler {
    private static let bayer: [Double] = [0, 8, 2, 10, 12, 4, 14, 6, 3, 11, 1, 9, 15, 7, 13, 5].map { ($0 + 0.5) / 16 - 0.5 }

    let paint: Paint
    private let stops: [(Double, (Double, Double, Double, Double))]

    init(_ paint: Paint) {
        self.paint = paint
        switch paint {
        case .solid: stops = []
        case let .linear(_, _, s), let .radial(_, _, s):
            stops = s.sorted { $0.0 < $1.0 }.map { ($0.0, (Double($0.1.r), Double($0.1.g), Double($0.1.b), Double($0.1.a))) }
        }
    }

    @inline(__always)
    func color(_ x: Int, _ y: Int) -> (Double, Double, Double, Double) {
        let t: Double
        switch paint {
        case let .solid(c):
            return (Double(c.r), Double(c.g), Double(c.b), Double(c.a))
        case let .linear(start, end, _):
            let dx = end.x - start.x, dy = end.y - start.y
            let length = dx * dx + dy * dy
            t = length > 0 ? ((Double(x) + 0.5 - start.x) * dx + (Double(y) + 0.5 - start.y) * dy) / length : 0
        case let .radial(center, radius, _):
            let dx = Double(x) + 0.5 - center.x, dy = Double(y) + 0.5 - center.y
            t = radius > 0 ? (dx * dx + dy * dy).squareRoot() / radius : 0
        }
        let c = interpolate(max(0, min(1, t)))
        let n = Self.bayer[(y & 3) * 4 + (x & 3)]
        return (c.0 + n, c.1 + n, c.2 + n, c.3)
    }

    @inline(__always)
    private func interpolate(_ t: Double) -> (Double, Double, Double, Double) {
        guard let first = stops.first else { return (0, 0, 0, 0) }
        if t <= first.0 { return first.1 }
        for k in 1..<stops.count where t <= stops[k].0 {
            let (o0, a) = stops[k - 1], (o1, b) = stops[k]
            let u = o1 > o0 ? (t - o0) / (o1 - o0) : 0
            return (a.0 + (b.0 - a.0) * u, a.1 + (b.1 - a.1) * u, a.2 + (b.2 - a.2) * u, a.3 + (b.3 - a.3) * u)
        }
        return stops[stops.count - 1].1
    }
}
