import BadgeKit
import CCanvasMath
import Foundation

/// An RGBA raster drawn in Swift: anti-aliased shapes by coverage, dithered
/// gradients, soft shadows. Text is rasterised by FreeType (`FontFace`),
/// encoding is `PNGEncoder`; decoding and resampling go through libgd (`GDImage`).
/// Not thread-safe: one canvas belongs to one drawing call. Disjoint bands of
/// rows (`rows(_:)`) may be drawn on different threads at once.
public final class Canvas {
    public let width: Int
    public let height: Int
    /// Straight-alpha RGBA, row-major, 4 bytes a pixel.
    public let pixels: PixelMemory
    /// The rows that drawing may change: all of them, or a band's.
    public let rows: Range<Int>
    /// Whether one large shape may be drawn on more than one thread (up to
    /// `shapeThreads`, and `ImageThreads.limit`): a whole canvas's may, a
    /// band's may not (its band is already one thread's share of the work).
    /// The result is the same for any number of threads.
    let splitsShapes: Bool

    public static let maxSide = 8192

    /// `mapped: false` leaves the pages to be mapped by the threads that draw
    /// the rows (`mapRows`), band by band.
    public init(width: Int, height: Int, background: RGBA = .clear, mapped: Bool = true) throws {
        guard (1...Self.maxSide).contains(width), (1...Self.maxSide).contains(height) else {
            throw BadgeError(.usage, "a canvas of \(width)×\(height) pixels is out of range",
                             hint: "use 1 to \(Self.maxSide) pixels a side")
        }
        self.width = width
        self.height = height
        pixels = PixelMemory(zeroedCount: width * height * 4, mapped: mapped || background != .clear)
        rows = 0..<height
        splitsShapes = true
        if background != .clear { fill(.roundedRect(x: 0, y: 0, width: Double(width), height: Double(height), radius: 0), with: .solid(background)) }
    }

    private init(sharing canvas: Canvas, rows: Range<Int>) {
        width = canvas.width
        height = canvas.height
        pixels = canvas.pixels
        self.rows = rows
        splitsShapes = false
    }

    /// The same pixels, with drawing confined to `band`: each pixel's colour
    /// depends only on what is drawn over it, so a picture drawn band by band,
    /// the bands on different threads, is the very picture drawn whole.
    /// A band draws on its calling thread only.
    public func rows(_ band: Range<Int>) -> Canvas {
        Canvas(sharing: self, rows: band.clamped(to: rows))
    }

    /// Whether every pixel is opaque (alpha 255); stops at the first that is not.
    public var isOpaque: Bool {
        pixels.withUnsafeBufferPointer { PNGEncoder.isOpaque($0, rows: 0..<height, width: width) }
    }

    /// Maps the pages of this canvas's rows now (see `PixelMemory.map`): for
    /// a band of a canvas made with `mapped: false`, on the thread drawing it.
    public func mapRows() {
        pixels.map(rows.lowerBound * width * 4..<rows.upperBound * width * 4)
    }

    /// The RGBA bytes, for renderers that compute every pixel themselves
    /// (the card's perspective warp) rather than filling shapes: all of
    /// them, whatever `rows` says.
    public func withMutablePixels<R>(_ body: (UnsafeMutableBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try pixels.withUnsafeMutableBufferPointer { try body($0) }
    }

    public func pixel(_ x: Int, _ y: Int) -> RGBA {
        let i = (y * width + x) * 4
        return RGBA(pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3])
    }

    /// Fills `shape` with `paint`. `softness` (pixels) widens the edge into a
    /// smooth falloff, for shadows and glows; 0 gives a crisp anti-aliased edge.
    /// Pixels whose centres lie inside `hidden` are left as they are: for a
    /// caller that paints them over opaquely afterwards, to whom drawing them
    /// would be wasted work.
    public func fill(_ shape: Shape, with paint: Paint, opacity: Double = 1, softness: Double = 0, hidden: Disc? = nil) {
        let box = shape.bounds(margin: softness)
        // One specialised loop per kind of shape: the distance function is
        // inlined and no array is retained per pixel.
        switch shape {
        case let .circle(c, r): fill(CircleField(cx: c.x, cy: c.y, r: r), box, paint, opacity, softness, hidden)
        case let .ellipse(c, rx, ry): fill(EllipseField(cx: c.x, cy: c.y, rx: rx, ry: ry), box, paint, opacity, softness, hidden)
        case let .ring(c, inner, outer): fill(RingField(cx: c.x, cy: c.y, inner: inner, outer: outer), box, paint, opacity, softness, hidden)
        case let .roundedRect(x, y, w, h, r): fill(RectField(x: x, y: y, w: w, h: h, r: r), box, paint, opacity, softness, hidden)
        case let .capsule(a, b, r): fill(CapsuleField(a: a, b: b, r: r), box, paint, opacity, softness, hidden)
        case let .polyline(points, r): fill(PolylineField(points: points, r: r), box, paint, opacity, softness, hidden)
        case let .polygon(points): fill(PolygonField(points: points), box, paint, opacity, softness, hidden)
        }
    }

    /// A field's fill (internal for tests, which compare a field's spans
    /// with its distances alone).
    func fill<F: DistanceField>(
        _ field: F, _ box: (x0: Double, y0: Double, x1: Double, y1: Double), _ paint: Paint, _ opacity: Double, _ softness: Double,
        _ hidden: Disc?
    ) {
        // And one per kind of paint, so the pixel loop never asks which it is.
        switch paint {
        case let .solid(c):
            fill(field, box, SolidPaint(c), opacity, softness, hidden)
        case let .linear(start, end, stops):
            fill(field, box, LinearPaint(start: start, end: end, ramp: Ramp(stops)), opacity, softness, hidden)
        case let .radial(center, radius, stops):
            fill(field, box, RadialPaint(center: center, radius: radius, ramp: Ramp(stops)), opacity, softness, hidden)
        }
    }

    private func fill<F: DistanceField, P: PaintSource>(
        _ field: F, _ box: (x0: Double, y0: Double, x1: Double, y1: Double), _ paint: P, _ opacity: Double, _ softness: Double,
        _ hidden: Disc?
    ) {
        let x0 = max(0, Int(box.x0.rounded(.down))), y0 = max(rows.lowerBound, Int(box.y0.rounded(.down)))
        let x1 = min(width, Int(box.x1.rounded(.up))), y1 = min(rows.upperBound, Int(box.y1.rounded(.up)))
        guard x0 < x1, y0 < y1, opacity > 0 else { return }
        let soft = max(softness, 0)
        let width = self.width
        // Beyond `band` from the edge a pixel is wholly in or out: no distance needed.
        let band = soft > 0 ? soft : 0.5
        // Wholly covered pixels then get sa = 1 in `blend`: they are written, not blended.
        let opaque = opacity == 1 && paint.isOpaque
        pixels.withUnsafeMutableBufferPointer { whole in
            let shared = SharedRows(buffer: whole)
            // Rows are independent (each writes only its own pixels, and the dither
            // depends on position alone), so a large shape is drawn on every core
            // with the very same result.
            let parts = (y1 - y0) * (x1 - x0) >= Self.parallelArea && splitsShapes ? ImageThreads.allowed(upTo: Self.shapeThreads) : 1
            let draw: @Sendable (Int) -> Void = { k in
                let buffer = shared.buffer
                let from = y0 + (y1 - y0) * k / parts, to = y0 + (y1 - y0) * (k + 1) / parts
                // One copy of the field per thread, readied for each row in turn.
                var rowField = field
                paint.ramp.segments.withUnsafeBufferPointer { segments in
                    for y in from..<to {
                        Self.fillRow(y, x0..<x1, &rowField, paint.row(y, segments), opacity: opacity, opaque: opaque, soft: soft, band: band,
                                     hidden: hidden, buffer: buffer, width: width)
                    }
                }
            }
            // On badge's own threads (`WorkerThreads`), never Dispatch's global queues.
            WorkerThreads.shared.perform(iterations: parts, threads: parts, draw)
        }
    }

    @inline(__always)
    private static func fillRow<F: DistanceField, R: PaintRow>(
        _ y: Int, _ columns: Range<Int>, _ field: inout F, _ paint: R, opacity: Double, opaque: Bool, soft: Double, band: Double, hidden: Disc?,
        buffer: UnsafeMutableBufferPointer<UInt8>, width: Int
    ) {
        let py = Double(y) + 0.5
        var rowStart = columns.lowerBound, rowEnd = columns.upperBound
        // Pixels in `inner` but not in `gap` are solid; those in `hole` or `cover` are skipped.
        var innerStart = Int.max, innerEnd = Int.min
        var gapStart = Int.max, gapEnd = Int.min
        var holeStart = Int.max, holeEnd = Int.min
        var coverStart = Int.max, coverEnd = Int.min
        if let span = field.prepare(row: py, band: band) {
            rowStart = Swift.max(rowStart, Int((span.outer.lowerBound - 0.5).rounded(.down)))
            rowEnd = Swift.min(rowEnd, Int((span.outer.upperBound - 0.5).rounded(.up)) + 1)
            if let inner = span.inner {
                innerStart = Int((inner.lowerBound - 0.5).rounded(.up))
                innerEnd = Int((inner.upperBound - 0.5).rounded(.down))
            }
            if let gap = span.innerGap {
                // Rounded outwards: a pixel wrongly in the gap only costs a distance.
                gapStart = Int((gap.lowerBound - 0.5).rounded(.down))
                gapEnd = Int((gap.upperBound - 0.5).rounded(.up))
            }
            if let hole = span.hole {
                holeStart = Int((hole.lowerBound - 0.5).rounded(.up))
                holeEnd = Int((hole.upperBound - 0.5).rounded(.down))
            }
        }
        if let hidden, let chord = CircleField.chord(cx: hidden.center.x, dy: py - hidden.center.y, radius: hidden.radius) {
            coverStart = Int((chord.lowerBound - 0.5).rounded(.up))
            coverEnd = Int((chord.upperBound - 0.5).rounded(.down))
        }
        guard rowStart < rowEnd else { return }
        var x = rowStart
        while x < rowEnd {
            if x >= holeStart && x <= holeEnd {
                // Every pixel of the hole is at least `band` outside: nothing to draw.
                x = Swift.min(rowEnd, holeEnd + 1)
                continue
            }
            if x >= coverStart && x <= coverEnd {
                x = Swift.min(rowEnd, coverEnd + 1)
                continue
            }
            let solid = x >= innerStart && x <= innerEnd && !(x >= gapStart && x <= gapEnd)
            if solid {
                // Up to the next pixel that is not wholly covered or is skipped,
                // an opaque paint's colour replaces what was below; any other
                // is blended at the fill's opacity.
                // (No array of the three starts: this runs once per run of pixels.)
                @inline(__always) func before(_ start: Int) -> Int { start > x ? start - 1 : Int.max }
                let last = Swift.min(innerEnd, rowEnd - 1, before(gapStart), before(holeStart), before(coverStart))
                if opaque {
                    paint.writeOpaque(buffer, at: (y * width + x) * 4, x...last)
                } else {
                    paint.blend(buffer, at: (y * width + x) * 4, x...last, coverage: opacity)
                }
                x = last + 1
                continue
            }
            if x + 1 < rowEnd && !(x + 1 >= holeStart && x + 1 <= holeEnd) && !(x + 1 >= coverStart && x + 1 <= coverEnd)
                && !(x + 1 >= innerStart && x + 1 <= innerEnd && !(x + 1 >= gapStart && x + 1 <= gapEnd)) {
                // Two edge pixels at once, each lane as the single pixel below.
                let d = field.distances(SIMD2(Double(x) + 0.5, Double(x) + 1.5), py)
                var t: SIMD2<Double>
                if soft > 0 {
                    let s = (soft - d) / (2 * soft)
                    // max(0, min(1, s)) as Swift's min and max choose.
                    t = s
                    t.replace(with: 1, where: .!(s .< 1))
                    t.replace(with: 0, where: .!(t .>= 0))
                    t = t * t * (3 - 2 * t)
                } else {
                    let s = 0.5 - d
                    t = s
                    t.replace(with: 1, where: .!(s .< 1))
                    t.replace(with: 0, where: .!(t .>= 0))
                }
                // A lane whose coverage is not above 0 is left as it is (sa <= 0 in blend2).
                paint.blend(buffer, at: (y * width + x) * 4, pairAt: x, coverage: t * opacity)
                x += 2
                continue
            }
            defer { x += 1 }
            var coverage: Double
            let d = field.distance(Double(x) + 0.5, py)
            if soft > 0 {
                let t = max(0, min(1, (soft - d) / (2 * soft)))
                coverage = t * t * (3 - 2 * t)
            } else {
                coverage = max(0, min(1, 0.5 - d))
            }
            coverage *= opacity
            if coverage <= 0 { continue }
            blend(buffer, at: (y * width + x) * 4, paint.color(x), coverage)
        }
    }

    /// Below this many pixels (about 362²) a shape is drawn on the calling thread
    /// alone: the big fills of a 1024 px badge (the medal's sheen, 620 × 300,
    /// among them) gain from a second core, while a batch of smaller badges
    /// already keeps every core busy with one badge each.
    static let parallelArea = 1 << 17
    /// The most threads one shape is split between.
    static let shapeThreads = 4

    /// A channel's byte: clamped to 0...255 and rounded by adding 0.5 and
    /// truncating (`rounded()` is a libm call on baseline x86-64, and this runs per pixel).
    @inline(__always)
    static func byte(_ v: Double) -> UInt8 { UInt8(truncatingIfNeeded: Int(max(0, min(255, v)) + 0.5)) }

    /// Two pixels side by side, their channels already bytes (`badge_bytes2`),
    /// written as `writeOpaque` writes each.
    @inline(__always)
    static func writeOpaque(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, _ r: SIMD2<Int32>, _ g: SIMD2<Int32>, _ b: SIMD2<Int32>) {
        precondition(i >= 0 && i + 8 <= buffer.count)
        // Each pixel as one little-endian word: r, g, b, 255 in memory order.
        let pixels = SIMD2<UInt32>(truncatingIfNeeded: r) | SIMD2<UInt32>(truncatingIfNeeded: g) &<< 8
            | SIMD2<UInt32>(truncatingIfNeeded: b) &<< 16 | 0xFF00_0000
        let out = UnsafeMutableRawPointer(buffer.baseAddress! + i)
        out.storeBytes(of: pixels[0].littleEndian, as: UInt32.self)
        out.storeBytes(of: pixels[1].littleEndian, toByteOffset: 4, as: UInt32.self)
    }

    /// One pixel of an opaque colour at full coverage: what was below does not count.
    @inline(__always)
    static func writeOpaque(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, _ r: Double, _ g: Double, _ b: Double) {
        buffer[i] = byte(r)
        buffer[i + 1] = byte(g)
        buffer[i + 2] = byte(b)
        buffer[i + 3] = 255
    }

    /// Source-over compositing of one straight-alpha colour (channels 0–255 as
    /// Doubles, already dithered) at `coverage`.
    @inline(__always)
    static func blend(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, _ c: (Double, Double, Double, Double), _ coverage: Double) {
        let sa = c.3 * (1.0 / 255) * coverage
        if sa <= 0 { return }
        if sa >= 1 {
            // PaintRow.writeOpaque does the same for a run of pixels.
            writeOpaque(buffer, at: i, c.0, c.1, c.2)
            return
        }
        let da = Double(buffer[i + 3]) * (1.0 / 255)
        let keep = da * (1 - sa)
        let outA = sa + keep
        // Over an opaque pixel outA is mostly exactly 1, whose inverse is 1:
        // the division (the slowest step here) is skipped, the result the same.
        let inverse = outA == 1 ? 1 : 1 / outA
        let dst = SIMD4(Double(buffer[i]), Double(buffer[i + 1]), Double(buffer[i + 2]), 0)
        let mixed = (SIMD4(c.0, c.1, c.2, 0) * sa + dst * keep) * inverse
        let rg = badge_bytes2(SIMD2(mixed[0], mixed[1])), ba = badge_bytes2(SIMD2(mixed[2], outA * 255))
        buffer[i] = UInt8(truncatingIfNeeded: rg[0])
        buffer[i + 1] = UInt8(truncatingIfNeeded: rg[1])
        buffer[i + 2] = UInt8(truncatingIfNeeded: ba[0])
        buffer[i + 3] = UInt8(truncatingIfNeeded: ba[1])
    }
}

extension Canvas {
    /// `blend` for the pixels at byte `i` and `i + 4` at once: each lane the
    /// very operations of `blend` (the same bytes), two pixels an instruction.
    /// Channels 0–255, already dithered.
    @inline(__always)
    static func blend2(
        _ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int,
        _ r: SIMD2<Double>, _ g: SIMD2<Double>, _ b: SIMD2<Double>, _ a: SIMD2<Double>, _ coverage: SIMD2<Double>
    ) {
        precondition(i >= 0 && i + 8 <= buffer.count)
        let sa = a * (1.0 / 255) * coverage
        let skip = sa .<= 0, opaque = sa .>= 1
        if all(skip) { return }
        let out = UnsafeMutableRawPointer(buffer.baseAddress! + i)
        let below = SIMD2(out.loadUnaligned(as: UInt32.self), out.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        @inline(__always) func channel(_ shift: UInt32) -> SIMD2<Double> {
            let bytes = SIMD2<Int32>(truncatingIfNeeded: (below &>> shift) & 0xFF)
            return SIMD2(Double(bytes[0]), Double(bytes[1]))
        }
        let da = channel(24) * (1.0 / 255)
        let keep = da * (1 - sa)
        let outA = sa + keep
        // Where outA is 1 (over an opaque pixel), its inverse is exactly 1 too.
        let inverse = 1 / outA
        let mixedR = (r * sa + channel(0) * keep) * inverse
        let mixedG = (g * sa + channel(8) * keep) * inverse
        let mixedB = (b * sa + channel(16) * keep) * inverse
        // In 64-bit lanes, whose masks are the Doubles' comparisons.
        @inline(__always) func word(_ v: SIMD2<Int32>) -> SIMD2<UInt64> { SIMD2<UInt64>(truncatingIfNeeded: v) }
        var pixels = word(badge_bytes2(mixedR)) | word(badge_bytes2(mixedG)) &<< 8 | word(badge_bytes2(mixedB)) &<< 16
            | word(badge_bytes2(outA * 255)) &<< 24
        // Wholly covered: the colour, opaque, whatever was below (as `blend`).
        let solid = word(badge_bytes2(r)) | word(badge_bytes2(g)) &<< 8 | word(badge_bytes2(b)) &<< 16 | 0xFF00_0000
        pixels.replace(with: solid, where: opaque)
        pixels.replace(with: SIMD2<UInt64>(truncatingIfNeeded: below), where: skip)
        out.storeBytes(of: UInt32(truncatingIfNeeded: pixels[0]).littleEndian, as: UInt32.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: pixels[1]).littleEndian, toByteOffset: 4, as: UInt32.self)
    }
}

/// A caller's promise that it will paint over a disc opaquely: a fill may
/// leave the pixels whose centres lie inside it untouched.
public struct Disc: Sendable {
    public var center: Point
    public var radius: Double
    public init(center: Point, radius: Double) {
        self.center = center
        self.radius = radius
    }
}

/// A `Paint` prepared for one fill. Gradients are dithered with a 4×4 ordered
/// dither so that slow ramps never show bands; the dither depends only on the
/// pixel position. Each kind is its own type, and each row is prepared once,
/// so the pixel loop does only what varies along x.
protocol PaintSource: Sendable {
    associatedtype Row: PaintRow
    var ramp: Ramp { get }
    /// Every colour it gives has alpha 255.
    var isOpaque: Bool { get }
    func row(_ y: Int, _ segments: UnsafeBufferPointer<Ramp.Segment>) -> Row
}

protocol PaintRow {
    /// Channels 0–255 as Doubles, dithered.
    func color(_ x: Int) -> (Double, Double, Double, Double)
    /// Writes the pixels of `run` from byte `i` on as `Canvas.blend` does
    /// when sa = 1: an opaque paint at full coverage.
    func writeOpaque(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, _ run: ClosedRange<Int>)
    /// Blends the pixels of `run` from byte `i` on at `coverage`, as
    /// `Canvas.blend` does each.
    func blend(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, _ run: ClosedRange<Int>, coverage: Double)
    /// Blends the pixels x and x + 1 (from byte `i` on) at a coverage each, as
    /// `Canvas.blend` does each.
    func blend(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, pairAt x: Int, coverage: SIMD2<Double>)
}

extension PaintRow {
    @inline(__always)
    func blend(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, pairAt x: Int, coverage: SIMD2<Double>) {
        for k in 0..<2 where coverage[k] > 0 {
            Canvas.blend(buffer, at: i + 4 * k, color(x + k), coverage[k])
        }
    }

    @inline(__always)
    func blend(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, _ run: ClosedRange<Int>, coverage: Double) {
        var i = i
        for x in run {
            Canvas.blend(buffer, at: i, color(x), coverage)
            i += 4
        }
    }

    @inline(__always)
    func writeOpaque(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, _ run: ClosedRange<Int>) {
        var i = i
        for x in run {
            let c = color(x)
            Canvas.writeOpaque(buffer, at: i, c.0, c.1, c.2)
            i += 4
        }
    }
}

/// A gradient's row, which works out two pixels at a time in writeOpaque:
/// the same operations on each lane of a SIMD2, so the same results, but two
/// square roots and divisions under way at once.
protocol GradientRow: PaintRow {
    var ramp: Ramp { get }
    var segments: UnsafeBufferPointer<Ramp.Segment> { get }
    var dither: SIMD4<Double> { get }
    /// t for the pixels at x and x + 1, before clamping.
    func t(_ x: SIMD2<Double>) -> SIMD2<Double>
}

extension GradientRow {
    /// The colours of the pixels at x and x + 1, as `color` gives each:
    /// red, green and blue dithered by `n` (theirs), and alpha.
    @inline(__always)
    func colors(_ x: Int, _ n: SIMD2<Double>) -> (SIMD2<Double>, SIMD2<Double>, SIMD2<Double>, SIMD2<Double>) {
        var t = self.t(SIMD2(Double(x), Double(x + 1)))
        // max(0, min(1, t)) as Swift's min and max choose.
        t.replace(with: 1, where: .!(t .< 1))
        t.replace(with: 0, where: .!(t .>= 0))
        let c = ramp.colors(t, segments)
        return (c.0 + n, c.1 + n, c.2 + n, c.3)
    }

    /// The dither of the pixel pairs from x on: the first pair's, then the
    /// second's; the third takes the first's again (the dither repeats every
    /// four pixels).
    @inline(__always)
    func ditherPairs(from x: Int) -> (SIMD2<Double>, SIMD2<Double>) {
        (SIMD2(dither[x & 3], dither[(x + 1) & 3]), SIMD2(dither[(x + 2) & 3], dither[(x + 3) & 3]))
    }

    @inline(__always)
    func writeOpaque(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, _ run: ClosedRange<Int>) {
        var i = i
        var x = run.lowerBound
        var (n, next) = ditherPairs(from: x)
        while x < run.upperBound {
            let c = colors(x, n)
            Canvas.writeOpaque(buffer, at: i, badge_bytes2(c.0), badge_bytes2(c.1), badge_bytes2(c.2))
            swap(&n, &next)
            i += 8
            x += 2
        }
        if x == run.upperBound {
            let c = color(x)
            Canvas.writeOpaque(buffer, at: i, c.0, c.1, c.2)
        }
    }

    @inline(__always)
    func blend(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, pairAt x: Int, coverage: SIMD2<Double>) {
        let c = colors(x, ditherPairs(from: x).0)
        Canvas.blend2(buffer, at: i, c.0, c.1, c.2, c.3, coverage)
    }

    @inline(__always)
    func blend(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, _ run: ClosedRange<Int>, coverage: Double) {
        var i = i
        var x = run.lowerBound
        var (n, next) = ditherPairs(from: x)
        while x < run.upperBound {
            let c = colors(x, n)
            Canvas.blend2(buffer, at: i, c.0, c.1, c.2, c.3, SIMD2(repeating: coverage))
            swap(&n, &next)
            i += 8
            x += 2
        }
        if x == run.upperBound {
            Canvas.blend(buffer, at: i, color(x), coverage)
        }
    }
}

/// The 4×4 Bayer matrix, sixteen 4-bit entries packed in one word.
private let bayer: UInt64 = 0x5d7f91b36e4ca280

/// The dither offsets of row `y`, by `x & 3`.
@inline(__always)
private func ditherRow(_ y: Int) -> SIMD4<Double> {
    var n = SIMD4<Double>()
    for x in 0..<4 {
        let level = (bayer >> UInt64(((y & 3) * 4 + x) * 4)) & 0xF
        n[x] = (Double(level) + 0.5) * (1.0 / 16) - 0.5
    }
    return n
}

struct SolidPaint: PaintSource, PaintRow {
    let c: (Double, Double, Double, Double)
    let ramp = Ramp([])
    let isOpaque: Bool
    init(_ c: RGBA) {
        self.c = (Double(c.r), Double(c.g), Double(c.b), Double(c.a))
        isOpaque = c.a == 255
    }
    @inline(__always) func row(_ y: Int, _ segments: UnsafeBufferPointer<Ramp.Segment>) -> SolidPaint { self }
    @inline(__always) func color(_ x: Int) -> (Double, Double, Double, Double) { c }

    @inline(__always)
    func blend(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, pairAt x: Int, coverage: SIMD2<Double>) {
        Canvas.blend2(buffer, at: i, SIMD2(repeating: c.0), SIMD2(repeating: c.1), SIMD2(repeating: c.2), SIMD2(repeating: c.3), coverage)
    }

    @inline(__always)
    func blend(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, _ run: ClosedRange<Int>, coverage: Double) {
        let r = SIMD2(repeating: c.0), g = SIMD2(repeating: c.1), b = SIMD2(repeating: c.2), a = SIMD2(repeating: c.3)
        var i = i
        var x = run.lowerBound
        while x < run.upperBound {
            Canvas.blend2(buffer, at: i, r, g, b, a, SIMD2(repeating: coverage))
            i += 8
            x += 2
        }
        if x == run.upperBound {
            Canvas.blend(buffer, at: i, c, coverage)
        }
    }

    @inline(__always)
    func writeOpaque(_ buffer: UnsafeMutableBufferPointer<UInt8>, at i: Int, _ run: ClosedRange<Int>) {
        let r = Canvas.byte(c.0), g = Canvas.byte(c.1), b = Canvas.byte(c.2)
        var i = i
        for _ in run {
            buffer[i] = r
            buffer[i + 1] = g
            buffer[i + 2] = b
            buffer[i + 3] = 255
            i += 4
        }
    }
}

/// t = (p - start) · direction / |direction|².
struct LinearPaint: PaintSource {
    let ax: Double, ay: Double, dx: Double, dy: Double, scale: Double
    let ramp: Ramp

    init(start: Point, end: Point, ramp: Ramp) {
        let ddx = end.x - start.x, ddy = end.y - start.y
        let length = ddx * ddx + ddy * ddy
        (ax, ay, dx, dy, scale) = (start.x, start.y, ddx, ddy, length > 0 ? 1 / length : 0)
        self.ramp = ramp
    }

    var isOpaque: Bool { ramp.isOpaque }

    struct Row: GradientRow {
        let ax: Double, dx: Double, scale: Double
        /// The y term of the dot product, the same for the whole row.
        let along: Double
        let dither: SIMD4<Double>
        let ramp: Ramp, segments: UnsafeBufferPointer<Ramp.Segment>

        @inline(__always) func color(_ x: Int) -> (Double, Double, Double, Double) {
            let t = ((Double(x) + 0.5 - ax) * dx + along) * scale
            let c = ramp.color(max(0, min(1, t)), segments)
            let n = dither[x & 3]
            return (c.0 + n, c.1 + n, c.2 + n, c.3)
        }

        @inline(__always) func t(_ x: SIMD2<Double>) -> SIMD2<Double> { ((x + 0.5 - ax) * dx + along) * scale }
    }

    @inline(__always) func row(_ y: Int, _ segments: UnsafeBufferPointer<Ramp.Segment>) -> Row {
        Row(ax: ax, dx: dx, scale: scale, along: (Double(y) + 0.5 - ay) * dy, dither: ditherRow(y), ramp: ramp, segments: segments)
    }
}

/// t = |p - centre| / radius.
struct RadialPaint: PaintSource {
    let ax: Double, ay: Double, scale: Double
    let ramp: Ramp

    init(center: Point, radius: Double, ramp: Ramp) {
        (ax, ay, scale) = (center.x, center.y, radius > 0 ? 1 / radius : 0)
        self.ramp = ramp
    }

    var isOpaque: Bool { ramp.isOpaque }

    struct Row: GradientRow {
        let ax: Double, scale: Double
        /// The square of the y offset, the same for the whole row.
        let yy: Double
        let dither: SIMD4<Double>
        let ramp: Ramp, segments: UnsafeBufferPointer<Ramp.Segment>

        @inline(__always) func color(_ x: Int) -> (Double, Double, Double, Double) {
            let px = Double(x) + 0.5 - ax
            let t = (px * px + yy).squareRoot() * scale
            let c = ramp.color(max(0, min(1, t)), segments)
            let n = dither[x & 3]
            return (c.0 + n, c.1 + n, c.2 + n, c.3)
        }

        @inline(__always) func t(_ x: SIMD2<Double>) -> SIMD2<Double> {
            let px = x + 0.5 - ax
            return badge_sqrt2(px * px + yy) * scale
        }
    }

    @inline(__always) func row(_ y: Int, _ segments: UnsafeBufferPointer<Ramp.Segment>) -> Row {
        let py = Double(y) + 0.5 - ay
        return Row(ax: ax, scale: scale, yy: py * py, dither: ditherRow(y), ramp: ramp, segments: segments)
    }
}

/// A gradient's stops, sorted, as spans between neighbours with the
/// differences the interpolation needs computed once (the same values as
/// computed per pixel, so the colours are exactly the same).
struct Ramp: Sendable {
    struct Segment {
        let o0: Double, o1: Double, width: Double
        let flat: Bool
        /// Dividing by a power of two is multiplying by its reciprocal, exactly
        /// (both round the same real number), and much cheaper: stops at 0,
        /// 0.5 and 1 make such widths.
        let powerOfTwo: Bool, reciprocal: Double
        let a: (Double, Double, Double, Double)
        let delta: (Double, Double, Double, Double)
    }

    /// At or below `start`, `first`; past the last segment, `last`.
    let start: Double
    let first: (Double, Double, Double, Double)
    let last: (Double, Double, Double, Double)
    let segments: [Segment]
    let isOpaque: Bool

    init(_ stops: [(Double, RGBA)]) {
        isOpaque = !stops.isEmpty && stops.allSatisfy { $0.1.a == 255 }
        let sorted = stops.sorted { $0.0 < $1.0 }
        let colors = sorted.map { (Double($0.1.r), Double($0.1.g), Double($0.1.b), Double($0.1.a)) }
        // No stops paints transparent black: every t is at or below +∞.
        start = sorted.first?.0 ?? .infinity
        first = colors.first ?? (0, 0, 0, 0)
        last = colors.last ?? (0, 0, 0, 0)
        segments = sorted.indices.dropFirst().map { k in
            let o0 = sorted[k - 1].0, o1 = sorted[k].0
            let a = colors[k - 1], b = colors[k]
            let width = o1 - o0
            return Segment(o0: o0, o1: o1, width: width, flat: !(o1 > o0),
                           powerOfTwo: width.isNormal && width.significandBitPattern == 0, reciprocal: 1 / width, a: a,
                           delta: (b.0 - a.0, b.1 - a.1, b.2 - a.2, b.3 - a.3))
        }
    }

    @inline(__always)
    func color(_ t: Double, _ segments: UnsafeBufferPointer<Segment>) -> (Double, Double, Double, Double) {
        if t <= start { return first }
        for s in segments where t <= s.o1 {
            let u = s.flat ? 0 : s.powerOfTwo ? (t - s.o0) * s.reciprocal : (t - s.o0) / s.width
            return (s.a.0 + s.delta.0 * u, s.a.1 + s.delta.1 * u, s.a.2 + s.delta.2 * u, s.a.3 + s.delta.3 * u)
        }
        return last
    }

    /// `color` for two t at once (clamped already).
    @inline(__always)
    func colors(_ t: SIMD2<Double>, _ segments: UnsafeBufferPointer<Segment>) -> (SIMD2<Double>, SIMD2<Double>, SIMD2<Double>, SIMD2<Double>) {
        var r = SIMD2(repeating: last.0), g = SIMD2(repeating: last.1), b = SIMD2(repeating: last.2), a = SIMD2(repeating: last.3)
        @inline(__always) func take(_ s: Segment, where inside: SIMDMask<SIMD2<Double.SIMDMaskScalar>>) {
            let u = s.flat ? SIMD2(repeating: 0) : s.powerOfTwo ? (t - s.o0) * s.reciprocal : (t - s.o0) / s.width
            r.replace(with: s.a.0 + s.delta.0 * u, where: inside)
            g.replace(with: s.a.1 + s.delta.1 * u, where: inside)
            b.replace(with: s.a.2 + s.delta.2 * u, where: inside)
            a.replace(with: s.a.3 + s.delta.3 * u, where: inside)
        }
        if segments.count == 1 {
            // Two stops, the common case: no loop, and no lanes taken out of
            // the vector to ask whether any is inside.
            take(segments[0], where: t .<= segments[0].o1)
        } else {
            // Last segment first, so each lane ends with the first segment that holds it.
            for s in segments.reversed() {
                let inside = t .<= s.o1
                if !any(inside) { continue }
                take(s, where: inside)
            }
        }
        let below = t .<= start
        r.replace(with: first.0, where: below)
        g.replace(with: first.1, where: below)
        b.replace(with: first.2, where: below)
        a.replace(with: first.3, where: below)
        return (r, g, b, a)
    }
}

/// The canvas's pixels, shared with the threads that draw disjoint rows of one shape.
private struct SharedRows: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<UInt8>
}
