import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Testing
@testable import ProceduralBackend

/// The art engine, measured on the rendered pixels: colours named in the prompt,
/// composition words, the horizon scene, the motifs and the seed's layouts.
@Suite(.threadsOfTheirOwn)
struct ArtEngine4Tests {
    let generator = ProceduralGenerator()

    private func render(_ prompt: String, seed: UInt64 = 1, style: String? = nil, size: Int = 256) async throws -> (GeneratedImage, GDImage) {
        let (image, data, _) = try await GeneratorConformance.generateOnce(
            generator, BadgeRequest(prompt: prompt, style: style, size: size, seed: seed))
        return (image, try GDImage.decodePNG(data))
    }

    /// The face: the middle of a round badge (inside the accent ring), the whole of a tile.
    private func isFace(_ image: GDImage, round: Bool) -> (Int, Int) -> Bool {
        let c = Double(image.width) / 2, limit = Double(image.width) * 0.33
        return { x, y in !round || hypot(Double(x) + 0.5 - c, Double(y) + 0.5 - c) < limit }
    }

    /// The WCAG contrast between the face (its median luminance) and the ink
    /// (the 1 % of face pixels furthest from it in luminance).
    private func inkContrast(_ image: GDImage, round: Bool) -> Double {
        let include = isFace(image, round: round)
        var values: [Double] = []
        for y in 0..<image.height { for x in 0..<image.width where include(x, y) { values.append(image.pixel(x, y).luminance) } }
        values.sort()
        let face = values[values.count / 2]
        let darkest = values[values.count / 100], lightest = values[values.count - 1 - values.count / 100]
        return max((face + 0.05) / (darkest + 0.05), (lightest + 0.05) / (face + 0.05))
    }

    // MARK: the colour science the tests measure with

    /// Sharma, Wu and Dalal (2005), "The CIEDE2000 color-difference formula", table 1: all 34 pairs.
    @Test func ciede2000MatchesThePublishedTestData() {
        let pairs: [(Double, Double, Double, Double, Double, Double, Double)] = [
            (50, 2.6772, -79.7751, 50, 0, -82.7485, 2.0425), (50, 3.1571, -77.2803, 50, 0, -82.7485, 2.8615),
            (50, 2.8361, -74.0200, 50, 0, -82.7485, 3.4412), (50, -1.3802, -84.2814, 50, 0, -82.7485, 1.0000),
            (50, -1.1848, -84.8006, 50, 0, -82.7485, 1.0000), (50, -0.9009, -85.5211, 50, 0, -82.7485, 1.0000),
            (50, 0, 0, 50, -1, 2, 2.3669), (50, -1, 2, 50, 0, 0, 2.3669),
            (50, 2.49, -0.001, 50, -2.49, 0.0009, 7.1792), (50, 2.49, -0.001, 50, -2.49, 0.0010, 7.1792),
            (50, 2.49, -0.001, 50, -2.49, 0.0011, 7.2195), (50, 2.49, -0.001, 50, -2.49, 0.0012, 7.2195),
            (50, -0.001, 2.49, 50, 0.0009, -2.49, 4.8045), (50, -0.001, 2.49, 50, 0.0010, -2.49, 4.8045),
            (50, -0.001, 2.49, 50, 0.0011, -2.49, 4.7461), (50, 2.5, 0, 50, 0, -2.5, 4.3065),
            (50, 2.5, 0, 73, 25, -18, 27.1492), (50, 2.5, 0, 61, -5, 29, 22.8977),
            (50, 2.5, 0, 56, -27, -3, 31.9030), (50, 2.5, 0, 58, 24, 15, 19.4535),
            (50, 2.5, 0, 50, 3.1736, 0.5854, 1.0000), (50, 2.5, 0, 50, 3.2972, 0, 1.0000),
            (50, 2.5, 0, 50, 1.8634, 0.5757, 1.0000), (50, 2.5, 0, 50, 3.2592, 0.3350, 1.0000),
            (60.2574, -34.0099, 36.2677, 60.4626, -34.1751, 39.4387, 1.2644),
            (63.0109, -31.0961, -5.8663, 62.8187, -29.7946, -4.0864, 1.2630),
            (61.2901, 3.7196, -5.3901, 61.4292, 2.2480, -4.9620, 1.8731),
            (35.0831, -44.1164, 3.7933, 35.0232, -40.0716, 1.5901, 1.8645),
            (22.7233, 20.0904, -46.6940, 23.0331, 14.9730, -42.5619, 2.0373),
            (36.4612, 47.8580, 18.3852, 36.2715, 50.5065, 21.2231, 1.4146),
            (90.8027, -2.0831, 1.4410, 91.1528, -1.6435, 0.0447, 1.4441),
            (90.9257, -0.5406, -0.9208, 88.6381, -0.8985, -0.7239, 1.5381),
            (6.7747, -0.2908, -2.4247, 5.8714, -0.0985, -2.2286, 0.6377),
            (2.0776, 0.0795, -1.1350, 0.9033, -0.0636, -0.5514, 0.9082),
        ]
        for (l1, a1, b1, l2, a2, b2, expected) in pairs {
            let d = deltaE2000(LabColour(l: l1, a: a1, b: b1), LabColour(l: l2, a: a2, b: b2))
            #expect(abs(d - expected) < 0.0001, "(\(l1), \(a1), \(b1)) – (\(l2), \(a2), \(b2)): \(d), not \(expected)")
        }
        // And sRGB to CIELAB: white, black and pure red (D65).
        #expect(abs(LabColour(.white).l - 100) < 0.01 && abs(LabColour(.black).l) < 0.01)
        let red = LabColour(RGBA(255, 0, 0))
        #expect(abs(red.l - 53.24) < 0.05 && abs(red.a - 80.09) < 0.1 && abs(red.b - 67.20) < 0.1, "\(red)")
    }

    // MARK: colours do what they say

    /// CSS names and descriptive words, each against its published colour.
    @Test(arguments: [
        ("Read more books in coral", "#FF7F50"), ("Drink more water, teal", "#008080"), ("A crimson heart", "#DC143C"),
        ("Cycle to work in amber", "#FFBF00"), ("Learn to cook, apricot", "#FBCEB1"), ("Save money, navy", "#000080"),
        ("Walk every day in dark green", "#006400"), ("Swim in sea green", "#2E8B57"), ("Go to bed early, midnight blue", "#191970"),
        ("Plant a tree, gold", "#FFD700"), ("Write a novel in lavenderblush", "#FFF0F5"),
    ])
    func aNamedColourSetsTheFace(prompt: String, hex: String) async throws {
        for (style, seed) in [("medal", UInt64(1)), ("flat", 2), ("tile", 3)] {
            let (_, image) = try await render(prompt, seed: seed, style: style)
            let face = medianLab(image, where: isFace(image, round: style != "tile"))
            let d = deltaE2000(face, LabColour(hex: hex))
            #expect(d <= 12, "\(prompt), \(style): the face is ΔE2000 \(d) from \(hex)")
            #expect(inkContrast(image, round: style != "tile") >= 4.5, "\(prompt), \(style): the ink does not read")
        }
    }

    /// The example: a dark green face before; light tints with ink that reads now.
    @Test(arguments: ["Eat more vegetables, pastel colours", "Read 20 books, pastel blue", "Meditate daily, calm, pastel"])
    func pastelGivesLightTintsWithInkThatReads(prompt: String) async throws {
        for (style, seed) in [("medal", UInt64(1)), ("tile", 2), ("flat", 3), ("medal", 4)] {
            let (_, image) = try await render(prompt, seed: seed, style: style)
            let face = medianLab(image, where: isFace(image, round: style != "tile"))
            #expect(face.l >= 75, "\(prompt), \(style): L* \(face.l)")
            #expect(inkContrast(image, round: style != "tile") >= 4.5, "\(prompt), \(style)")
            if prompt.contains("vegetables") { #expect((90...200).contains(face.hue), "vegetables are green: hue \(face.hue)") }
            if prompt.contains("blue") {
                let blue = LabColour(hex: "#0000FF").hue
                #expect(abs(face.hue - blue) < 25, "a pastel blue: hue \(face.hue), blue's \(blue)")
            }
        }
    }

    /// Two or more colours: the face, the ring inside the rim, and the rim, in the order named.
    @Test func coloursInOrderAreFaceAccentAndRim() async throws {
        for seed in UInt64(1)...3 {
            let (_, image) = try await render("Run a marathon, navy, coral and gold", seed: seed, size: 512)
            let s = Double(image.width), c = s / 2
            func radius(_ x: Int, _ y: Int) -> Double { hypot(Double(x) + 0.5 - c, Double(y) + 0.5 - c) / s }
            let face = medianLab(image) { radius($0, $1) < 0.3 }
            let accent = medianLab(image) { (0.3745...0.3775).contains(radius($0, $1)) }
            let rim = medianLab(image) { (0.395...0.445).contains(radius($0, $1)) }
            #expect(deltaE2000(face, LabColour(hex: "#000080")) <= 12, "seed \(seed): face \(face)")
            #expect(deltaE2000(accent, LabColour(hex: "#FF7F50")) <= 12, "seed \(seed): accent \(accent)")
            #expect(deltaE2000(rim, LabColour(hex: "#FFD700")) <= 12, "seed \(seed): rim \(rim)")
        }
    }

    /// The other example: it gave a teal medal with a rim and a border.
    @Test func theLongPromptIsADarkEdgeToEdgeTile() async throws {
        let prompt = "Meditate every morning, deep midnight black background, soft amber and golden apricot light, calm, edge-to-edge, no borders"
        let (image, pixels) = try await render(prompt, size: 256)
        #expect(image.extra["style"] == "tile (from the prompt)")
        for (x, y) in [(0, 0), (255, 0), (0, 255), (255, 255)] { #expect(pixels.pixel(x, y).a == 255) }
        let face = medianLab(pixels) { _, _ in true }
        #expect(deltaE2000(face, LabColour(hex: "#000000")) <= 12, "face \(face)")
        #expect(deltaE2000(face, LabColour(hex: "#10152E")) <= 12, "face \(face)")
        #expect(inkContrast(pixels, round: false) >= 4.5)
    }

    @Test func engine4PalettesAlwaysLetTheInkRead() {
        for seed in 0..<200 {
            var random = SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9)
            for prompt in ["Run", "Run, pastel", "Run in white", "Run in yellow", "Run in coral", "Run, dark mood", "Run in gray, pastel"] {
                let reading = PromptReading(prompt)
                let palette = Palette.make(look: reading.look, colorWords: reading.colorWords, motif: .abstract, random: &random)
                #expect(RGBA.contrast(palette.ink, palette.faceLight) >= 4.5 && RGBA.contrast(palette.ink, palette.faceDark) >= 4.5,
                        "\(prompt), seed \(seed): \(palette.name)")
            }
        }
    }

    @Test func colourWordsAreReadInOrderAndTogether() {
        let look = PromptReading("deep midnight black, amber and golden apricot glow, navy blue, sea green").look
        #expect(look.colours.map(\.words) == [["deep", "midnight", "black"], ["amber"], ["golden", "apricot"], ["navy", "blue"], ["sea", "green"]])
        // A shade before its basic colour is the shade: "navy blue" is navy.
        #expect(look.colours[3].color == RGBA(hex: "#000080"))
        #expect(PromptReading("Run, pastel colours").look.pastel)
    }

    // MARK: composition words do what they say

    @Test(arguments: ["Read more, edge-to-edge", "Read more, full bleed", "Read more, full square", "Read more, no borders",
                      "Read more, no border", "A minimalist tree, no rounded corners"])
    func compositionWordsChooseTheTile(prompt: String) async throws {
        #expect(PromptReading(prompt).style == .tile)
        let (image, pixels) = try await render(prompt, size: 128)
        #expect(image.extra["style"] == "tile (from the prompt)")
        #expect(pixels.pixel(0, 0).a == 255)
        // --style given outright wins.
        let (_, medal) = try await render(prompt, style: "medal", size: 128)
        #expect(medal.pixel(0, 0).a == 0)
    }

    @Test func theSunsetPromptIsAFullBleedHorizonScene() async throws {
        let prompt = "A minimalist sunset over the sea, deep navy sky, coral and gold light at the horizon, edge-to-edge, no borders"
        for seed in UInt64(1)...3 {
            let (image, pixels) = try await render(prompt, seed: seed, size: 512)
            #expect(image.extra["style"] == "tile (from the prompt)")
            #expect(image.extra["scene"] == "sunset horizon <- sunset")
            let s = pixels.width
            func lab(_ x: Int, _ y: Int) -> LabColour { LabColour(pixels.pixel(x, y)) }
            // Full bleed: every corner is the scene, opaque: the navy sky above, the dark sea below.
            for (x, y) in [(0, 0), (s - 1, 0), (0, s - 1), (s - 1, s - 1)] { #expect(pixels.pixel(x, y).a == 255) }
            for x in [0, s - 1] {
                #expect(deltaE2000(lab(x, 0), LabColour(hex: "#000080")) <= 15, "top corner \(lab(x, 0))")
                #expect(lab(x, s - 1).l < 20 && lab(x, s - 1).b < -5, "bottom corner: the dark sea, \(lab(x, s - 1))")
            }
            // The horizon: where the edge column falls from the glow to the sea.
            var column: [Double] = []
            for y in 0..<s {
                var sum = 0.0
                for x in 8..<12 { sum += lab(x, y).l }
                column.append(sum / 4)
            }
            func drop(_ y: Int) -> Double { column[y - 1] - column[y + 1] }
            let horizon = (1..<(s - 1)).max { drop($0) < drop($1) }!
            #expect((Double(s) * 0.5...Double(s) * 0.7).contains(Double(horizon)), "horizon at row \(horizon)")
            // The sky brightens from the top to the horizon, band by band.
            let bands: [Double] = stride(from: 0, to: horizon - 8, by: 8).map { (y: Int) -> Double in column[y..<(y + 8)].reduce(0, +) / 8 }
            for k in 1..<bands.count { #expect(bands[k] >= bands[k - 1] - 1, "the sky darkens at row \(k * 8)") }
            #expect(bands.last! > bands.first! + 40)
            // The glow is brightest near the horizon line.
            var middle: [Double] = []
            for y in 0..<horizon {
                var sum = 0.0
                for x in stride(from: s * 3 / 10, to: s * 7 / 10, by: 4) { sum += lab(x, y).l }
                middle.append(sum)
            }
            let brightest = middle.indices.max { middle[$0] < middle[$1] }!
            #expect(horizon - brightest < s / 16, "brightest at row \(brightest), the horizon at \(horizon)")
            // And the ground is dark: below the horizon, the sea's edge column is darker than all of the lit sky.
            #expect(column[(horizon + 8)...].allSatisfy { $0 < column[horizon - 4] - 30 })
        }
    }

    @Test(arguments: ["Run at sunrise", "Watch the sunset", "Walk at dawn", "A walk at dusk", "Stargaze under the night sky", "Paint the horizon"])
    func horizonWordsGiveAHorizonScene(prompt: String) async throws {
        #expect(PromptReading(prompt).look.horizon != nil)
        let (image, pixels) = try await render(prompt, size: 128)
        #expect(image.extra["scene"]?.contains("horizon") == true, "\(image.extra)")
        // Round, the scene stays inside the rim: beyond the medal and its shadow, nothing is drawn.
        for y in 0..<128 {
            for x in 0..<128 where hypot(Double(x) + 0.5 - 64, Double(y) + 0.5 - 64) > 64 {
                #expect(pixels.pixel(x, y).a == 0, "(\(x), \(y)) is drawn")
            }
        }
    }

    // MARK: motifs

    @Test func thereAreAtLeast48DrawnMotifsEachChosenByWords() {
        #expect(Motif.allCases.filter { $0 != .abstract }.count >= 48)
        let chosen = Set(PromptReading.lexicon.values).union(PromptReading.lexicon4.values)
        #expect(chosen == Set(Motif.allCases).subtracting([.abstract]), "every motif has words that choose it")
    }

    @Test(arguments: [
        ("Learn Spanish", Motif.language), ("Practise Japanese every day", .language), ("Travel more", .plane), ("Fly to Lisbon", .plane),
        ("Plan a trip", .suitcase), ("Take a vacation", .suitcase), ("Sleep eight hours", .bed), ("Go to bed before midnight", .bed),
        ("Call my grandmother every Sunday", .phone), ("Save money for a trip around the world", .piggyBank),
        ("Cook dinner at home", .pot), ("Start a vegetable garden", .sprout), ("Grow herbs on the balcony", .sprout),
        ("Quit smoking", .noSmoking), ("Stop vaping", .noSmoking), ("Volunteer at the shelter", .helpingHands), ("Donate blood", .helpingHands),
        ("Read to my kids every night", .storybook), ("Read bedtime stories with my daughter", .storybook),
        ("Study for my exams", .gradCap), ("Finish my degree", .gradCap), ("Do yoga every morning", .yoga), ("Pilates twice a week", .yoga),
        ("Go hiking every weekend", .boot), ("Hike the Pennine Way", .boot), ("Eat more fruit", .apple), ("Less sugar", .apple),
        ("Wake up at six", .alarmClock), ("Paint every Sunday", .palette), ("Walk the dog daily", .paw), ("Floss every night", .tooth),
        ("Build a habit", .calendar), ("Keep a weekly routine", .calendar), ("Clear my todo list", .checklist), ("Keep the house tidy", .house),
        ("Declutter my home", .house), ("Less screen time", .hourglass), ("Stop procrastinating", .hourglass), ("Win the tournament", .trophy),
        ("Start a business", .lightbulb), ("One new idea a day", .lightbulb), ("Drink less alcohol", .noAlcohol), ("Stay sober", .noAlcohol),
        ("Go camping", .tent), ("Listen to a podcast a week", .headphones), ("Finish an audiobook a month", .headphones),
        ("Run a marathon", .runner), ("Meditate daily", .meditation), ("Plant a tree", .tree), ("Zorblat quux", .abstract),
    ])
    func engine4WordsChooseTheirMotif(prompt: String, motif: Motif) {
        #expect(PromptReading(prompt).scene.0 == motif)
    }

    /// Every motif of the common resolutions draws in the badge it was chosen for.
    @Test func theMotifIsDrawnAndNamed() async throws {
        let (image, _) = try await render("Quit smoking", size: 128)
        #expect(image.extra["motif"] == "no-smoking <- smoking")
    }

    // MARK: seeds give different ideas

    /// Where the picture's luminance changes sharply: its shapes, whatever their hue.
    func edges(_ image: GDImage) -> [Bool] {
        let w = image.width
        let lum = (0..<(w * w)).map { image.pixel($0 % w, $0 / w).luminance * 255 }
        return (0..<(w * w)).map { i in
            let x = i % w, y = i / w
            guard x > 0, y > 0, x < w - 1, y < w - 1 else { return false }
            return abs(lum[i + 1] - lum[i - 1]) + abs(lum[i + w] - lum[i - w]) > 6
        }
    }

    /// The share of either map's edges with no edge of the other within 2 pixels:
    /// shapes that are not in the other picture, not the same shapes a pixel off
    /// or drawn in another hue.
    func difference(_ a: [Bool], _ b: [Bool]) -> Double {
        let w = Int(Double(a.count).squareRoot())
        func near(_ map: [Bool], _ i: Int) -> Bool {
            let x = i % w, y = i / w
            for dy in -2...2 {
                for dx in -2...2 {
                    let nx = x + dx, ny = y + dy
                    if nx >= 0, ny >= 0, nx < w, ny < w, map[ny * w + nx] { return true }
                }
            }
            return false
        }
        var edges = 0, unmatched = 0
        for i in a.indices {
            if a[i] { edges += 1; if !near(b, i) { unmatched += 1 } }
            if b[i] { edges += 1; if !near(a, i) { unmatched += 1 } }
        }
        return Double(unmatched) / Double(max(1, edges))
    }

    @Test func fourSeedsGiveFourLayouts() async throws {
        var maps: [[Bool]] = []
        var layouts: [String] = []
        for seed in UInt64(1)...4 {
            let (image, pixels) = try await render("Meditate daily", seed: seed)
            maps.append(edges(pixels))
            layouts.append(image.extra["layout"] ?? "")
        }
        #expect(Set(layouts).count == 4, "\(layouts)")
        var least = 1.0
        for i in 0..<4 { for j in (i + 1)..<4 { least = min(least, difference(maps[i], maps[j])) } }
        // Measured at least 0.09 (a dotted face against a rayed one); a hue, a tilt and the rim's
        // notches alone (art engine 3's variants) differed by at most 0.04.
        #expect(least > 0.07, "\(least)")
        // The same seed still gives the same bytes.
        let request = BadgeRequest(prompt: "Meditate daily", size: 256, seed: 3)
        #expect(try generator.render(request) == generator.render(request))
    }

    @Test func consecutiveSeedsChangeEveryPartOfTheLayout() {
        for seed in UInt64(0)..<60 {
            let a = Layout(prompt: "Read more", seed: seed), b = Layout(prompt: "Read more", seed: seed + 1)
            #expect(a.backdrop != b.backdrop && a.rim != b.rim && a.arrangement != b.arrangement)
        }
    }

    // MARK: earlier engines

    /// Badges drawn by earlier art engines are verified by the release that drew them:
    /// `verify` says which, and redraws nothing.
    @Test func aBadgeOfAnEarlierEngineNamesTheReleaseThatVerifiesIt() async throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/art-engine-3-pastel-medal.png")
        await #expect {
            _ = try await Provenance.verify(fixture)
        } throws: { error in
            guard let error = error as? BadgeError else { return false }
            return error.code == .unsupportedFormat
                && error.message == "this badge was drawn by art-engine 3; this version of badge draws only with art-engine 6"
                && error.hint == "verify it with badge 0.2.0, which draws art-engine 3"
        }
        #expect(Provenance.retired["art-engine 4"] == "0.2.0" && Provenance.retired["art-engine 2"] == "0.2.0")
    }
}
