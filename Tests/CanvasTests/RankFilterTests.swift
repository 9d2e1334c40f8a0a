@testable import Canvas
import BadgeTestSupport
import Testing

/// The sketch outline's max/min filter (van Herk/Gil-Werman) gives what the direct
/// filter, a loop over every pixel of the window, gives: the sketches drawn before stay verifiable.
@Suite(.threadsOfTheirOwn)
struct RankFilterTests {
    /// The direct square filter, the window clipped at the edges.
    static func direct(_ values: [UInt8], width: Int, height: Int, radius: Int, max useMax: Bool) -> [UInt8] {
        func pick(_ a: UInt8, _ b: UInt8) -> UInt8 { useMax ? Swift.max(a, b) : Swift.min(a, b) }
        var across = values
        for y in 0..<height {
            for x in 0..<width {
                var v = values[y * width + x]
                for k in Swift.max(0, x - radius)...Swift.min(width - 1, x + radius) { v = pick(v, values[y * width + k]) }
                across[y * width + x] = v
            }
        }
        var out = across
        for y in 0..<height {
            for x in 0..<width {
                var v = across[y * width + x]
                for k in Swift.max(0, y - radius)...Swift.min(height - 1, y + radius) { v = pick(v, across[k * width + x]) }
                out[y * width + x] = v
            }
        }
        return out
    }

    @Test(arguments: [(1, 17, 9), (2, 40, 33), (5, 64, 64), (24, 100, 70), (9, 7, 5), (30, 13, 50)])
    func theFastFilterIsTheDirectOne(radius: Int, width: Int, height: Int) throws {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15 &* UInt64(radius * 1000 + width)
        let values = (0..<(width * height)).map { _ -> UInt8 in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            // Mostly 0 or 255 with anti-aliased edges between, as a mask's alpha is.
            let r = UInt8(truncatingIfNeeded: state >> 56)
            return r < 100 ? 0 : r > 200 ? 255 : r
        }
        for useMax in [true, false] {
            let fast = try #require(Canvas.rank(values, width: width, height: height, radius: radius, max: useMax))
            #expect(fast == Self.direct(values, width: width, height: height, radius: radius, max: useMax),
                    "radius \(radius), \(width)×\(height), \(useMax ? "max" : "min")")
        }
    }

    /// The outline filters only the box around the mask's painted pixels; the
    /// pixels it draws are those of the whole picture filtered (the direct filter
    /// over all of it), for blobs in the middle, at the edges and in a corner.
    @Test(arguments: [(1, 40, 30), (3, 64, 48), (6, 50, 50), (12, 40, 60)])
    func theOutlineOfTheBoxIsTheOutlineOfThePicture(radius: Int, width: Int, height: Int) throws {
        let placements: [(Int, Int, Int, Int)] = [
            (width / 3, height / 3, width / 2, height / 2), (0, height / 2, 4, height), (width - 3, 0, width, 5),
            (width / 2, 0, width / 2 + 1, 1),
        ]
        for (x0, y0, x1, y1) in placements {
            let mask = try Canvas(width: width, height: height)
            var state: UInt64 = UInt64(radius * 7919 + x0 * 31 + y0)
            var alpha = [UInt8](repeating: 0, count: width * height)
            mask.pixels.withUnsafeMutableBufferPointer { px in
                for y in y0..<y1 {
                    for x in x0..<x1 {
                        state = state &* 6364136223846793005 &+ 1442695040888963407
                        let a = UInt8(truncatingIfNeeded: state >> 56) | 0x20
                        px[(y * width + x) * 4 + 3] = a
                        alpha[y * width + x] = a
                    }
                }
            }
            let drawn = try Canvas(width: width, height: height, background: .white)
            drawn.drawOutline(of: mask, radius: radius, color: RGBA(10, 20, 30))
            let expected = try Canvas(width: width, height: height, background: .white)
            let grown = Self.direct(alpha, width: width, height: height, radius: radius, max: true)
            let shrunk = Self.direct(alpha, width: width, height: height, radius: radius, max: false)
            let c = (10.0, 20.0, 30.0, 255.0)
            expected.pixels.withUnsafeMutableBufferPointer { buffer in
                for i in 0..<(width * height) where grown[i] > shrunk[i] {
                    Canvas.blend(buffer, at: i * 4, c, Double(Int(grown[i]) - Int(shrunk[i])) / 255)
                }
            }
            #expect(drawn.pixels == expected.pixels, "radius \(radius), \(width)×\(height), blob \(x0),\(y0)-\(x1),\(y1)")
        }
        // An empty mask draws nothing.
        let blank = try Canvas(width: width, height: height, background: .white)
        let before = blank.pixels
        blank.drawOutline(of: try Canvas(width: width, height: height), radius: radius, color: .black)
        #expect(blank.pixels == before)
    }

    @Test func aCancelledFilterStops() {
        #expect(Canvas.rank([UInt8](repeating: 9, count: 64 * 64), width: 64, height: 64, radius: 3, max: true,
                            isCancelled: { true }) == nil)
    }
}
