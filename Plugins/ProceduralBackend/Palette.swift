import Canvas
import Foundation

/// The colours of one badge: the face, the rim's metal, and the motif's ink.
struct Palette: Sendable {
    var faceLight: RGBA
    var faceDark: RGBA
    var rimLight: RGBA
    var rimDark: RGBA
    var ink: RGBA
    var name: String
    /// The second colour: the ring inside the rim, the laurels and stars.
    var accent = RGBA(250, 220, 130)

    /// Colour words and their hues (degrees) and saturation.
    static let named: [String: (hue: Double, saturation: Double, lightness: Double)] = [
        "red": (2, 0.7, 0.42), "crimson": (348, 0.75, 0.38), "rose": (340, 0.6, 0.45), "pink": (330, 0.65, 0.5),
        "coral": (12, 0.75, 0.5), "orange": (26, 0.85, 0.45), "amber": (38, 0.9, 0.42), "apricot": (28, 0.8, 0.52),
        "gold": (44, 0.75, 0.4), "golden": (44, 0.75, 0.4), "yellow": (50, 0.85, 0.42), "lime": (85, 0.6, 0.38),
        "green": (130, 0.5, 0.33), "forest": (140, 0.45, 0.26), "emerald": (150, 0.6, 0.32), "mint": (160, 0.45, 0.4),
        "teal": (178, 0.6, 0.3), "cyan": (188, 0.7, 0.36), "turquoise": (174, 0.6, 0.38), "ocean": (200, 0.65, 0.34),
        "blue": (215, 0.65, 0.4), "navy": (222, 0.6, 0.24), "midnight": (232, 0.5, 0.18), "indigo": (250, 0.5, 0.32),
        "violet": (270, 0.5, 0.4), "purple": (280, 0.5, 0.35), "lavender": (262, 0.45, 0.55), "plum": (300, 0.35, 0.32),
        "brown": (25, 0.45, 0.3), "black": (220, 0.15, 0.12), "grey": (215, 0.1, 0.4), "gray": (215, 0.1, 0.4),
        "silver": (210, 0.08, 0.5), "white": (210, 0.12, 0.62),
    ]

    /// Moods shift the chosen colour: lightness and saturation factors.
    static let moods: [String: (lightness: Double, saturation: Double)] = [
        "dark": (0.7, 1), "night": (0.6, 0.9), "pastel": (1.35, 0.6), "vivid": (1, 1.3), "bright": (1.15, 1.2),
        "warm": (1, 1.1), "cool": (1, 0.9), "dawn": (1.15, 0.9),
    ]

    static let metals: [(name: String, light: RGBA, dark: RGBA)] = [
        ("gold", RGBA(250, 220, 130), RGBA(168, 118, 30)),
        ("silver", RGBA(240, 244, 248), RGBA(130, 140, 155)),
        ("bronze", RGBA(238, 180, 130), RGBA(138, 78, 38)),
        ("rose gold", RGBA(246, 200, 190), RGBA(166, 100, 96)),
    ]
}

extension Palette {
    /// The palette: the face is the first colour the prompt names
    /// (its pastel tint or dark shade when the prompt says so), the accent the
    /// second, the rim the third; with no colour named, the seed's or the
    /// motif's hue. The ink is white or a dark shade of the face,
    /// whichever reads on the whole face (WCAG ≥ 4.5).
    static func make(look: LookReading, colorWords: [String], motif: Motif, random: inout SplitMix64) -> Palette {
        var face: Lab
        var name: String
        if let first = look.colours.first {
            face = Lab(first.color)
            name = first.words.joined(separator: " ")
            if look.dark {
                face.l *= 0.6
                name = "dark " + name
            }
            // A mood or vibe nudges the colour named, never far from it.
            for word in colorWords where word != "pastel" && word != "dark" {
                let moodName = PromptReading.vibes[word] ?? word
                guard let mood = moods[moodName] else { continue }
                face.l = max(0, min(100, face.l + max(-6, min(6, (mood.lightness - 1) * 20))))
                let k = max(0.85, min(1.15, mood.saturation))
                face.a *= k
                face.b *= k
                name += " " + word
            }
        } else {
            var hue = Double(random.next() % 360)
            var saturation = 0.55 + Double(random.next() % 20) / 100
            var lightness = 0.36
            name = "seeded hue \(Int(hue))"
            if let suggested = motif.hue {
                hue = suggested + Double(Int(hue) % 41 - 20)
                name = "\(motif.rawValue) hue \(Int(hue))"
            }
            Self.applyMoods(colorWords.filter { $0 != "pastel" }, hue: &hue, saturation: &saturation, lightness: &lightness, name: &name)
            face = Lab(RGBA.hsl(hue, saturation, lightness))
            if !look.pastel {
                // No colour named: the face is kept dark enough for white ink.
                var rgba = face.rgba
                while RGBA.contrast(RGBA(252, 252, 250), Lab(rgba).lighter(5).rgba) < 4.5 && rgba.hsl.l > 0.1 { rgba = rgba.darker(0.08) }
                face = Lab(rgba)
            }
        }
        if look.pastel {
            face = face.lightTint(minimum: 85)
            name = "pastel " + name
        }
        let metal = metals[Int(random.next() % UInt64(metals.count))]
        // A gentle gradient around the colour: every part of the face is the colour named.
        var spread = 5.0
        var faceLight = face.lighter(spread).rgba, faceDark = face.lighter(-spread).rgba
        let white = RGBA(252, 252, 250)
        let shade = Lab(l: 8, a: face.a * 0.25, b: face.b * 0.25).rgba
        // With a margin: the patterns on the face move it a little.
        func reads(_ ink: RGBA) -> Bool { RGBA.contrast(ink, faceLight) >= 4.8 && RGBA.contrast(ink, faceDark) >= 4.8 }
        var ink = white
        while true {
            if reads(white) { ink = white; break }
            if reads(shade) { ink = shade; break }
            if spread <= 0 {
                ink = RGBA.contrast(white, faceLight) >= RGBA.contrast(.black, faceLight) ? white : RGBA(0, 0, 0)
                break
            }
            spread -= 1
            faceLight = face.lighter(spread).rgba
            faceDark = face.lighter(-spread).rgba
        }
        var accent = metal.light.mixed(with: metal.dark, 0.25)
        if look.colours.count > 1 {
            var lab = Lab(look.colours[1].color)
            if look.pastel { lab = lab.lightTint(minimum: 82) }
            accent = lab.rgba
            name += ", \(look.colours[1].words.joined(separator: " ")) accent"
        }
        var rimLight = metal.light, rimDark = metal.dark, rimName = metal.name
        if look.colours.count > 2 {
            var lab = Lab(look.colours[2].color)
            if look.pastel { lab = lab.lightTint(minimum: 82) }
            rimLight = lab.lighter(12).rgba
            rimDark = lab.lighter(-14).rgba
            rimName = look.colours[2].words.joined(separator: " ")
        }
        return Palette(faceLight: faceLight, faceDark: faceDark, rimLight: rimLight, rimDark: rimDark, ink: ink,
                       name: "\(name), \(rimName) rim", accent: accent)
    }
}

extension Palette {
    /// A sketch's paper and ink, tinted by the colours named: of two or more,
    /// the darkest is the ink and the lightest the paper ("in navy and gold":
    /// navy on gold); one dark colour is the ink on a paper of its palest tint,
    /// one light colour the paper under an ink of its darkest shade. With
    /// none, charcoal on cream. The ink is darkened (or the paper lightened)
    /// until it reads on the paper (WCAG ≥ 4.5). The accent and the rim are the ink.
    static func sketch(look: LookReading) -> Palette {
        var paper = RGBA(250, 246, 234), ink = RGBA(44, 44, 56)
        var name = "charcoal on cream"
        let named = look.colours.map { (look.pastel ? Lab($0.color).lightTint(minimum: 85).rgba : $0.color, $0.words.joined(separator: " ")) }
        if named.count >= 2 {
            let sorted = named.sorted { Lab($0.0).l < Lab($1.0).l }
            ink = sorted.first!.0
            paper = sorted.last!.0
            name = "\(sorted.first!.1) on \(sorted.last!.1)"
        } else if let (one, word) = named.first {
            let lab = Lab(one)
            if lab.l < 55 {
                ink = one
                paper = Lab(l: 96, a: lab.a * 0.12, b: lab.b * 0.12).rgba
                name = "\(word) on pale \(word)"
            } else {
                paper = one
                ink = Lab(l: 16, a: lab.a * 0.35, b: lab.b * 0.35).rgba
                name = "dark \(word) on \(word)"
            }
        }
        while RGBA.contrast(ink, paper) < 4.5 {
            let (i, p) = (Lab(ink), Lab(paper))
            if i.l <= 4 && p.l >= 98 { break }
            if i.l > 4 { ink = i.lighter(-4).rgba }
            if p.l < 98 && RGBA.contrast(ink, paper) < 4.5 { paper = p.lighter(2).rgba }
        }
        return Palette(faceLight: paper, faceDark: paper, rimLight: ink, rimDark: ink, ink: ink, name: name, accent: ink)
    }
}

/// A small, fast, deterministic generator (Steele et al.'s SplitMix64).
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// FNV-1a over UTF-8: stable across runs and machines, unlike `hashValue`.
func stableHash(_ text: String, seed: UInt64) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ seed
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x0100_0000_01B3
    }
    return hash
}

extension Palette {
    /// The moods among `words` applied to a colour, in order; a vibe is drawn as
    /// the mood it suggests ("joyful": bright). Each one found is added to `name`.
    static func applyMoods(_ words: [String], hue: inout Double, saturation: inout Double, lightness: inout Double, name: inout String) {
        for word in words {
            let moodName = PromptReading.vibes[word] ?? word
            guard let mood = moods[moodName] else { continue }
            lightness *= mood.lightness
            saturation = min(1, saturation * mood.saturation)
            if moodName == "warm" { hue = hue * 0.7 + 30 * 0.3 }
            if moodName == "cool" { hue = hue * 0.7 + 210 * 0.3 }
            name += " " + word
        }
    }
}

extension Palette {
    /// A round badge's metal rim, lit from the top left across a badge of `side` pixels.
    func rimMetal(side s: Double) -> Paint {
        .linear(start: Point(s * 0.2, s * 0.1), end: Point(s * 0.8, s * 0.9),
                stops: [(0, rimLight), (0.5, rimLight.mixed(with: rimDark, 0.45)), (1, rimDark)])
    }

    /// The rim's inner edge, catching the light from the other side (a bevel).
    func rimBevel(side s: Double) -> Paint {
        .linear(start: Point(s * 0.8, s * 0.9), end: Point(s * 0.2, s * 0.1), stops: [(0, rimLight), (1, rimDark.darker(0.2))])
    }
}
