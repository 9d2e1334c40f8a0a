import Canvas
import Foundation

/// What a prompt says about the picture's look:
/// its colours in the order named, whether they are pastel, whether the
/// picture is full bleed, and whether it is a horizon scene.
struct LookReading: Sendable, Equatable {
    /// One colour the prompt names, with the words that named it ("midnight black").
    struct NamedColour: Sendable, Equatable {
        var words: [String]
        var color: RGBA
    }

    enum Horizon: String, Sendable {
        case sunrise, sunset, dawn, dusk, night, horizon
    }

    var colours: [NamedColour] = []
    /// "pastel" anywhere: every colour is drawn as its light tint.
    var pastel = false
    /// A dark mood not attached to one colour ("dark mood"): the face is darkened.
    var dark = false
    /// "edge-to-edge", "full bleed", "no borders" and the like: the tile style.
    var fullBleed = false
    /// The word that asked for a horizon scene ("sunset", "night sky").
    var horizon: (kind: Horizon, word: String)?

    static func == (a: LookReading, b: LookReading) -> Bool {
        a.colours == b.colours && a.pastel == b.pastel && a.dark == b.dark && a.fullBleed == b.fullBleed
            && a.horizon?.kind == b.horizon?.kind
    }

    /// Descriptive colour words and the colours they mean, where the CSS list
    /// has no such name or means something else by it (CSS "lavender" is
    /// nearly white, CSS "lime" pure green).
    static let descriptive: [String: String] = [
        "midnight": "#10152E", "amber": "#FFBF00", "apricot": "#FBCEB1", "golden": "#FFD700", "rose": "#E8637F",
        "emerald": "#50C878", "mint": "#98E0B8", "ocean": "#0E6A8C", "forest": "#228B22", "lavender": "#B57EDC",
        "lime": "#32CD32", "peach": "#FFCBA4", "sand": "#D8C39A", "cream": "#FFF6DC", "sage": "#9CAF88",
        "terracotta": "#C8623E", "burgundy": "#800020", "ruby": "#C0143C", "sapphire": "#0F52BA", "charcoal": "#36454F",
        "mustard": "#E1AD01", "copper": "#B87333", "blush": "#F4B6C2", "jade": "#00A86B",
        "cobalt": "#0047AB", "scarlet": "#FF2400", "cherry": "#D2042D", "lemon": "#FFF44F", "rust": "#B7410E",
        "bronze": "#CD7F32", "denim": "#1560BD", "mauve": "#C8A2C8", "ochre": "#CC7722",
        "sunflower": "#FFC512", "aubergine": "#3B1A3E",
    ]

    /// Words that make the next colour darker ("deep navy") or lighter ("pale blue").
    static let darkeners: Set<String> = ["dark", "deep"]
    static let lighteners: Set<String> = ["light", "pale", "soft"]
    /// Basic colour terms: after a shade of the same hue ("navy blue", "emerald
    /// green") the shade is meant; otherwise two colour words in a row are mixed
    /// ("midnight black", "golden apricot").
    static let basicTerms: Set<String> = ["red", "orange", "yellow", "green", "blue", "purple", "pink", "brown", "black", "white", "grey", "gray"]

    static let horizonWords: [String: Horizon] = [
        "sunrise": .sunrise, "sunset": .sunset, "sundown": .sunset, "dawn": .dawn, "dusk": .dusk, "twilight": .dusk,
        "horizon": .horizon,
    ]

    /// The colour a single word names (a descriptive word first, then CSS).
    static func colour(_ word: String) -> RGBA? {
        (descriptive[word] ?? CSSColors.named[word]).flatMap { RGBA(hex: $0) }
    }

    init() {}

    /// Reads a prompt's text, clause by clause: colour words are one colour only
    /// within a clause ("navy, coral" are two; "midnight black" one).
    init(text: String) {
        // Colour words of other languages are read as the English ones (ColourWords).
        let english = ColourWords.isEnglish(PromptReading.words(text))
        for clause in PromptReading.clauses(text) {
            let words = PromptReading.words(clause)
            read(english ? words : ColourWords.translated(words))
        }
    }

    private mutating func read(_ words: [String]) {
        var i = 0
        var modifier: String?
        while i < words.count {
            let word = words[i]
            let next = i + 1 < words.count ? words[i + 1] : nil
            defer { i += 1 }
            if word == "pastel" || word == "pastels" { pastel = true; continue }
            if let next, let kind = Self.phrase(word, next) {
                if kind == "bleed" { fullBleed = true } else if horizon == nil { horizon = (.night, word + " " + next) }
                i += 1
                continue
            }
            if word == "no" && next == "rounded" && i + 2 < words.count && words[i + 2] == "corners" {
                fullBleed = true
                i += 2
                continue
            }
            if word == "edge" && next == "to" && i + 2 < words.count && words[i + 2] == "edge" {
                fullBleed = true
                i += 2
                continue
            }
            if word == "borderless" || word == "frameless" || word == "fullbleed" { fullBleed = true; continue }
            if horizon == nil, let kind = Self.horizonWords[word] { horizon = (kind, word) }
            // "sea green", "dark red", "light blue": one CSS colour.
            if let next, let css = CSSColors.color(word + next) {
                colours.append(NamedColour(words: [word, next], color: css))
                i += 1
                modifier = nil
                continue
            }
            if Self.darkeners.contains(word) || Self.lighteners.contains(word) {
                if let next, Self.colour(next) != nil { modifier = word } else if Self.darkeners.contains(word) { dark = true }
                continue
            }
            guard var colour = Self.colour(word), !Self.isTime(words, at: i) else { continue }
            var named = [word]
            // A second colour word right after: the shade, or the two mixed.
            if let next, Self.colour(next) != nil, !Self.isCompound(next, words, i + 1) {
                let second = Self.colour(next)!
                if !(Self.basicTerms.contains(next) && Lab(second).chroma > 20 && Lab(colour).hueDistance(Lab(second)) < 40) {
                    colour = Lab(colour).mixed(with: Lab(second), 0.5).rgba
                }
                named.append(next)
                i += 1
            }
            if let modifier {
                var lab = Lab(colour)
                if Self.darkeners.contains(modifier) {
                    lab.l *= 0.6
                    lab.a *= 0.85
                    lab.b *= 0.85
                } else {
                    lab = lab.lightTint(minimum: 78)
                }
                colour = lab.rgba
                named.insert(modifier, at: 0)
            }
            modifier = nil
            colours.append(NamedColour(words: named, color: colour))
        }
    }

    /// Whether `words[i]` names a time, not a colour: "midnight" after a
    /// preposition of time ("before midnight", "until midnight").
    static func isTime(_ words: [String], at i: Int) -> Bool {
        i > 0 && ["midnight", "noon"].contains(words[i])
            && ["before", "after", "until", "till", "by", "at", "past", "around", "from", "to", "since"].contains(words[i - 1])
    }

    /// Whether `words[k]` starts a two-word CSS colour ("sea green"): then it is not mixed into the colour before it.
    private static func isCompound(_ word: String, _ words: [String], _ k: Int) -> Bool {
        k + 1 < words.count && CSSColors.named[word + words[k + 1]] != nil
    }

    /// Two-word phrases: "full bleed", "full square", "no border(s)", "no frame", "no rim" → "bleed";
    /// "night sky" → "sky".
    private static func phrase(_ a: String, _ b: String) -> String? {
        switch (a, b) {
        case ("full", "bleed"), ("full", "square"), ("no", "border"), ("no", "borders"), ("no", "frame"), ("no", "rim"),
             ("no", "corners"):
            return "bleed"
        case ("night", "sky"), ("starry", "sky"), ("starry", "night"): return "sky"
        default: return nil
        }
    }
}

/// CIELAB (D65), for mixing colours and making tints the way they look.
struct Lab: Sendable, Equatable {
    var l: Double
    var a: Double
    var b: Double

    init(l: Double, a: Double, b: Double) {
        self.l = l
        self.a = a
        self.b = b
    }

    init(_ c: RGBA) {
        func linear(_ v: UInt8) -> Double {
            let x = Double(v) / 255
            return x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
        }
        let r = linear(c.r), g = linear(c.g), bl = linear(c.b)
        let x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * bl) / 0.95047
        let y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * bl
        let z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * bl) / 1.08883
        func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
        l = 116 * f(y) - 16
        a = 500 * (f(x) - f(y))
        b = 200 * (f(y) - f(z))
    }

    var rgba: RGBA {
        let fy = (l + 16) / 116, fx = fy + a / 500, fz = fy - b / 200
        func inverse(_ t: Double) -> Double { t * t * t > 216.0 / 24389 ? t * t * t : (116 * t - 16) / (24389.0 / 27) }
        let x = inverse(fx) * 0.95047, y = inverse(fy), z = inverse(fz) * 1.08883
        let r = 3.2404542 * x - 1.5371385 * y - 0.4985314 * z
        let g = -0.9692660 * x + 1.8760108 * y + 0.0415560 * z
        let bl = 0.0556434 * x - 0.2040259 * y + 1.0572252 * z
        func byte(_ v: Double) -> UInt8 {
            let c = max(0, min(1, v))
            let s = c <= 0.0031308 ? c * 12.92 : 1.055 * pow(c, 1 / 2.4) - 0.055
            return UInt8((s * 255).rounded())
        }
        return RGBA(byte(r), byte(g), byte(bl))
    }

    var chroma: Double { (a * a + b * b).squareRoot() }
    var hue: Double { (atan2(b, a) * 180 / .pi + 360).truncatingRemainder(dividingBy: 360) }

    func hueDistance(_ other: Lab) -> Double {
        let d = abs(hue - other.hue).truncatingRemainder(dividingBy: 360)
        return min(d, 360 - d)
    }

    func mixed(with other: Lab, _ t: Double) -> Lab {
        Lab(l: l + (other.l - l) * t, a: a + (other.a - a) * t, b: b + (other.b - b) * t)
    }

    /// A light tint of the colour: at least `minimum` L*, its chroma softened.
    func lightTint(minimum: Double) -> Lab {
        let k = min(1, 30 / max(chroma, 1))
        return Lab(l: max(l, minimum), a: a * k, b: b * k)
    }

    /// The colour moved `dl` in lightness.
    func lighter(_ dl: Double) -> Lab { Lab(l: max(0, min(100, l + dl)), a: a, b: b) }
}
