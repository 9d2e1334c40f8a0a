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

    /// Signed distance from (x, y) to the shape's edge.
    @inline(__always)
    func distance(_ x: Double, _ y: Double) -> Double {
        switch self {
        case let .circle(c, r):
            return ((x - c.x) * (x - c.x) + (y - c.y) * (y - c.y)).squareRoot() - r
        case let .ellipse(c, rx, ry):
            let nx = (x - c.x) / rx, ny = (y - c.y) / ry
            let k = (nx * nx + ny * ny).squareRoot()
            // Scaled by the local gradient so the edge stays one pixel wide.
            let gx = nx / rx, gy = ny / ry
            let g = (gx * gx + gy * gy).squareRoot()
            return g > 0 ? (k - 1) * k / g : -min(rx, ry)
        case let .ring(c, inner, outer):
            let d = ((x - c.x) * (x - c.x) + (y - c.y) * (y - c.y)).squareRoot()
            return max(d - outer, inner - d)
        case let .roundedRect(rx, ry, w, h, radius):
            let r = min(radius, w / 2, h / 2)
            let cx = rx + w / 2, cy = ry + h / 2
            let qx = abs(x - cx) - w / 2 + r, qy = abs(y - cy) - h / 2 + r
            let outside = (max(qx, 0) * max(qx, 0) + max(qy, 0) * max(qy, 0)).squareRoot()
            return outside + min(max(qx, qy), 0) - r
        case let .capsule(a, b, r):
            return Self.segmentDistance(x, y, a, b) - r
        case let .polyline(points, r):
            var best = Double.infinity
            for i in 1..<max(points.count, 1) { best = min(best, Self.segmentDistance(x, y, points[i - 1], points[i])) }
            return best - r
        case let .polygon(points):
            var best = Double.infinity
            var inside = false
            var j = points.count - 1
            for i in 0..<points.count {
                let pi = points[i], pj = points[j]
                best = min(best, Self.segmentDistance(x, y, pj, pi))
                if (pi.y > y) != (pj.y > y), x < (pj.x - pi.x) * (y - pi.y) / (pj.y - pi.y) + pi.x { inside.toggle() }
                j = i
            }
            return inside ? -best : best
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
