@testable import Canvas
import Testing

/// The sketch outline's max/min filter (van Herk/Gil-Werman) gives what the direct
/// filter, a loop over every pixel of the window, gives: the sketches drawn before stay verifiable.
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

    @Test func aCancelledFilterStops() {
        #expect(Canvas.rank([UInt8](repeating: 9, count: 64 * 64), width: 64, height: 64, radius: 3, max: true,
                            isCancelled: { true }) == nil)
    }
}
