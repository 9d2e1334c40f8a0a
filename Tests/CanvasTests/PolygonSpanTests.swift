import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
@testable import Canvas

/// A polygon's row spans (`PolygonField.span`) skip the pixels of its box
/// that no edge comes near and write its deep inside without a distance:
/// the pixels must be exactly those measured one by one.
@Suite(.threadsOfTheirOwn)
struct PolygonSpanTests {
    /// The same field, measured pixel by pixel.
    struct Unspanned: DistanceField {
        var field: PolygonField
        func distance(_ x: Double, _ y: Double) -> Double { field.distance(x, y) }
        func distances(_ x: SIMD2<Double>, _ y: Double) -> SIMD2<Double> { field.distances(x, y) }
        /// Readied for the row like the polygon, but with no span: every pixel of the box is measured.
        mutating func prepare(row y: Double, band: Double) -> RowSpan? {
            _ = field.prepare(row: y, band: band)
            return nil
        }
    }

    /// Shapes like the art's: thin pieces at any angle, rays, stars, a concave
    /// comb, a self-crossing bow tie, and shapes reaching past the canvas.
    static func polygons(_ random: inout SeededRandom) -> [[Point]] {
        func unit() -> Double { Double(random.next() % 1_000_000) / 1_000_000 }
        var shapes: [[Point]] = []
        for _ in 0..<12 {
            let c = Point(unit() * 160 - 20, unit() * 160 - 20), angle = unit() * .pi, length = 10 + unit() * 90, half = 0.3 + unit() * 8
            let t = Point(cos(angle), sin(angle)), n = Point(-sin(angle), cos(angle))
            func corner(_ along: Double, _ across: Double) -> Point {
                Point(c.x + t.x * along + n.x * across, c.y + t.y * along + n.y * across)
            }
            shapes.append([corner(-length, half), corner(length, half), corner(length, -half), corner(-length, -half)])
        }
        for k in 0..<8 {
            let a0 = Double(k) * .pi / 4 + unit() * 0.1, a1 = a0 + .pi / 8
            shapes.append([Point(60, 60)] + (0...4).map { i in
                let a = a0 + (a1 - a0) * Double(i) / 4
                return Point(60 + cos(a) * 70, 60 + sin(a) * 70)
            })
        }
        for _ in 0..<6 {
            let c = Point(unit() * 120, unit() * 120), outer = 5 + unit() * 50, inner = outer * (0.3 + unit() * 0.4), phase = unit()
            shapes.append((0..<10).map { k in
                let a = Double(k) * .pi / 5 + phase, r = k % 2 == 0 ? outer : inner
                return Point(c.x + cos(a) * r, c.y + sin(a) * r)
            })
        }
        shapes.append([Point(5, 5), Point(115, 5), Point(115, 110), Point(95, 110), Point(95, 30), Point(75, 30), Point(75, 110),
                       Point(55, 110), Point(55, 30), Point(35, 30), Point(35, 110), Point(5, 110)])
        shapes.append([Point(10, 10), Point(110, 100), Point(110, 10), Point(10, 100)])
        shapes.append([Point(-30, 40), Point(150, 38.5), Point(150, 41.7), Point(-30, 43.2)])
        shapes.append([Point(60, 60)])
        return shapes
    }

    @Test(arguments: [0.0, 0.75, 6.0])
    func spansDrawTheSamePixelsAsDistances(softness: Double) throws {
        var random = SeededRandom.forTest("polygon spans, softness \(softness)")
        let paints: [(Paint, Double)] = [
            (.solid(RGBA(200, 40, 90)), 1), (.solid(RGBA(20, 140, 220, 120)), 1), (.solid(RGBA(250, 250, 240)), 0.55),
            (.linear(start: Point(0, 0), end: Point(120, 120), stops: [(0, RGBA(255, 0, 0)), (1, RGBA(0, 0, 255))]), 1),
            (.radial(center: Point(60, 60), radius: 70, stops: [(0, RGBA(255, 255, 255)), (1, RGBA(0, 80, 0, 200))]), 0.8),
        ]
        var drawn = 0
        for (index, points) in Self.polygons(&random).enumerated() {
            let (paint, opacity) = paints[index % paints.count]
            let spanned = try Canvas(width: 120, height: 120, background: RGBA(30, 60, 90))
            let measured = try Canvas(width: 120, height: 120, background: RGBA(30, 60, 90))
            let box = Shape.polygon(points).bounds(margin: softness)
            spanned.fill(PolygonField(points: points), box, paint, opacity, softness, nil)
            measured.fill(Unspanned(field: PolygonField(points: points)), box, paint, opacity, softness, nil)
            #expect(spanned.pixels == measured.pixels, "polygon \(index) (\(points.count) points) differs with softness \(softness)")
            if spanned.pixels != (try Canvas(width: 120, height: 120, background: RGBA(30, 60, 90))).pixels { drawn += 1 }
        }
        // The shapes were drawn, not all off the canvas.
        #expect(drawn >= 20, "only \(drawn) polygons drew anything")
    }

    /// A polyline never readied for a row: every segment measured.
    struct WholePolyline: DistanceField {
        let field: PolylineField
        func distance(_ x: Double, _ y: Double) -> Double { field.distance(x, y) }
    }

    /// A polyline readied for each row keeps only the one run of segments
    /// near it (or all of them, when several runs are): the pixels must be
    /// those of every segment measured, for open paths that pass a row once,
    /// zigzag across it, turn back, and leave the canvas.
    @Test(arguments: [0.0, 0.75, 6.0])
    func polylinesReadiedPerRowDrawTheSamePixelsAsMeasuredWhole(softness: Double) throws {
        var random = SeededRandom.forTest("polylines per row, softness \(softness)")
        func unit() -> Double { Double(random.next() % 1_000_000) / 1_000_000 }
        var drawn = 0
        for index in 0..<24 {
            let count = 2 + Int(random.next() % 9)
            var points = (0..<count).map { _ in Point(unit() * 160 - 20, unit() * 160 - 20) }
            if index % 4 == 0 {
                // A zigzag: many runs of segments near each row.
                points = (0..<count).map { k in Point(10 + Double(k) * 12, k % 2 == 0 ? 20 : 100) }
            }
            let r = 0.5 + unit() * 6
            let background = RGBA(30, 60, 90)
            let readied = try Canvas(width: 120, height: 120, background: background)
            let whole = try Canvas(width: 120, height: 120, background: background)
            let box = Shape.polyline(points, radius: r).bounds(margin: softness)
            let paint = Paint.solid(RGBA(UInt8(random.next() % 256), 200, 40, index % 2 == 0 ? 255 : 150))
            readied.fill(PolylineField(points: points, r: r), box, paint, 1, softness, nil)
            whole.fill(WholePolyline(field: PolylineField(points: points, r: r)), box, paint, 1, softness, nil)
            #expect(readied.pixels == whole.pixels, "polyline \(index) (\(points.count) points, r \(r)) differs with softness \(softness)")
            if readied.pixels != (try Canvas(width: 120, height: 120, background: background)).pixels { drawn += 1 }
        }
        #expect(drawn >= 18, "only \(drawn) polylines drew anything")
    }

    /// The span of a thin piece at 45° is the piece's width and the edges'
    /// reach, not its box; its middle is solid.
    @Test func aThinDiagonalPieceIsMeasuredOnlyNearItsEdges() throws {
        let c = Point(60, 60), half = 6.0, length = 30.0
        let t = Point(0.7071, 0.7071), n = Point(0.7071, -0.7071)
        func corner(_ along: Double, _ across: Double) -> Point {
            Point(c.x + t.x * along + n.x * across, c.y + t.y * along + n.y * across)
        }
        let field = PolygonField(points: [corner(-length, half), corner(length, half), corner(length, -half), corner(-length, -half)])
        let span = try #require(field.span(y: 60.5, band: 0.5))
        let box = Shape.polygon([corner(-length, half), corner(length, half), corner(length, -half), corner(-length, -half)]).bounds(margin: 0)
        #expect(span.outer.upperBound - span.outer.lowerBound < 0.6 * (box.x1 - box.x0))
        let inner = try #require(span.inner)
        // 12 px across at 45° is 17 px along a row, less each edge's reach: 1.5 px up and down
        // the edge (1.5 px along the row) and 1.5 px more.
        #expect(inner.upperBound - inner.lowerBound > 10.9 && inner.contains(60.5))
        // Far from the piece: nothing to measure.
        let empty = try #require(field.span(y: 5.5, band: 0.5))
        #expect(empty.outer.upperBound - empty.outer.lowerBound == 0)
    }
}
