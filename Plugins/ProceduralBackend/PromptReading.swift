import Foundation

/// The motifs the procedural backend can draw.
enum Motif: String, CaseIterable, Sendable {
    case dumbbells, tree, forest, path, book, drop, heart, sun, runner, mountain, abstract

    /// The hue a motif suggests when the prompt names no colour: water is blue,
    /// a forest green. The seed still moves it a little.
    var hue: Double? {
        switch self {
        case .drop: return 205
        case .tree, .forest, .path: return 135
        case .heart: return 350
        case .sun: return 32
        case .mountain: return 215
        case .book: return 225
        case .dumbbells, .runner, .abstract: return nil
        }
    }
}

/// What a prompt says to the art engine: which motif (and which words chose
/// it), which colour words, and the words for the caption.
struct PromptReading: Sendable {
    var motifs: [(Motif, String)]
    var colorWords: [String]
    var caption: String

    /// Word stems to motifs. Stems come from `stem(_:)`, so "runner", "running"
    /// and "runs" all find "run".
    static let lexicon: [String: Motif] = [
        "dumbbell": .dumbbells, "gym": .dumbbells, "lift": .dumbbells, "weight": .dumbbells, "workout": .dumbbells,
        "exercis": .dumbbells, "strength": .dumbbells, "muscl": .dumbbells, "fit": .dumbbells, "fitness": .dumbbells,
        "tree": .tree, "oak": .tree, "pine": .tree, "plant": .tree,
        "forest": .forest, "wood": .forest, "woods": .forest, "nature": .forest, "jungl": .forest,
        "path": .path, "trail": .path, "walk": .path, "hike": .path, "hik": .path, "road": .path, "journey": .path,
        "book": .book, "read": .book, "novel": .book, "librar": .book, "study": .book, "learn": .book,
        "water": .drop, "drink": .drop, "hydrat": .drop, "drop": .drop,
        "heart": .heart, "love": .heart, "health": .heart, "healthy": .heart, "famil": .heart, "kind": .heart,
        "sun": .sun, "sunris": .sun, "sunrise": .sun, "sunset": .sun, "sunshine": .sun, "sunny": .sun, "morning": .sun, "earli": .sun, "early": .sun, "dawn": .sun,
        "run": .runner, "runn": .runner, "jog": .runner, "marathon": .runner, "sprint": .runner, "5k": .runner, "10k": .runner, "race": .runner,
        "mountain": .mountain, "climb": .mountain, "peak": .mountain, "summit": .mountain, "alp": .mountain,
    ]

    /// Words that join others; a shortened caption never ends on one.
    static let linkers: Set<String> = ["through", "with", "at", "by", "from", "into", "over", "under", "before", "after"]

    /// Words a caption does not start with ("A pair of dumbbells" reads "PAIR OF DUMBBELLS").
    static let leading: Set<String> = ["a", "an", "the", "to", "i", "will", "my", "i'll"]

    /// Words that only fill a sentence; left out of captions that must be shorter.
    static let fillers: Set<String> = ["a", "an", "the", "to", "of", "i", "will", "my", "more", "every", "each", "and", "for", "in", "on", "pair"]

    init(_ prompt: String) {
        let words = Self.words(prompt)
        var motifs: [(Motif, String)] = []
        var colors: [String] = []
        for word in words {
            if let motif = Self.lexicon[word] ?? Self.lexicon[Self.stem(word)], !motifs.contains(where: { $0.0 == motif }) {
                motifs.append((motif, word))
            }
            if Palette.named[word] != nil || Palette.moods[word] != nil { colors.append(word) }
        }
        self.motifs = motifs
        colorWords = colors
        caption = Self.caption(prompt)
    }

    /// The motif to draw: composed scenes first ("a path through a forest").
    var scene: (Motif, [String]) {
        let kinds = motifs.map(\.0)
        if kinds.contains(.path), let other = motifs.first(where: { $0.0 == .forest || $0.0 == .tree }) {
            return (.path, [motifs.first { $0.0 == .path }!.1, other.1])
        }
        if let first = motifs.first { return (first.0, [first.1]) }
        return (.abstract, [])
    }

    /// Lower-case words of letters and digits, any script.
    static func words(_ text: String) -> [String] {
        text.lowercased().split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }

    /// A light stemmer: enough for run/running/runner/runs and read/reading.
    static func stem(_ word: String) -> String {
        for suffix in ["ning", "ing", "ers", "er", "es", "ed", "s", "y"] where word.count > suffix.count + 2 && word.hasSuffix(suffix) {
            return String(word.dropLast(suffix.count))
        }
        return word
    }

    /// A short upper-case caption in characters the caption font has.
    static func caption(_ prompt: String) -> String {
        let words = prompt.split(whereSeparator: \.isWhitespace).map { word in
            String(word.unicodeScalars.filter(Self.isDrawable).map(Character.init))
        }.filter { !$0.isEmpty }
        var kept = words
        while let first = kept.first, leading.contains(first.lowercased()), kept.count > 1 { kept.removeFirst() }
        return kept.joined(separator: " ").uppercased()
    }

    /// Latin, Greek, Cyrillic, digits and common punctuation: what DejaVu Sans draws.
    static func isDrawable(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x21, 0x26, 0x27, 0x2C, 0x2D, 0x2E, 0x3F: return true
        case 0xC0...0x24F, 0x370...0x3FF, 0x400...0x4FF: return s.properties.isAlphabetic
        default: return false
        }
    }
}
