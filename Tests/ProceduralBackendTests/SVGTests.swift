import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Testing
@testable import ProceduralBackend

/// The SVG back end: the scene a badge is drawn from, written as SVG and drawn
/// by a renderer badge does not use (librsvg's `rsvg-convert`), is the PNG's
/// picture; and the document holds nothing active.
@Suite(.threadsOfTheirOwn)
struct SVGTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var prompt: String
        var style: BadgeArt.Style
        var size: Int
        var testDescription: String { "\(style.rawValue) \(size) px \"\(prompt)\"" }
    }

    static let cases: [Case] = BadgeArt.Style.allCases.flatMap { style in
        [256, 1024].map { Case(prompt: "Run a marathon", style: style, size: $0) }
    } + [Case(prompt: "学习中文", style: .medal, size: 512), Case(prompt: "اقرأ كل يوم", style: .tile, size: 512),
         Case(prompt: "हर दिन पढ़ें", style: .flat, size: 512),
         Case(prompt: "A minimalist sunset over the sea, deep navy sky, coral and gold light at the horizon", style: .medal, size: 512),
         Case(prompt: "Meditate daily, glowing, grain", style: .flat, size: 512)]

    static func rsvgConvert() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        guard let found = path.split(separator: ":").map({ "\($0)/rsvg-convert" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else {
            throw OCRError("rsvg-convert is not installed; install it: apt-get install librsvg2-bin (or scripts/install-deps.sh --with-tests)")
        }
        return found
    }

    /// The PSNR (dB) of two pictures of one size, each composited on white.
    static func psnr(_ a: GDImage, _ b: GDImage) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var squares = 0.0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let p = a.pixel(x, y), q = b.pixel(x, y)
                let pa = Double(p.a) / 255, qa = Double(q.a) / 255
                for (u, v) in [(p.r, q.r), (p.g, q.g), (p.b, q.b)] {
                    let d = (Double(u) * pa + 255 * (1 - pa)) - (Double(v) * qa + 255 * (1 - qa))
                    squares += d * d
                }
            }
        }
        let mse = squares / Double(a.width * a.height * 3)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    @Test(arguments: cases)
    func theSVGDrawnByLibrsvgIsThePNGsPicture(_ job: Case) throws {
        let rsvg = try Self.rsvgConvert()
        let request = BadgeRequest(prompt: job.prompt, style: job.style.rawValue, size: job.size, seed: 7)
        let drawing = try BadgeArt(request: request, caption: true, compression: 0).draw()
        let svg = SVGDocument.data(drawing.scene, title: job.prompt)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-svg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("badge.svg"), drawn = directory.appendingPathComponent("drawn.png")
        try svg.write(to: file)
        _ = try OCR.run(rsvg, ["--width", "\(job.size)", "--height", "\(job.size)", "--output", drawn.path, file.path])
        let reference = try GDImage.decodePNG(Data(contentsOf: drawn))
        let png = try GDImage.decodePNG(PNGEncoder.encode(drawing.canvas, level: 1))
        let psnr = Self.psnr(reference, png)
        if let keep = ProcessInfo.processInfo.environment["BADGE_SVG_PAIRS"] {
            let name = "\(job.style.rawValue)-\(job.size)-\(abs(job.prompt.hashValue) % 1000)"
            try? svg.write(to: URL(fileURLWithPath: keep).appendingPathComponent(name + ".svg"))
            try? FileManager.default.copyItem(at: drawn, to: URL(fileURLWithPath: keep).appendingPathComponent(name + "-rsvg.png"))
            try? PNGEncoder.encode(drawing.canvas, level: 1).write(to: URL(fileURLWithPath: keep).appendingPathComponent(name + "-badge.png"))
        }
        print("svg \(job.testDescription): \(svg.count) bytes, PSNR \(String(format: "%.1f", psnr)) dB")
        #expect(psnr >= 30, "PSNR \(psnr) dB")
    }
}
