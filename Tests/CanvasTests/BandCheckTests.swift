import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
@testable import Canvas

/// zlib checks each band of the encoder's PNG on its own, as soon as it is
/// compressed (`PNGDataCheck.Bands`): from the rows before it as its window,
/// against its own rows. The proof it gives must be for exactly the PNG
/// written, and a band inflated from any other window must be refused.
@Suite(.threadsOfTheirOwn)
struct BandCheckTests {
    /// A picture whose rows repeat from band to band (so that matches reach
    /// back into the rows before a band), with a gradient and, unless
    /// `opaque`, translucent pixels.
    static func canvas(side: Int = 512, opaque: Bool) throws -> Canvas {
        let canvas = try Canvas(width: side, height: side, background: opaque ? RGBA(20, 30, 40) : .clear)
        canvas.fill(.circle(center: Point(Double(side) / 2, Double(side) / 2), radius: Double(side) * 0.45),
                    with: .linear(start: Point(0, 0), end: Point(Double(side), Double(side)),
                                  stops: [(0, RGBA(250, 200, 40)), (1, RGBA(40, 90, 220, opaque ? 255 : 160))]))
        for y in stride(from: 0, to: side, by: 37) {
            canvas.fill(.roundedRect(x: 10, y: Double(y), width: Double(side) - 20, height: 9, radius: 4), with: .solid(RGBA(255, 255, 255)))
        }
        return canvas
    }

    @Test(arguments: [2, 6], [true, false])
    func theEncodersProofIsForExactlyThePNGItWrites(level: Int, opaque: Bool) throws {
        let canvas = try Self.canvas(opaque: opaque)
        #expect(PNGEncoder.bandStarts(height: canvas.height, width: canvas.width).count > 3, "the picture is encoded in several bands")
        let (png, proof) = try PNGEncoder.encodeInflating(canvas, level: level, filter: .none, inflating: true)
        let inflated = try #require(proof, "zlib's check of every band passed")
        #expect(inflated.vouches(for: png))
        try PNGDataCheck.verify(png)
        #expect(try PNGEncoder.encode(canvas, level: level, filter: .none) == png, "checked or not, the same bytes")
        var changed = [UInt8](png)
        changed[changed.count - 40] ^= 0x01
        #expect(!inflated.vouches(for: Data(changed)))
    }

    /// Every band of `canvas` compressed as the encoder does, and checked,
    /// band `wrong` from a window of zeros; the check's result.
    static func check(_ canvas: Canvas, windowOfZerosFor wrong: Int?) throws -> PNGDataCheck.Inflated {
        let layout = PNGEncoder.RowLayout(width: canvas.width, channels: 4, filter: .none)
        let starts = PNGEncoder.bandStarts(height: canvas.height, width: canvas.width)
        let count = starts.count - 1
        let check = PNGDataCheck.Bands(width: canvas.width, height: canvas.height, channels: 4, count: count)
        let scratch = FastScratch(largestBand: layout.bandBytes(rows: canvas.height))
        var bands: [PNGEncoder.Band] = []
        try canvas.pixels.withUnsafeBufferPointer { px in
            for k in 0..<count {
                let filtered = PNGEncoder.filterBand(px, layout: layout, rows: starts[k]..<starts[k + 1], into: scratch)
                let band = try PNGEncoder.compressBandFast(filtered, last: k == count - 1, scratch: scratch)
                if k == wrong {
                    let zeros = [UInt8](repeating: 0, count: filtered.window.count)
                    zeros.withUnsafeBytes { check.check(k, deflated: band.deflated, window: $0, rows: filtered.rows, scratch: scratch.check) }
                } else {
                    check.check(k, deflated: band.deflated, window: filtered.window, rows: filtered.rows, scratch: scratch.check)
                }
                bands.append(band)
            }
        }
        return try check.finish(zlibHeader: Data(PNGEncoder.zlibHeader(level: 2)), trailer: Data(PNGEncoder.adlerTrailer(bands)))
    }

    @Test func aBandInflatedFromAnotherWindowIsRefused() throws {
        let canvas = try Self.canvas(opaque: false)
        // From the rows before each band, every band passes.
        _ = try Self.check(canvas, windowOfZerosFor: nil)
        let error = #expect(throws: BadgeError.self) { try Self.check(canvas, windowOfZerosFor: 2) }
        #expect(error?.code == .invalidImage)
        #expect(error?.message.contains("band 3 of the image data does not inflate to the rows it was made from") == true,
                "\(String(describing: error))")
    }
}
