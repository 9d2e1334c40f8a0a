import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Testing

@Suite(.threadsOfTheirOwn)
struct CanvasTests {
    /// Small canvases come from calloc, large ones (1 MB and up) are mapped
    /// from the kernel: both start transparent, and a new canvas never shows
    /// what a freed one held.
    @Test(arguments: [64, 600, 1024])
    func aNewCanvasIsTransparentEverywhere(side: Int) throws {
        let drawn = try Canvas(width: side, height: side, background: RGBA(200, 10, 10))
        #expect(drawn.pixel(side - 1, side - 1) == RGBA(200, 10, 10))
        let fresh = try Canvas(width: side, height: side)
        #expect(fresh.pixels.allSatisfy { $0 == 0 })
        #expect(fresh.pixels.count == side * side * 4)
        let other = try Canvas(width: side, height: side)
        #expect(fresh.pixels == other.pixels)
        other.fill(.circle(center: Point(2, 2), radius: 1), with: .solid(.white))
        #expect(fresh.pixels != other.pixels)
    }

    /// A picture drawn band by band (as the art engine does on several
    /// threads) is the picture drawn whole, and a band never draws outside its rows.
    @Test func drawingInBandsGivesThePictureDrawnWhole() throws {
        func paint(_ canvas: Canvas) throws {
            canvas.fill(.circle(center: Point(100, 100), radius: 80), with: .radial(
                center: Point(80, 70), radius: 120, stops: [(0, RGBA(250, 220, 130)), (1, RGBA(90, 40, 10))]))
            canvas.fill(.ellipse(center: Point(100, 60), rx: 70, ry: 30), with: .linear(
                start: Point(0, 30), end: Point(0, 90), stops: [(0, RGBA(255, 255, 255, 60)), (1, RGBA(255, 255, 255, 0))]))
            canvas.fill(.ring(center: Point(100, 104), inner: 70, outer: 90), with: .solid(RGBA(0, 0, 0, 100)), softness: 6)
            canvas.addGrain(amount: 5, seed: 9)
            let face = try Font.caption().open()
            canvas.draw(try face.render("BANDS", pixelSize: 30), color: .white, x: 55, y: 120)
        }
        let whole = try Canvas(width: 200, height: 200)
        try paint(whole)
        let banded = try Canvas(width: 200, height: 200)
        for rows in [0..<37, 37..<100, 100..<101, 101..<200] { try paint(banded.rows(rows)) }
        #expect(banded.pixels == whole.pixels)
        // As the art engine draws: pages left unmapped, each band mapping its own rows first.
        let unmapped = try Canvas(width: 200, height: 200, mapped: false)
        #expect(unmapped.pixels.allSatisfy { $0 == 0 })
        for rows in [101..<200, 0..<37, 37..<101] {
            let band = unmapped.rows(rows)
            band.mapRows()
            try paint(band)
        }
        #expect(unmapped.pixels == whole.pixels)

        let band = try Canvas(width: 200, height: 200)
        try paint(band.rows(50..<60))
        for y in [0, 49, 60, 199] { for x in stride(from: 0, to: 200, by: 7) { #expect(band.pixel(x, y).a == 0) } }
        #expect((0..<200).contains { band.pixel($0, 55).a > 0 })
    }

    @Test func discEdgesAreAntiAliased() throws {
        let canvas = try Canvas(width: 200, height: 200)
        canvas.fill(.circle(center: Point(100, 100), radius: 70.3), with: .solid(.white))
        #expect(canvas.pixel(100, 100).a == 255)
        #expect(canvas.pixel(5, 5).a == 0)
        // Along a row through the edge, alpha steps through values between 0 and 255.
        let row = (20..<40).map { canvas.pixel($0, 100).a }
        #expect(row.contains { $0 > 0 && $0 < 255 }, "no partial coverage at the edge: \(row)")
        // Around the whole circle, many distinct edge alphas (gd's aliased fill gives only 0 and 255).
        var partial = Set<UInt8>()
        for y in 0..<200 { for x in 0..<200 { let a = canvas.pixel(x, y).a; if a > 0 && a < 255 { partial.insert(a) } } }
        #expect(partial.count > 20)
    }

    @Test func slowGradientsDoNotBand() throws {
        // 20 levels over 1024 pixels: without dithering, flat bands 51 px wide.
        let canvas = try Canvas(width: 1024, height: 8)
        canvas.fill(.roundedRect(x: 0, y: 0, width: 1024, height: 8, radius: 0),
                    with: .linear(start: Point(0, 0), end: Point(1024, 0), stops: [(0, RGBA(40, 40, 40)), (1, RGBA(60, 60, 60))]))
        var means: [Double] = []
        for block in 0..<256 {
            var sum = 0
            for y in 0..<4 { for x in 0..<4 { sum += Int(canvas.pixel(block * 4 + x, y).r) } }
            means.append(Double(sum) / 16)
        }
        let steps = zip(means, means.dropFirst()).map { abs($1 - $0) }
        #expect(steps.max()! <= 0.5, "a visible step of \(steps.max()!) levels")
        #expect(means.first! < 41 && means.last! > 59)
    }

    @Test func softEdgesFadeOverTheirWidth() throws {
        let canvas = try Canvas(width: 200, height: 200)
        canvas.fill(.circle(center: Point(100, 100), radius: 50), with: .solid(.black), softness: 20)
        let alphas = stride(from: 100, to: 200, by: 5).map { Int(canvas.pixel($0, 100).a) }
        #expect(zip(alphas, alphas.dropFirst()).allSatisfy { $0 >= $1 }, "\(alphas)")
        #expect(alphas.filter { $0 > 10 && $0 < 245 }.count >= 5, "\(alphas)")
    }

    @Test func pngRoundTripKeepsPixels() throws {
        let canvas = try Canvas(width: 64, height: 48, background: RGBA(10, 20, 30))
        canvas.fill(.roundedRect(x: 8, y: 8, width: 30, height: 20, radius: 0), with: .solid(RGBA(200, 100, 50)))
        let png = try GDImage(canvas).pngData()
        #expect(try ImageIntake().inspect(png) == ImageIntake.Header(format: .png, width: 64, height: 48))
        let decoded = try GDImage.decodePNG(png)
        #expect(decoded.width == 64 && decoded.height == 48)
        #expect(decoded.pixel(20, 15) == RGBA(200, 100, 50))
        #expect(decoded.pixel(50, 40) == RGBA(10, 20, 30))
    }

    @Test func theZlibEncoderWritesWhatGdReadsBack() throws {
        for background in [RGBA(10, 20, 30), RGBA.clear] {
            let canvas = try Canvas(width: 97, height: 61, background: background)
            canvas.fill(.circle(center: Point(40, 30), radius: 25), with: .radial(
                center: Point(40, 30), radius: 25, stops: [(0, RGBA(255, 200, 0)), (1, RGBA(90, 10, 160, 200))]))
            let png = try PNGEncoder.encode(canvas, level: 3)
            let ihdr = try #require(try PNG.chunks(in: png).first)
            #expect(ihdr.data[ihdr.data.startIndex + 9] == (background == .clear ? 6 : 2), "RGB when opaque, RGBA otherwise")
            let decoded = try GDImage.decodePNG(png)
            for (x, y) in [(40, 30), (20, 30), (5, 5), (96, 60), (62, 30)] {
                let want = canvas.pixel(x, y), got = decoded.pixel(x, y)
                // gd keeps 7 bits of alpha.
                #expect(want.r == got.r && want.g == got.g && want.b == got.b && abs(Int(want.a) - Int(got.a)) <= 2, "\(x),\(y): \(want) vs \(got)")
            }
        }
    }

    @Test func decodeRefusesTruncatedAndCorruptImages() throws {
        let good = try GDImage(try Canvas(width: 32, height: 32, background: .white)).pngData()
        let cut = #expect(throws: BadgeError.self) { _ = try GDImage.decodePNG(good.prefix(good.count - 20)) }
        #expect(cut?.code == .invalidImage)
        #expect(cut?.message.contains("IDAT") == true && cut?.message.contains("the file ends first") == true, "\(String(describing: cut))")
        // Valid chunk CRCs around damaged compressed data: only the decoder can tell.
        var chunks = try PNG.chunks(in: good)
        let idat = chunks.firstIndex { $0.type == "IDAT" }!
        var data = chunks[idat].data
        for i in stride(from: 2, to: data.count - 4, by: 3) { data[data.startIndex + i] ^= 0x5A }
        chunks[idat].data = data
        do {
            _ = try GDImage.decodePNG(PNG.assemble(chunks))
            Issue.record("a PNG with damaged image data must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .invalidImage)
            #expect(error.message.hasPrefix("the PNG's image data is not a valid zlib stream") && error.message.hasSuffix("in IDAT 1)"), "\(error)")
            #expect(error.hint?.contains("damaged") == true, "\(error)")
        }
    }

    @Test func aHeaderClaimingHugeDimensionsIsRefusedBeforeDecoding() throws {
        var chunks = try PNG.chunks(in: TestPNG.solid(width: 8, height: 8, rgb: (1, 2, 3)))
        var ihdr = [UInt8](chunks[0].data)
        ihdr[0...7] = [0, 0, 0x4E, 0x20, 0, 0, 0x4E, 0x20]  // 20000 × 20000
        chunks[0].data = Data(ihdr)
        let bomb = PNG.assemble(chunks)
        do {
            _ = try GDImage.decodePNG(bomb)
            Issue.record("a 20000×20000 header must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .imageTooLarge)
            #expect(error.message.contains("20000×20000"), "\(error)")
        }
    }

    @Test func captionTextIsDrawnInARealFont() throws {
        let font = try Font.caption()
        let box = try font.measure("PROMISE", pixelSize: 40)
        #expect(box.width > 100 && box.height > 20 && box.height < 60)
        let image = try Canvas(width: 300, height: 100, background: .black)
        try image.draw("PROMISE", font: font, pixelSize: 40, color: .white, x: 20, y: 30)
        var lit = 0
        for y in 30..<(30 + box.height) { for x in 20..<(20 + box.width) where image.pixel(x, y).r > 128 { lit += 1 } }
        #expect(lit > box.width * box.height / 8, "too few text pixels: \(lit)")
        #expect(image.pixel(290, 90) == RGBA(0, 0, 0))
    }

    @Test func squaringCoversOrContains() throws {
        let wide = try GDImage(try Canvas(width: 200, height: 100, background: RGBA(255, 0, 0)))
        let covered = try wide.squared(side: 64, contain: false, background: .white)
        #expect(covered.width == 64 && covered.height == 64)
        #expect(covered.pixel(0, 0) == RGBA(255, 0, 0))
        let contained = try wide.squared(side: 64, contain: true, background: RGBA(0, 0, 255))
        #expect(contained.pixel(32, 2) == RGBA(0, 0, 255))
        #expect(contained.pixel(32, 32) == RGBA(255, 0, 0))
    }

    @Test func coloursKnowTheirContrast() {
        #expect(abs(RGBA.contrast(.white, .black) - 21) < 0.01)
        #expect(RGBA(hex: "#336699") == RGBA(0x33, 0x66, 0x99))
        #expect(RGBA(hex: "nope") == nil)
        let hsl = RGBA.hsl(210, 0.5, 0.4).hsl
        #expect(abs(hsl.h - 210) < 1 && abs(hsl.s - 0.5) < 0.02 && abs(hsl.l - 0.4) < 0.01)
    }
}
