import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Testing

@Suite(.threadsOfTheirOwn)
struct EffectsTests {
    @Test func aGaussianBlurSoftensAHardEdge() throws {
        let canvas = try Canvas(width: 80, height: 80)
        canvas.fill(.roundedRect(x: 20, y: 20, width: 40, height: 40, radius: 0), with: .solid(.black))
        #expect(canvas.pixel(19, 40).a == 0 && canvas.pixel(20, 40).a == 255)
        let soft = try Canvas(try GDImage(canvas).blurred(radius: 6))
        #expect(soft.width == 80 && soft.height == 80)
        // The edge now ramps: alpha rises step by step across it.
        let ramp = (10..<31).map { Int(soft.pixel($0, 40).a) }
        #expect(zip(ramp, ramp.dropFirst()).allSatisfy { $0 <= $1 }, "\(ramp)")
        #expect(ramp.filter { $0 > 10 && $0 < 245 }.count >= 4, "\(ramp)")
        #expect(soft.pixel(40, 40).a >= 250)
        #expect(soft.pixel(2, 2).a == 0)
    }

    @Test func aShadowLayerCompositesUnderTheArt() throws {
        let base = try Canvas(width: 40, height: 40, background: .white)
        let shadow = try Canvas(width: 40, height: 40)
        shadow.fill(.circle(center: Point(20, 20), radius: 10), with: .solid(.black))
        base.composite(shadow, opacity: 0.5)
        let middle = base.pixel(20, 20)
        #expect(middle.a == 255 && abs(Int(middle.r) - 128) <= 1, "\(middle)")
        #expect(base.pixel(1, 1) == .white)
        base.setPixel(0, 0, RGBA(1, 2, 3))
        #expect(base.pixel(0, 0) == RGBA(1, 2, 3))
        // Outside the canvas: nothing happens, and no pixel inside changes.
        func pixels() -> [RGBA] { (0..<40).flatMap { y in (0..<40).map { x in base.pixel(x, y) } } }
        let unchanged = pixels()
        for (x, y) in [(99, 99), (40, 0), (0, 40), (-1, 0), (0, -1), (40, 39)] {
            base.setPixel(x, y, .black)
            #expect(pixels() == unchanged, "setPixel(\(x), \(y)) changed a pixel inside the canvas")
        }
    }

    @Test func theParallelEncoderWritesOneValidStream() throws {
        // Big enough for several bands: the joined stream must decode (zlib
        // checks the Adler-32 of the whole) to the same pixels.
        let canvas = try Canvas(width: 700, height: 800)
        canvas.fill(.circle(center: Point(350, 400), radius: 330), with: .radial(
            center: Point(300, 300), radius: 500, stops: [(0, RGBA(250, 200, 80)), (1, RGBA(30, 40, 120))]))
        let png = try PNGEncoder.encode(canvas, level: 2)
        #expect(png == (try PNGEncoder.encode(canvas, level: 2)), "the same canvas must give the same bytes")
        let decoded = try GDImage.decodePNG(png)
        for (x, y) in [(350, 400), (100, 100), (0, 0), (699, 799), (350, 71), (350, 729)] {
            let want = canvas.pixel(x, y), got = decoded.pixel(x, y)
            #expect(want.r == got.r && want.g == got.g && want.b == got.b && abs(Int(want.a) - Int(got.a)) <= 2, "\(x),\(y)")
        }
    }
}
