import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Testing
@testable import ProceduralBackend

/// Motifs read in every language the captions support and in five more;
/// the neutral fallback emblem; sketch and flat as styles of their own.
@Suite(.threadsOfTheirOwn)
struct StylesAndLanguagesTests {
    let generator = ProceduralGenerator()

    private func draw(_ prompt: String, style: String? = nil, seed: UInt64 = 1, size: Int = 256, caption: Bool = true) throws -> BadgeArt.Drawing {
        try ImageThreads.$limit.withValue(1) { try BadgeArt(request: BadgeRequest(prompt: prompt, style: style, size: size, seed: seed), caption: caption, compression: 0).draw() }
    }

    private func image(_ drawing: BadgeArt.Drawing) throws -> GDImage {
        try GDImage.decodePNG(try PNGEncoder.encode(drawing.canvas, level: 1, filter: BadgeArt.filter))
    }

    // MARK: motifs in every language

    /// Twenty promises in ten languages, each with the motif its English
    /// counterpart gets: recorded as `motif`, and drawn: the motif's ink, in
    /// its frame, covers much the same pixels as the English badge's.
    static let promises: [(prompt: String, english: String, motif: Motif)] = [
        ("学习中文", "Learn Chinese", .language), ("每天跑步", "Run every day", .runner),
        ("毎日本を読む", "Read a book every day", .book), ("毎晩ヨガをする", "Do yoga every evening", .yoga),
        ("매일 수영하기", "Swim every day", .swimmer), ("일기 쓰기", "Keep a journal", .pencil),
        ("Бегать каждое утро", "Run every morning", .runner), ("Читать по книге в месяц", "Read a book a month", .book),
        ("Διαβάζω κάθε μέρα", "Read every day", .book), ("Κολυμπάω κάθε Σάββατο", "Swim every Saturday", .swimmer),
        ("اقرأ كل يوم", "Read every day", .book), ("أتعلم الطبخ", "Learn to cook", .pot),
        ("לקרוא ספר כל חודש", "Read a book every month", .book), ("לרוץ כל בוקר", "Run every morning", .runner),
        ("रोज़ योग करो", "Do yoga daily", .yoga), ("हर दिन पानी पियो", "Drink water every day", .drop),
        ("Aprender a nadar este verano", "Learn to swim this summer", .swimmer), ("Ahorrar para un viaje", "Save for a trip", .piggyBank),
        ("Lire un livre par mois", "Read a book a month", .book), ("Jeden Morgen joggen gehen", "Go jogging every morning", .runner),
    ]

    @Test func motifsAreReadInEveryLanguage() throws {
        #expect(Self.promises.count >= 20)
        let scripts = Set(Self.promises.map { $0.prompt.unicodeScalars.first!.properties.name?.split(separator: " ").first ?? "" })
        #expect(scripts.count >= 8, "\(scripts)")
        var wrong: [String] = []
        for (prompt, english, motif) in Self.promises {
            #expect(PromptReading(english).scene.0 == motif, "the English \"\(english)\"")
            let recorded = try draw(prompt, size: 128).notes["motif"] ?? ""
            if !recorded.hasPrefix(motif.rawValue + " <- ") { wrong.append("\(prompt): \(recorded), expected \(motif.rawValue)") }
        }
        #expect(wrong.isEmpty, "\(wrong.joined(separator: "\n"))")
    }

    /// The motif's ink within its frame (the caption left off), as a set of pixels.
    private func motifInk(_ prompt: String, seed: UInt64 = 1) throws -> Set<Int> {
        let drawing = try draw(prompt, style: "flat", seed: seed, caption: false)
        let pixels = try image(drawing), ink = drawing.ink, side = pixels.width
        var found = Set<Int>()
        for y in 0..<side {
            for x in 0..<side where hypot(Double(x) - Double(side) / 2, Double(y) - Double(side) / 2) < Double(side) * 0.27 {
                let p = pixels.pixel(x, y)
                if abs(Int(p.r) - Int(ink.r)) < 40 && abs(Int(p.g) - Int(ink.g)) < 40 && abs(Int(p.b) - Int(ink.b)) < 40 { found.insert(y * side + x) }
            }
        }
        return found
    }

    @Test func theMotifDrawnIsTheEnglishPromisesMotif() throws {
        var failures: [String] = []
        var figures: [String] = []
        for (prompt, english, _) in Self.promises {
            // A seed that gives the same arrangement, so the motif stands at the same size (the seed still turns it a little).
            let arrangement = Layout(prompt: english, seed: 1).arrangement
            let seed = try #require((UInt64(1)...64).first { Layout(prompt: prompt, seed: $0).arrangement == arrangement })
            let a = try motifInk(prompt, seed: seed), b = try motifInk(english)
            let overlap = Double(a.intersection(b).count) / Double(max(1, a.union(b).count))
            figures.append(String(format: "%.2f", overlap))
            // Measured 0.59-1.0 for one motif (the seed turns each a little); a book and a runner 0.20.
            if overlap < 0.5 { failures.append("\(prompt) / \(english): \(overlap)") }
        }
        // Against another motif, for scale.
        let other = Double(try motifInk("Read every day").intersection(try motifInk("Run every day")).count)
            / Double(max(1, try motifInk("Read every day").union(try motifInk("Run every day")).count))
        print("motif ink overlap with the English badge: \(figures.joined(separator: " ")); book against runner: \(String(format: "%.2f", other))")
        #expect(other < 0.4)
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    /// With no word it knows, the emblem is a neutral shape: never a star (a
    /// six-pointed one was the Arabic badge's), in any language.
    @Test func theFallbackEmblemIsNeutral() throws {
        #expect(PromptReading("Xyzzy plugh").scene.0 == .abstract)
        for seed in UInt64(1)...6 {
            let canvas = try Canvas(width: 200, height: 200, background: RGBA(20, 40, 90))
            let scene = SceneRecorder(width: 200, height: 200)
            var painter = MotifPainter(scene: scene, frame: Frame(center: Point(100, 100), radius: 80), ink: .white, cut: RGBA(20, 40, 90),
                                       random: SplitMix64(seed: seed))
            painter.draw(.abstract)
            canvas.draw(scene.scene)
            // A star's points alternate far and near around its centre; this emblem's disc is
            // round: along 72 directions its edge lies at one distance from the centre.
            var radii: [Double] = []
            for k in 0..<72 {
                let a = Double(k) / 72 * 2 * .pi
                var r = 0.0
                // Out from just beyond the cut diamond, to where the disc ends.
                for step in stride(from: 0.5, to: 0.85, by: 0.005) {
                    let p = canvas.pixel(Int(100 + cos(a) * step * 80), Int(100 + sin(a) * step * 80))
                    if p.r > 200 { r = step } else if r > 0 { break }
                }
                radii.append(r)
            }
            #expect(radii.max()! - radii.min()! < 0.04, "seed \(seed): the disc's edge lies from \(radii.min()!) to \(radii.max()!)")
        }
    }

    // MARK: sketch

    @Test func fourSeedsGiveFourSketchLayouts() throws {
        let measure = ArtEngine4Tests()
        var maps: [[Bool]] = []
        var layouts: [String] = []
        for seed in UInt64(1)...4 {
            let drawing = try draw("Meditate daily", style: "sketch", seed: seed)
            maps.append(measure.edges(try image(drawing)))
            layouts.append(drawing.notes["layout"] ?? "")
        }
        #expect(Set(layouts).count == 4, "\(layouts)")
        var least = 1.0
        for i in 0..<4 { for j in (i + 1)..<4 { least = min(least, measure.difference(maps[i], maps[j])) } }
        // The same bound as the other styles' layouts (ArtEngine4Tests.fourSeedsGiveFourLayouts).
        #expect(least > 0.07, "\(least)")
    }

    @Test(arguments: [("Read every day, sketch style in navy and gold", "#000080", "#FFD700"),
                      ("Walk the dog, sketch in teal and cream", "#008080", "#FFF6DC"),
                      ("Write a poem, sketch in burgundy", "#800020", nil)])
    func aSketchIsInkedAndPapered(prompt: String, ink: String, paper: String?) throws {
        let drawing = try draw(prompt)
        #expect(drawing.notes["style"] == "sketch (from the prompt)")
        let pixels = try image(drawing), side = Double(pixels.width)
        func median(_ inside: (Double) -> Bool) -> LabColour {
            var labs: [LabColour] = []
            for y in 0..<pixels.width {
                for x in 0..<pixels.width where inside(hypot(Double(x) + 0.5 - side / 2, Double(y) + 0.5 - side / 2) / side) {
                    let p = pixels.pixel(x, y)
                    labs.append(LabColour(RGBA(p.r, p.g, p.b)))
                }
            }
            func mid(_ k: KeyPath<LabColour, Double>) -> Double { labs.map { $0[keyPath: k] }.sorted()[labs.count / 2] }
            return LabColour(l: mid(\.l), a: mid(\.a), b: mid(\.b))
        }
        // The rim's outer ring is solid ink; the face between the motif and the rim is paper.
        let inked = median { $0 > 0.443 && $0 < 0.452 }, papered = median { $0 > 0.3 && $0 < 0.37 }
        #expect(deltaE2000(inked, LabColour(hex: ink)) <= 12, "ink \(inked)")
        if let paper { #expect(deltaE2000(papered, LabColour(hex: paper)) <= 12, "paper \(papered)") }
    }

    /// The motif's details (cut out of it in the other styles) are inner lines of the sketch.
    @Test(arguments: [Motif.book, .laptop, .meditation, .alarmClock])
    func sketchMotifsKeepTheirInnerLines(motif: Motif) throws {
        func inked(holes: Bool) throws -> Int {
            let mask = SceneRecorder(width: 256, height: 256), canvas = try Canvas(width: 256, height: 256)
            var painter = MotifPainter(scene: mask, frame: Frame(center: Point(128, 128), radius: 90), ink: .black, cut: holes ? .white : .black,
                                       random: SplitMix64(seed: 1))
            painter.draw(motif)
            // White cut-outs are holes of the mask; black ones leave it whole.
            canvas.draw(Scene(width: 256, height: 256, operations: [.outline(mask: mask.scene, radius: 2, color: .black)]))
            var count = 0
            for y in 0..<256 { for x in 0..<256 where canvas.pixel(x, y).a > 128 { count += 1 } }
            return count
        }
        let lines = try inked(holes: true), outline = try inked(holes: false)
        #expect(Double(lines) > Double(outline) * 1.25, "\(motif): \(lines) inked pixels with its inner lines, \(outline) of its outline alone")
    }

    // MARK: flat

    static let galleryPromises = [
        "A pair of dumbbells", "A path through a forest", "Run a marathon", "Read 20 books", "Drink more water", "Meditate daily",
        "Sleep before midnight", "Learn the guitar", "Save money", "Travel the world", "Eat more greens", "Climb a mountain in midnight blue",
        "A minimalist sunset over the sea, deep navy sky, coral and gold light at the horizon, edge-to-edge, no borders",
        "Learn Spanish, pastel colours", "Call grandmother every Sunday", "学习中文", "اقرأ كل يوم",
    ]

    /// Flat is a look of its own: against the medal of the same promise and
    /// seed, at least a quarter of the pixels differ visibly.
    @Test func flatAndMedalDifferInAQuarterOfTheirPixels() throws {
        var least = 1.0, worst = ""
        for prompt in Self.galleryPromises {
            for seed in UInt64(1)...4 {
                let flat = try image(draw(prompt, style: "flat", seed: seed, size: 128))
                let medal = try image(draw(prompt, style: "medal", seed: seed, size: 128))
                var differing = 0
                for y in 0..<128 {
                    for x in 0..<128 {
                        let a = flat.pixel(x, y), b = medal.pixel(x, y)
                        let d = max(abs(Int(a.r) - Int(b.r)), abs(Int(a.g) - Int(b.g)), abs(Int(a.b) - Int(b.b)), abs(Int(a.a) - Int(b.a)))
                        if d > 24 { differing += 1 }
                    }
                }
                let share = Double(differing) / Double(128 * 128)
                if share < least { (least, worst) = (share, "\(prompt), seed \(seed)") }
            }
        }
        print("flat against medal: at least \(String(format: "%.2f", least)) of the pixels differ (\(worst))")
        #expect(least >= 0.25, "\(worst): \(least)")
    }

    /// Flat draws no metal: no gradient anywhere in its rim.
    @Test func flatHasNoMetalRimNorBevel() throws {
        let pixels = try image(draw("Read 20 books", style: "flat", seed: 2))
        // Around the rim's middle (0.42 of the side from the centre), one colour all the way round.
        var colours = Set<RGBA>()
        for k in 0..<180 {
            let a = Double(k) / 180 * 2 * .pi
            colours.insert(pixels.pixel(Int(128 + cos(a) * 256 * 0.41), Int(128 + sin(a) * 256 * 0.41)))
        }
        #expect(colours.count <= 3, "\(colours.count) colours around a flat rim")
    }
}
