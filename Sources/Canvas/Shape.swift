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
        let px = x - a.x, py = y - a.y, bx = b.x - a.x, by = b.y - a.y
        let length = bx * bx + by * by
        let t = length > 0 ? max(0, min(1, (px * bx + py * by) / length)) : 0
        let dx = px - bx * t, dy = py - by * t
        return (dx * dx + dy * dy).squareRoot()
    }
}

/// A signed distance function, specialised per shape so the fill loop inlines it.
protocol DistanceField {
    func distance(_ x: Double, _ y: Double) -> Double
    /// For the row at `y`: the x range the shape can touch at all, and the x
    /// range where every point is at least `band` inside it (nil: no such
    /// knowledge, test every pixel of the bounding box).
    func span(y: Double, band: Double) -> (outer: ClosedRange<Double>, inner: ClosedRange<Double>?)?
}

extension DistanceField {
    func span(y: Double, band: Double) -> (outer: ClosedRange<Double>, inner: ClosedRange<Double>?)? { nil }
}

struct CircleField: DistanceField {
    let cx: Double, cy: Double, r: Double
    @inline(__always) func distance(_ x: Double, _ y: Double) -> Double {
        ((x - cx) * (x - cx) + (y - cy) * (y - cy)).squareRoot() - r
    }

    func span(y: Double, band: Double) -> (outer: ClosedRange<Double>, inner: ClosedRange<Double>?)? {
        let dy = y - cy
        let outerRadius = r + band
        guard abs(dy) < outerRadius else { return (cx...cx, nil) }
        let half = (outerRadius * outerRadius - dy * dy).squareRoot()
        let innerRadius = r - band
        var inner: ClosedRange<Double>?
        if innerRadius > abs(dy) {
            let innerHalf = (innerRadius * innerRadius - dy * dy).squareRoot()
            inner = (cx - innerHalf)...(cx + innerHalf)
        }
        return ((cx - half)...(cx + half), inner)
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
}

struct RingField: DistanceField {
    let cx: Double, cy: Double, inner: Double, outer: Double
    @inline(__always) func distance(_ x: Double, _ y: Double) -> Double {
        let d = ((x - cx) * (x - cx) + (y - cy) * (y - cy)).squareRoot()
        return max(d - outer, inner - d)
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
    @inline(__always) func distance(_ x: Double, _ y: Double) -> Double {
        var best = Double.infinity
        points.withUnsafeBufferPointer { p in
            for i in 1..<max(p.count, 1) { best = min(best, Shape.segmentDistance(x, y, p[i - 1], p[i])) }
        }
        return best - r
    }
}

struct PolygonField: DistanceField {
    let points: [Point]
    @inline(__always) func distance(_ x: Double, _ y: Double) -> Double {
        var best = Double.infinity
        var inside = false
        points.withUnsafeBufferPointer { p in
            var j = p.count - 1
            for i in 0..<p.count {
                let pi = p[i], pj = p[j]
                best = min(best, Shape.segmentDistance(x, y, pj, pi))
                if (pi.y > y) != (pj.y > y), x < (pj.x - pi.x) * (y - pi.y) / (pj.y - pi.y) + pi.x { inside.toggle() }
                j = i
            }
        }
        return inside ? -best : best
    }
}
