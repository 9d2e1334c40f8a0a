import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Testing

/// Edge pixels are as opaque as the share of them the shape covers: checked
/// against 8×8 supersampling for every kind of shape, including the fast
/// paths (a ring's skipped hole, a polygon's per-row edges).
@Suite(.threadsOfTheirOwn)
struct CoverageTests {
    static let star: [Point] = (0..<10).map { k in
        let a = Double(k) * .pi / 5 - .pi / 2, r = k % 2 == 0 ? 44.0 : 19.0
        return Point(50 + cos(a) * r, 52 + sin(a) * r)
    }

    static func segmentDistance(_ x: Double, _ y: Double, _ a: Point, _ b: Point) -> Double {
        let bx = b.x - a.x, by = b.y - a.y
        let t = max(0, min(1, ((x - a.x) * bx + (y - a.y) * by) / (bx * bx + by * by)))
        return hypot(x - a.x - bx * t, y - a.y - by * t)
    }

    static let cases: [(String, Shape, @Sendable (Double, Double) -> Bool)] = [
        ("disc", .circle(center: Point(50.3, 49.6), radius: 37.2), { x, y in hypot(x - 50.3, y - 49.6) <= 37.2 }),
        ("ring", .ring(center: Point(50, 50), inner: 22.5, outer: 41.3), { x, y in (22.5...41.3).contains(hypot(x - 50, y - 50)) }),
        ("star", .polygon(star), { x, y in
            var inside = false
            var j = star.count - 1
            for i in 0..<star.count {
                let p = star[i], q = star[j]
                if (p.y > y) != (q.y > y), x < (q.x - p.x) * (y - p.y) / (q.y - p.y) + p.x { inside.toggle() }
                j = i
            }
            return inside
        }),
        ("capsule", .capsule(from: Point(15, 80), to: Point(82, 22), radius: 9.5), { x, y in
            segmentDistance(x, y, Point(15, 80), Point(82, 22)) <= 9.5
        }),
        ("polyline", .polyline([Point(10, 20), Point(50, 85), Point(90, 15)], radius: 6), { x, y in
            min(segmentDistance(x, y, Point(10, 20), Point(50, 85)), segmentDistance(x, y, Point(50, 85), Point(90, 15))) <= 6
        }),
    ]

    @Test(arguments: 0..<CoverageTests.cases.count)
    func edgeAlphaMatchesCoveredArea(index: Int) throws {
        let (name, shape, inside) = Self.cases[index]
        let canvas = try Canvas(width: 100, height: 100)
        canvas.fill(shape, with: .solid(.white))
        var worst = 0.0, partial = 0
        for y in 0..<100 {
            for x in 0..<100 {
                var hits = 0
                for sy in 0..<8 { for sx in 0..<8 where inside(Double(x) + (Double(sx) + 0.5) / 8, Double(y) + (Double(sy) + 0.5) / 8) { hits += 1 } }
                let alpha = Double(canvas.pixel(x, y).a) / 255
                worst = max(worst, abs(alpha - Double(hits) / 64))
                if alpha > 0.05 && alpha < 0.95 { partial += 1 }
            }
        }
        // A one-pixel-wide linear ramp is within a few percent on smooth edges;
        // only at the star's sharp tips does it differ more from the true area.
        #expect(worst < (name == "star" ? 0.35 : 0.1), "\(name): an edge pixel is off by \(worst)")
        #expect(partial > 40, "\(name): only \(partial) anti-aliased edge pixels")
    }
}

/// Large shapes are drawn with their rows shared between threads; the pixels
/// must be exactly those one thread draws, dither and soft edges included.
@Suite(.threadsOfTheirOwn)
struct ParallelDrawingTests {
    static func draw(threads: Int) throws -> [UInt8] {
        try ImageThreads.$limit.withValue(threads) { try drawn() }
    }

    private static func drawn() throws -> [UInt8] {
        let canvas = try Canvas(width: 1024, height: 1024, background: .clear)
        canvas.fill(.roundedRect(x: 0, y: 0, width: 1024, height: 1024, radius: 0),
                    with: .linear(start: Point(0, 0), end: Point(0, 1024), stops: [(0, RGBA(20, 40, 90)), (1, RGBA(120, 30, 80))]))
        canvas.fill(.circle(center: Point(512, 530), radius: 470), with: .solid(RGBA(0, 0, 0, 120)), softness: 24)
        canvas.fill(.ring(center: Point(512, 512), inner: 400, outer: 460), with: .radial(center: Point(400, 380), radius: 600,
                    stops: [(0, RGBA(250, 220, 130)), (1, RGBA(168, 118, 30))]))
        canvas.fill(.polygon(CoverageTests.star.map { Point($0.x * 9 + 60, $0.y * 9 + 40) }), with: .solid(.white), opacity: 0.9)
        return Array(canvas.pixels)
    }

    @Test func everyThreadCountGivesTheSamePixels() throws {
        let one = try Self.draw(threads: 1)
        #expect(one.contains { $0 != 0 }, "something was drawn")
        for threads in [2, 3, 4] {
            #expect(try Self.draw(threads: threads) == one, "\(threads) threads")
        }
    }
}
