import BadgeKit
import Foundation

/// An RGBA raster drawn in Swift: anti-aliased shapes by coverage, dithered
/// gradients, soft shadows. Text and encoding go through libgd (`GDImage`).
/// Not thread-safe: one canvas belongs to one drawing call.
public final class Canvas {
    public let width: Int
    public let height: Int
    /// Straight-alpha RGBA, row-major, 4 bytes a pixel.
    public internal(set) var pixels: [UInt8]
    /// How many threads may share the rows of one large shape (the result is
    /// the same for any number; 1 draws on the calling thread only).
    public var drawingThreads = Canvas.defaultDrawingThreads

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

    /// The RGBA bytes, for renderers that compute every pixel themselves
    /// (the card's perspective warp) rather than filling shapes.
    public func withMutablePixels<R>(_ body: (UnsafeMutableBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try pixels.withUnsafeMutableBufferPointer { try body($0) }
    }

    public func pixel(_ x: Int, _ y: Int) -> RGBA {
        let i = (y * width + x) * 4
        return RGBA(pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3])
    }

    /// Fills `shape` with `paint`. `softness` (pixels) widens the edge into a
    /// smooth falloff, for shadows and glows; 0 gives a crisp anti-aliased edge.
    public func fill(_ shape: Shape, with paint: Paint, opacity: Double = 1, softness: Double = 0) {
        let box = shape.bounds(margin: softness)
        // One specialised loop per kind of shape: the distance function is
        // inlined and no array is retained per pixel.
        switch shape {
        case let .circle(c, r): fill(CircleField(cx: c.x, cy: c.y, r: r), box, paint, opacity, softness)
        case let .ellipse(c, rx, ry): fill(EllipseField(cx: c.x, cy: c.y, rx: rx, ry: ry), box, paint, opacity, softness)
        case let .ring(c, inner, outer): fill(RingField(cx: c.x, cy: c.y, inner: inner, outer: outer), box, paint, opacity, softness)
        case let .roundedRect(x, y, w, h, r): fill(RectField(x: x, y: y, w: w, h: h, r: r), box, paint, opacity, softness)
        case let .capsule(a, b, r): fill(CapsuleField(a: a, b: b, r: r), box, paint, opacity, softness)
        case let .polyline(points, r): fill(PolylineField(points: points, r: r), box, paint, opacity, softness)
        case let .polygon(points): fill(PolygonField(points: points), box, paint, opacity, softness)
        }
    }

    private func fill<F: DistanceField>(
        _ field: F, _ box: (x0: Double, y0: Double, x1: Double, y1: Double), _ paint: Paint, _ opacity: Double, _ softness: Double
    ) {
        let x0 = max(0, Int(box.x0.rounded(.down))), y0 = max(0, Int(box.y0.rounded(.down)))
        let x1 = min(width, Int(box.x1.rounded(.up))), y1 = min(height, Int(box.y1.rounded(.up)))
        guard x0 < x1, y0 < y1, opacity > 0 else { return }
        let sampler = PaintSampler(paint)
        let soft = max(softness, 0)
        let width = self.width
        // Beyond `band` from the edge a pixel is wholly in or out: no distance needed.
        let band = soft > 0 ? soft : 0.5
        pixels.withUnsafeMutableBufferPointer { whole in
            let shared = SharedRows(buffer: whole)
            // Rows are independent (each writes only its own pixels, and the dither
            // depends on position alone), so a large shape is drawn on every core
            // with the very same result.
            let parts = (y1 - y0) * (x1 - x0) >= Self.parallelArea ? max(1, drawingThreads) : 1
            let draw: @Sendable (Int) -> Void = { k in
                let buffer = shared.buffer
                let from = y0 + (y1 - y0) * k / parts, to = y0 + (y1 - y0) * (k + 1) / parts
            for y in from..<to {
                let py = Double(y) + 0.5
                var rowStart = x0, rowEnd = x1
                var innerStart = Int.max, innerEnd = Int.min
                var holeStart = Int.max, holeEnd = Int.min
                if let span = field.span(y: py, band: band) {
                    rowStart = Swift.max(x0, Int((span.outer.lowerBound - 0.5).rounded(.down)))
                    rowEnd = Swift.min(x1, Int((span.outer.upperBound - 0.5).rounded(.up)) + 1)
                    if let inner = span.inner {
                        innerStart = Int((inner.lowerBound - 0.5).rounded(.up))
                        innerEnd = Int((inner.upperBound - 0.5).rounded(.down))
                    }
                    if let hole = span.hole {
                        holeStart = Int((hole.lowerBound - 0.5).rounded(.up))
                        holeEnd = Int((hole.upperBound - 0.5).rounded(.down))
                    }
                }
                guard rowStart < rowEnd else { continue }
                let field = field.row(y: py, band: band)
                var i = (y * width + rowStart) * 4
                var x = rowStart
                while x < rowEnd {
                    if x >= holeStart && x <= holeEnd {
                        // Every pixel of the hole is at least `band` outside: nothing to draw.
                        let next = Swift.min(rowEnd, holeEnd + 1)
                        i += (next - x) * 4
                        x = next
                        continue
                    }
                    defer {
                        i += 4
                        x += 1
                    }
                    var coverage: Double
                    if x >= innerStart && x <= innerEnd {
                        coverage = 1
                    } else {
                        let d = field.distance(Double(x) + 0.5, py)
                        if soft > 0 {
                            let t = max(0, min(1, (soft - d) / (2 * soft)))
                            coverage = t * t * (3 - 2 * t)
                        } else {
                            coverage = max(0, min(1, 0.5 - d))
                        }
                    }
                    coverage *= opacity
                    if coverage <= 0 { continue }
                    Self.blend(buffer, at: i, sampler.color(x, y), coverage)
                }
            }
            }
            if parts == 1 {
                draw(0)
            } else {
                DispatchQueue.concurrentPerform(iterations: parts, execute: draw)
            }
        }
    }

    /// Below this many pixels (about 724²) a shape is drawn on the calling thread
    /// alone: the big fills of a 1024 px badge gain from a second core, while a
    /// batch of smaller badges already keeps every core busy with one badge each.
    static let parallelArea = 1 << 19
    public static let defaultDrawingThreads = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))

    /// Source-over compositing of one straight-alpha colour (channels 0–255 as
    /// Doubles, already dithered) at `coverage`.
    @inline(__always)
    static func blend(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, _ c: (Double, Double, Double, Double), _ coverage: Double) {
        let sa = c.3 * (1.0 / 255) * coverage
        if sa <= 0 { return }
        // Values are clamped to 0...255 and rounded by adding 0.5 and truncating:
        // `rounded()` is a libm call on baseline x86-64, and this loop runs per pixel.
        @inline(__always) func byte(_ v: Double) -> UInt8 { UInt8(truncatingIfNeeded: Int(max(0, min(255, v)) + 0.5)) }
        if sa >= 1 {
            buffer[i] = byte(c.0)
            buffer[i + 1] = byte(c.1)
            buffer[i + 2] = byte(c.2)
            buffer[i + 3] = 255
            return
        }
        let da = Double(buffer[i + 3]) * (1.0 / 255)
        let keep = da * (1 - sa)
        let outA = sa + keep
        let inverse = 1 / outA
        buffer[i] = byte((c.0 * sa + Double(buffer[i]) * keep) * inverse)
        buffer[i + 1] = byte((c.1 * sa + Double(buffer[i + 1]) * keep) * inverse)
        buffer[i + 2] = byte((c.2 * sa + Double(buffer[i + 2]) * keep) * inverse)
        buffer[i + 3] = byte(outA * 255)
    }
}

/// Evaluates a `Paint` at a pixel, with a 4×4 ordered dither on gradients so
/// that slow ramps never show bands. Deterministic: the dither depends only
/// on the pixel position.
struct PaintSampler: Sendable {
    private enum Kind { case solid, linear, radial }

    private let kind: Kind
    private let solid: (Double, Double, Double, Double)
    // Linear: t = (p - start) · direction / |direction|²; radial: t = |p - centre| / radius.
    private let ax: Double, ay: Double, dx: Double, dy: Double, scale: Double
    private let offsets: [Double]
    private let colors: [(Double, Double, Double, Double)]
    /// The 4×4 Bayer matrix, sixteen 4-bit entries packed in one word, so the
    /// per-pixel lookup is a shift and a mask rather than a memory access.
    private static let bayer: UInt64 = 0x5d7f91b36e4ca280

    init(_ paint: Paint) {
        var stops: [(Double, RGBA)] = []
        switch paint {
        case let .solid(c):
            kind = .solid
            solid = (Double(c.r), Double(c.g), Double(c.b), Double(c.a))
            (ax, ay, dx, dy, scale) = (0, 0, 0, 0, 0)
        case let .linear(start, end, s):
            kind = .linear
            solid = (0, 0, 0, 0)
            let ddx = end.x - start.x, ddy = end.y - start.y
            let length = ddx * ddx + ddy * ddy
            (ax, ay, dx, dy, scale) = (start.x, start.y, ddx, ddy, length > 0 ? 1 / length : 0)
            stops = s
        case let .radial(center, radius, s):
            kind = .radial
            solid = (0, 0, 0, 0)
            (ax, ay, dx, dy, scale) = (center.x, center.y, 0, 0, radius > 0 ? 1 / radius : 0)
            stops = s
        }
        let sorted = stops.sorted { $0.0 < $1.0 }
        offsets = sorted.map(\.0)
        colors = sorted.map { (Double($0.1.r), Double($0.1.g), Double($0.1.b), Double($0.1.a)) }
    }

    @inline(__always)
    func color(_ x: Int, _ y: Int) -> (Double, Double, Double, Double) {
        let t: Double
        switch kind {
        case .solid:
            return solid
        case .linear:
            t = ((Double(x) + 0.5 - ax) * dx + (Double(y) + 0.5 - ay) * dy) * scale
        case .radial:
            let px = Double(x) + 0.5 - ax, py = Double(y) + 0.5 - ay
            t = (px * px + py * py).squareRoot() * scale
        }
        let c = interpolate(max(0, min(1, t)))
        let level = (Self.bayer >> UInt64(((y & 3) * 4 + (x & 3)) * 4)) & 0xF
        let n = (Double(level) + 0.5) * (1.0 / 16) - 0.5
        return (c.0 + n, c.1 + n, c.2 + n, c.3)
    }

    @inline(__always)
    private func interpolate(_ t: Double) -> (Double, Double, Double, Double) {
        guard !offsets.isEmpty else { return (0, 0, 0, 0) }
        if t <= offsets[0] { return colors[0] }
        for k in 1..<offsets.count where t <= offsets[k] {
            let o0 = offsets[k - 1], o1 = offsets[k]
            let a = colors[k - 1], b = colors[k]
            let u = o1 > o0 ? (t - o0) / (o1 - o0) : 0
            return (a.0 + (b.0 - a.0) * u, a.1 + (b.1 - a.1) * u, a.2 + (b.2 - a.2) * u, a.3 + (b.3 - a.3) * u)
        }
        return colors[colors.count - 1]
    }
}

/// The canvas's pixels, shared with the threads that draw disjoint rows of one shape.
private struct SharedRows: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<UInt8>
}
