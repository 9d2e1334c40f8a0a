import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
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
        var seed: UInt64 = 7
        var testDescription: String { "\(style.rawValue) \(size) px seed \(seed) \"\(prompt)\"" }
    }

    static let cases: [Case] = BadgeArt.Style.allCases.flatMap { style in
        [256, 1024].map { Case(prompt: "Run a marathon", style: style, size: $0) }
    } + [Case(prompt: "学习中文", style: .medal, size: 512), Case(prompt: "اقرأ كل يوم", style: .tile, size: 512),
         Case(prompt: "हर दिन पढ़ें", style: .flat, size: 512),
         Case(prompt: "A minimalist sunset over the sea, deep navy sky, coral and gold light at the horizon", style: .medal, size: 512),
         Case(prompt: "Meditate daily, glowing, grain", style: .flat, size: 512)]
        // An icon (IconMotifTests): glyph outlines in the SVG, the glyph's coverage in the PNG.
        + [BadgeArt.Style.medal, .sketch, .flat].map { Case(prompt: "Play tennis every weekend", style: $0, size: 512) }
        // Every backdrop (rays, rings, dots, stripes) over the seeds of the gallery's first promise.
        + BadgeArt.Style.allCases.flatMap { style in (1...3).map { Case(prompt: "A pair of dumbbells", style: style, size: 256, seed: $0) } }

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
        let request = BadgeRequest(prompt: job.prompt, style: job.style.rawValue, size: job.size, seed: job.seed)
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
            let name = "\(job.style.rawValue)-\(job.size)-\(job.seed)-\(job.prompt.unicodeScalars.reduce(0) { ($0 &* 31 &+ Int($1.value)) % 1000 })"
            try? svg.write(to: URL(fileURLWithPath: keep).appendingPathComponent(name + ".svg"))
            try? FileManager.default.copyItem(at: drawn, to: URL(fileURLWithPath: keep).appendingPathComponent(name + "-rsvg.png"))
            try? PNGEncoder.encode(drawing.canvas, level: 1).write(to: URL(fileURLWithPath: keep).appendingPathComponent(name + "-badge.png"))
        }
        print("svg \(job.testDescription): \(svg.count) bytes, PSNR \(String(format: "%.1f", psnr)) dB")
        #expect(psnr >= 30, "PSNR \(psnr) dB")
    }

    /// The caption is read back off librsvg's picture of the SVG: outlines, not a font, carry it.
    @Test(arguments: BadgeArt.Style.allCases)
    func tesseractReadsTheCaptionOffTheSVG(style: BadgeArt.Style) throws {
        let rsvg = try Self.rsvgConvert()
        try OCR.requireTesseract(languages: ["eng"])
        let request = BadgeRequest(prompt: "Run a marathon", style: style.rawValue, size: 1024, seed: 7)
        let svg = SVGDocument.data(try BadgeArt(request: request, caption: true, compression: 0).record().scene)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-svg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("badge.svg"), drawn = directory.appendingPathComponent("drawn.png")
        try svg.write(to: file)
        _ = try OCR.run(rsvg, ["--background-color", "white", "--output", drawn.path, file.path])
        let read = try OCR.run(OCR.tesseract()!, [drawn.path, "stdout", "-l", "eng"])
        let words = OCR.latinWords(read)
        #expect(words.contains("RUN") && words.contains("MARATHON"), "tesseract read \(read)")
    }

    /// Everything in an element's text and attributes, and every element name and attribute name.
    final class Collected: NSObject, XMLParserDelegate {
        var elements: [String] = []
        var attributes: [(element: String, name: String, value: String)] = []
        var text: [String: String] = [:]
        private var current = ""
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            elements.append(name)
            for (key, value) in attributes { self.attributes.append((name, key, value)) }
            current = name
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) { text[current, default: ""] += string }
    }

    static let hostilePromises = [
        "</svg><script>alert(1)</script>", "Read ]]> more <![CDATA[ x ]]>", "Say \"hi\" & 'bye' <b>loud</b>",
        "\" onload=\"alert(1)", "Walk\u{0}\u{1b}[31m every\u{7} day", "<foreignObject><iframe src=//x/></foreignObject>",
    ]

    /// The SVG is well-formed XML with nothing active in it, and a promise
    /// with markup, quotes or control characters stays text: in the title and
    /// in the metadata, as the promise's printable characters.
    @Test(arguments: hostilePromises)
    func aPromiseWithMarkupStaysText(promise: String) throws {
        let request = BadgeRequest(prompt: promise, size: 256, seed: 1)
        let scene = try BadgeArt(request: request, caption: true, compression: 0).record().scene
        let svg = SVGDocument.data(scene, title: promise, metadata: [("prompt", promise), ("x-caption-text", promise)])
        try SVGCheck.verify(svg, backend: "procedural")
        let parser = XMLParser(data: svg)
        let collected = Collected()
        parser.delegate = collected
        #expect(parser.parse(), "not well-formed: \(String(describing: parser.parserError))")
        let forbidden: Set<String> = ["script", "foreignObject", "text", "tspan", "iframe", "image", "style", "a"]
        #expect(collected.elements.filter(forbidden.contains).isEmpty, "\(collected.elements)")
        #expect(collected.elements.first == "svg")
        for attribute in collected.attributes {
            #expect(!attribute.name.lowercased().hasPrefix("on"), "\(attribute)")
            if attribute.name.hasSuffix("href") { #expect(attribute.value.hasPrefix("#"), "\(attribute)") }
            if attribute.value.contains("url(") { #expect(attribute.value.hasPrefix("url(#"), "\(attribute)") }
        }
        let printable = String(String.UnicodeScalarView(promise.unicodeScalars.filter { $0.value >= 0x20 && !(0x7F...0x9F).contains($0.value) }))
        #expect(collected.text["prompt"] == printable, "\(collected.text)")
        #expect(collected.text["title"] == printable)
    }

    /// A backend's SVG is checked before it is written: each kind of active
    /// or outside content is refused, by name, at its byte.
    @Test(arguments: [
        ("<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>\n", "holds a <script> element (at byte offset 40)"),
        ("<svg xmlns=\"http://www.w3.org/2000/svg\"><foreignObject/></svg>\n", "holds a <foreignobject> element"),
        ("<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"></svg>\n", "has an event attribute (onload)"),
        ("<svg xmlns=\"http://www.w3.org/2000/svg\"><use href=\"https://x.example/a.svg#g\"/></svg>\n", "refers to something outside it"),
        ("<svg xmlns=\"http://www.w3.org/2000/svg\"><rect fill=\"url(https://x.example/p)\"/></svg>\n", "refers to something outside it"),
        ("<svg xmlns=\"http://www.w3.org/2000/svg\"><rect style=\"fill:red\"/></svg>\n", "has a style attribute"),
        ("<svg xmlns=\"http://www.w3.org/2000/svg\"><style>@import url(x.css);</style></svg>\n", "holds a <style> element"),
        ("<!DOCTYPE svg [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><svg/>", "does not begin with its <svg> element"),
        ("<svg xmlns=\"http://www.w3.org/2000/svg\"><!-- x --></svg>\n", "holds markup that is not an element"),
        ("<svg xmlns=\"http://www.w3.org/2000/svg\"><g></svg>\n", "is not one whole <svg> element"),
        ("<svg xmlns=\"http://www.w3.org/2000/svg\"></svg><svg></svg>\n", "holds more than one root element"),
    ])
    func aBackendsActiveSVGIsRefused(document: String, reason: String) {
        #expect {
            try SVGCheck.verify(Data(document.utf8), backend: "plugin")
        } throws: { error in
            guard let error = error as? BadgeError else { return false }
            return error.code == .invalidImage && error.message.contains(reason)
        }
    }

    /// A 1024 px SVG badge stays small whatever its layout: under 32 KB for
    /// every style, promise and seed here (the PNG is 200-470 KB).
    @Test(arguments: BadgeArt.Style.allCases)
    func aLargeSVGBadgeStaysSmall(style: BadgeArt.Style) throws {
        var sizes: [Int] = []
        for prompt in ["A pair of dumbbells", "Run a marathon", "Learn Spanish, pastel colours, grain", "学习中文"] {
            for seed in UInt64(1)...6 {
                let request = BadgeRequest(prompt: prompt, style: style.rawValue, size: 1024, seed: seed)
                let svg = SVGDocument.data(try BadgeArt(request: request, caption: true, compression: 0).record().scene, title: prompt)
                #expect(svg.count < 32 * 1024, "\(prompt) seed \(seed): \(svg.count) bytes")
                sizes.append(svg.count)
            }
        }
        sizes.sort()
        print("svg \(style.rawValue) 1024 px: median \(sizes[sizes.count / 2]) bytes, largest \(sizes.last ?? 0)")
    }
}
