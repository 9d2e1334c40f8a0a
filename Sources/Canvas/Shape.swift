import CCanvasMath
import Foundation

/// A shape described by its signed distance: negative inside, positive outside,
/// in pixels. Coverage near the edge comes from the distance, which is what
/// makes every edge anti-aliased (gd's own filled shapes are not).
public enum Shape: Sendable {
    case circle(center: Point, radius: Double)
    case ellipse(center: Point, rx: Double, ry: Double)
    /// The band between two radii.
    case ring(center: Point, inner: Double, outer: Double)
    case roundedRect(x: Double, y: Double, width: Double, height: Double, radius: Double)
    /// A thick line with round caps.
    case capsule(from: Point, to: Point, radius: Double)
    /// A stroked open path with round joins.
    case polyline([Point], radius: Double)
    /// A closed polygon (even-odd).
    case polygon([Point])

    /// The pixel box the shape can touch (with `margin` for soft edges).
    func bounds(margin: Double) -> (x0: Double, y0: Double, x1: Double, y1: Double) {
        let m = margin + 1
        switch self {
        case let .circle(c, r): return (c.x - r - m, c.y - r - m, c.x + r + m, c.y + r + m)
        case let .ellipse(c, rx, ry): return (c.x - rx - m, c.y - ry - m, c.x + rx + m, c.y + ry + m)
        case let .ring(c, _, outer): return (c.x - outer - m, c.y - outer - m, c.x + outer + m, c.y + outer + m)
        case let .roundedRect(x, y, w, h, _): return (x - m, y - m, x + w + m, y + h + m)
        case let .capsule(a, b, r):
            return (min(a.x, b.x) - r - m, min(a.y, b.y) - r - m, max(a.x, b.x) + r + m, max(a.y, b.y) + r + m)
        case let .polyline(points, r):
            let xs = points.map(\.x), ys = points.map(\.y)
            return ((xs.min() ?? 0) - r - m, (ys.min() ?? 0) - r - m, (xs.max() ?? 0) + r + m, (ys.max() ?? 0) + r + m)
        case let .polygon(points):
            let xs = points.map(\.x), ys = points.map(\.y)
            return ((xs.min() ?? 0) - m, (ys.min() ?? 0) - m, (xs.max() ?? 0) + m, (ys.max() ?? 0) + m)
        }
    }

    @inline(__always)
    static func segmentDistance(_ x: Double, _ y: Double, _ a: Point, _ b: Point) -> Double {
        segmentDistanceSquared(x, y, a, b).squareRoot()
    }

    @inline(__always)
    static func segmentDistanceSquared(_ x: Double, _ y: Double, _ a: Point, _ b: Point) -> Double {
        let px = x - a.x, py = y - a.y, bx = b.x - a.x, by = b.y - a.y
        let length = bx * bx + by * by
        let t = length > 0 ? max(0, min(1, (px * bx + py * by) / length)) : 0
        let dx = px - bx * t, dy = py - by * t
        return dx * dx + dy * dy
    }

    /// The nearest distance from (x, y) to the path through `p` (closed: the
    /// last point joins the first). One square root per pixel, and a segment
    /// wholly above or below farther than the best so far is not measured.
    @inline(__always)
    static func pathDistance(_ x: Double, _ y: Double, _ p: UnsafeBufferPointer<Point>, closed: Bool) -> Double {
        var best = Double.infinity
        var j = closed ? p.count - 1 : 0
        for i in (closed ? 0 : 1)..<p.count {
            let a = p[j], b = p[i]
            j = i
            let gap = Swift.max(0, Swift.min(a.y, b.y) - y, y - Swift.max(a.y, b.y))
            // The margin keeps rounding from ever skipping the nearest segment.
            if gap * gap > best * 1.000001 + 1e-9 { continue }
            best = Swift.min(best, segmentDistanceSquared(x, y, a, b))
        }
        return best.squareRoot()
    }
}

/// A signed distance function, specialised per shape so the fill loop inlines it.
protocol DistanceField: Sendable {
    func distance(_ x: Double, _ y: Double) -> Double
    /// `distance` at (x[0], y) and (x[1], y): the same values.
    func distances(_ x: SIMD2<Double>, _ y: Double) -> SIMD2<Double>
    /// For the row at `y`, what is known without a distance per pixel (nil:
    /// nothing, test every pixel of the bounding box).
    func span(y: Double, band: Double) -> RowSpan?
    /// Readies this field for the pixels of the row at `y` only, and returns
    /// its `span`: it may drop whatever cannot come within `band` of that row
    /// (a polygon's far edges). What it keeps for the row is stored in
    /// arrays reused from row to row: a thread that readies one copy for
    /// each of its rows allocates them once, not once a row.
    mutating func prepare(row y: Double, band: Double) -> RowSpan?
}

extension DistanceField {
    @inline(__always) func distances(_ x: SIMD2<Double>, _ y: Double) -> SIMD2<Double> {
        SIMD2(distance(x[0], y), distance(x[1], y))
    }
    func span(y: Double, band: Double) -> RowSpan? { nil }
    mutating func prepare(row y: Double, band: Double) -> RowSpan? { span(y: y, band: band) }
}

/// One row of a shape: the x range it can touch at all, the x range where
/// every point is at least `band` inside it (but for `innerGap`, where that
/// is not known: the middle of a ring), and an x range within the outer one
/// where every point is at least `band` outside it (a ring's hole).
struct RowSpan {
    var outer: ClosedRange<Double>
    var inner: ClosedRange<Double>? = nil
    var hole: ClosedRange<Double>? = nil
    var innerGap: ClosedRange<Double>? = nil
}

struct CircleField: DistanceField {
    let cx: Double, cy: Double, r: Double
    @inline(__always) func distance(_ x: Double, _ y: Double) -> Double {
        ((x - cx) * (x - cx) + (y - cy) * (y - cy)).squareRoot() - r
    }

    @inline(__always) func distances(_ x: SIMD2<Double>, _ y: Double) -> SIMD2<Double> {
        badge_sqrt2((x - cx) * (x - cx) + (y - cy) * (y - cy)) - r
    }

    func span(y: Double, band: Double) -> RowSpan? {
        let dy = y - cy
        let outerRadius = r + band
        guard abs(dy) < outerRadius else { return RowSpan(outer: cx...cx) }
        let half = (outerRadius * outerRadius - dy * dy).squareRoot()
        return RowSpan(outer: (cx - half)...(cx + half), inner: Self.chord(cx: cx, dy: dy, radius: r - band))
    }

    /// Where the row `dy` from the centre crosses the circle of `radius`, if it does.
    @inline(__always)
    static func chord(cx: Double, dy: Double, radius: Double) -> ClosedRange<Double>? {
        guard radius > abs(dy) else { return nil }
        let half = (radius * radius - dy * dy).squareRoot()
        return (cx - half)...(cx + half)
    }
}

struct EllipseField: DistanceField {
    let cx: Double, cy: Double, rx: Double, ry: Double
    @inline(__always) func distance(_ x: Double, _ y: Double) -> Double {
        let nx = (x - cx) / rx, ny = (y - cy) / ry
        let k = (nx * nx + ny * ny).squareRoot()
        // Scaled by the local gradient so the edge stays one pixel wide.
        let gx = nx / rx, gy = ny / ry
        let g = (gx * gx + gy * gy).squareRoot()
        return g > 0 ? (k - 1) * k / g : -min(rx, ry)
    }

    /// With k the scaled radius above, g ≤ k / min(rx, ry), so the distance is
    /// at least (k - 1)·min(rx, ry) outside and at most -(1 - k)·min(rx, ry)
    /// inside: beyond k = 1 ± (band + 1) / min(rx, ry) a pixel is wholly out or
    /// in. The extra pixel is far more than any rounding.
    func span(y: Double, band: Double) -> RowSpan? {
        let shortest = min(rx, ry)
        guard shortest > 0, rx.isFinite, ry.isFinite else { return nil }
        let ny = (y - cy) / ry
        let reach = (band + 1) / shortest
        let outerK = 1 + reach, innerK = 1 - reach
        guard outerK * outerK > ny * ny else { return RowSpan(outer: cx...cx) }
        let half = rx * (outerK * outerK - ny * ny).squareRoot() + 1
        var span = RowSpan(outer: (cx - half)...(cx + half))
        if innerK > 0 && innerK * innerK > ny * ny {
            let inside = rx * (innerK * innerK - ny * ny).squareRoot()
            span.inner = (cx - inside)...(cx + inside)
        }
        return span
    }
}

struct RingField: DistanceField {
    let cx: Double, cy: Double, inner: Double, outer: Double
    @inline(__always) func distance(_ x: Double, _ y: Double) -> Double {
        let d = ((x - cx) * (x - cx) + (y - cy) * (y - cy)).squareRoot()
        return max(d - outer, inner - d)
    }

    @inline(__always) func distances(_ x: SIMD2<Double>, _ y: Double) -> SIMD2<Double> {
        let d = badge_sqrt2((x - cx) * (x - cx) + (y - cy) * (y - cy))
        // max(a, b) as Swift's max chooses: b where b >= a.
        var distance = d - outer
        let fromInner = inner - d
        distance.replace(with: fromInner, where: fromInner .>= distance)
        return distance
    }

    func span(y: Double, band: Double) -> RowSpan? {
        let dy = y - cy
        guard let outerChord = CircleField.chord(cx: cx, dy: dy, radius: outer + band) else { return RowSpan(outer: cx...cx) }
        // The solid band is narrowed by a hair, so that no pixel whose distance
        // would round to a coverage below 1 is called solid.
        let hair = 1e-7
        return RowSpan(outer: outerChord, inner: CircleField.chord(cx: cx, dy: dy, radius: outer - band - hair),
                       hole: CircleField.chord(cx: cx, dy: dy, radius: inner - band),
                       innerGap: CircleField.chord(cx: cx, dy: dy, radius: inner + band + hair))
    }
}

struct RectField: DistanceField {
    let x: Double, y: Double, w: Double, h: Double, r: Double
    @inline(__always) func distance(_ px: Double, _ py: Double) -> Double {
        let radius = min(r, w / 2, h / 2)
        let qx = abs(px - (x + w / 2)) - w / 2 + radius, qy = abs(py - (y + h / 2)) - h / 2 + radius
        let outside = (max(qx, 0) * max(qx, 0) + max(qy, 0) * max(qy, 0)).squareRoot()
        return outside + min(max(qx, qy), 0) - radius
    }
}

struct CapsuleField: DistanceField {
    let a: Point, b: Point, r: Double
    @inline(__always) func distance(_ x: Double, _ y: Double) -> Double {
        Shape.segmentDistance(x, y, a, b) - r
    }
}

struct PolylineField: DistanceField {
    let points: [Point], r: Double
    /// Set by `prepare` for one row: the one run of segments that can come
    /// within the band of it, when `keptOnly`; otherwise every segment counts.
    private var kept: [Point] = []
    private var keptOnly = false

    init(points: [Point], r: Double) {
        self.points = points
        self.r = r
    }

    @inline(__always) func distance(_ x: Double, _ y: Double) -> Double {
        if keptOnly {
            guard kept.count > 1 else { return .infinity }
            return kept.withUnsafeBufferPointer { Shape.pathDistance(x, y, $0, closed: false) } - r
        }
        guard points.count > 1 else { return .infinity }
        return points.withUnsafeBufferPointer { Shape.pathDistance(x, y, $0, closed: false) } - r
    }

    /// Keeps only the segments that can come within the band of the row,
    /// when they are one run: a run split where a segment is dropped would
    /// invent a segment between the others, and several runs are rare enough
    /// to measure whole.
    mutating func prepare(row y: Double, band: Double) -> RowSpan? {
        kept.removeAll(keepingCapacity: true)
        keptOnly = false
        guard points.count > 1 else { return nil }
        for i in 1..<points.count {
            let a = points[i - 1], b = points[i]
            guard max(0, min(a.y, b.y) - y, y - max(a.y, b.y)) <= band + r + 1 else { continue }
            if kept.last != a {
                guard kept.isEmpty else { return nil }
                kept.append(a)
            }
            kept.append(b)
        }
        keptOnly = true
        return nil
    }
}

struct PolygonField: DistanceField {
    let points: [Point]
    /// Set by `prepare` for one row: where the edges cross it (in order),
    /// the edges that can come within the band of it, and how far along the
    /// row each of those reaches, alone and merged.
    private var prepared = false
    private var crossings: [Double] = []
    private var near: [(Point, Point)] = []
    private var reaches: [ClosedRange<Double>] = []
    private var merged: [ClosedRange<Double>] = []

    init(points: [Point]) { self.points = points }

    /// `prepare`'s span, for a field not being readied.
    func span(y: Double, band: Double) -> RowSpan? {
        var field = self
        return field.prepare(row: y, band: band)
    }

    /// Even-odd: a pixel is inside when an odd number of edges cross its row
    /// to its right. Only edges near the row can be nearer than the band, and
    /// beyond the band coverage is 0 or 1 whatever the exact distance.
    ///
    /// The span: a pixel farther than the band, and a pixel more, from every
    /// edge is wholly in or out. `outer` spans the edges' pieces within that
    /// reach of the row, widened by it (and so every crossing: nothing beyond
    /// is inside); `inner` is the longest stretch of an inside interval clear
    /// of them, every pixel of it wholly covered. A long thin shape (the
    /// stripes' pieces at 45°, the rays) has a box mostly outside it, which
    /// no pixel then costs a distance.
    mutating func prepare(row y: Double, band: Double) -> RowSpan? {
        prepared = true
        crossings.removeAll(keepingCapacity: true)
        near.removeAll(keepingCapacity: true)
        reaches.removeAll(keepingCapacity: true)
        merged.removeAll(keepingCapacity: true)
        guard let first = points.first else { return nil }
        // One pixel more than the band, so rounding never drops the nearest edge.
        let reach = band + 1
        var j = points.count - 1
        for i in 0..<points.count {
            let pi = points[i], pj = points[j]
            j = i
            if (pi.y > y) != (pj.y > y) { crossings.append((pj.x - pi.x) * (y - pi.y) / (pj.y - pi.y) + pi.x) }
            let low = min(pi.y, pj.y), high = max(pi.y, pj.y)
            guard high >= y - reach && low <= y + reach else { continue }
            near.append((pj, pi))
            // The edge's x where it lies within `reach` of the row.
            var from = min(pi.x, pj.x), to = max(pi.x, pj.x)
            if high > low {
                let t0 = (y - reach - pi.y) / (pj.y - pi.y), t1 = (y + reach - pi.y) / (pj.y - pi.y)
                let ta = max(0, min(1, min(t0, t1))), tb = max(0, min(1, max(t0, t1)))
                let xa = pi.x + (pj.x - pi.x) * ta, xb = pi.x + (pj.x - pi.x) * tb
                from = min(xa, xb)
                to = max(xa, xb)
            }
            reaches.append((from - reach)...(to + reach))
        }
        crossings.sort()
        guard !reaches.isEmpty else { return RowSpan(outer: first.x...first.x) }
        reaches.sort { $0.lowerBound < $1.lowerBound }
        // The edges' reach as disjoint ranges, in order.
        merged.append(reaches[0])
        for range in reaches.dropFirst() {
            if range.lowerBound <= merged[merged.count - 1].upperBound {
                merged[merged.count - 1] = merged[merged.count - 1].lowerBound...max(merged[merged.count - 1].upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        var span = RowSpan(outer: merged[0].lowerBound...merged[merged.count - 1].upperBound)
        // Between the crossings in pairs lies the inside; the gaps between the edges' reach there are solid.
        var longest = 0.0
        for k in stride(from: 0, to: crossings.count - 1, by: 2) {
            let inside = crossings[k]...crossings[k + 1]
            for (a, b) in zip(merged, merged.dropFirst()) where a.upperBound < b.lowerBound {
                let from = max(a.upperBound, inside.lowerBound), to = min(b.lowerBound, inside.upperBound)
                if to - from > longest {
                    longest = to - from
                    span.inner = from...to
                }
            }
        }
        return span
    }

    @inline(__always) func distance(_ x: Double, _ y: Double) -> Double {
        guard !points.isEmpty else { return .infinity }
        guard prepared else { return unpreparedDistance(x, y) }
        var inside = false
        for c in crossings where x < c { inside.toggle() }
        var best = Double.infinity
        for (a, b) in near { best = min(best, Shape.segmentDistanceSquared(x, y, a, b)) }
        let d = best.squareRoot()
        return inside ? -d : d
    }

    private func unpreparedDistance(_ x: Double, _ y: Double) -> Double {
        var field = self
        _ = field.prepare(row: y, band: .infinity)
        return field.distance(x, y)
    }
}
