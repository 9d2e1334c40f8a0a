import BadgeKit
import Foundation

/// Composes a badge's prompt the way a designer works toward one, in four
/// stages: the purpose (what the promise is), the vibe (its mood), the
/// metaphor (the symbol that stands for it) and the aesthetics (style and
/// colours). It writes one line, Midjourney-style, ending in `--ar 1:1`:
///
///     Run a marathon, joyful mood, a runner as its symbol, flat style in coral and gold --ar 1:1
///
/// Every word it writes is one the procedural backend reads (the caption is
/// the purpose; the symbol is the motif; the vibe and colours make the
/// palette; the style is the style), and any image model can take the line.
package struct PromptComposer: Sendable, Equatable {
    package var purpose: String
    package var vibe: String?
    package var metaphor: String?
    package var style: String?
    package var colors: [String]
    package var grain: Bool
    package var glow: Bool

    package init(purpose: String, vibe: String? = nil, metaphor: String? = nil, style: String? = nil, colors: [String] = [],
                grain: Bool = false, glow: Bool = false) {
        self.purpose = purpose
        self.vibe = vibe
        self.metaphor = metaphor
        self.style = style
        self.colors = colors
        self.grain = grain
        self.glow = glow
    }

    // MARK: - What each stage can be

    /// Vibes, each drawn as a mood of the palette.
    package static let vibes: [String] = (Array(PromptReading.vibes.keys) + Palette.moods.keys).sorted()

    /// The symbols it can draw, by name.
    package static let metaphors: [String] = Motif.allCases.filter { $0 != .abstract }.map(\.rawValue)

    /// How many icons the icon font gives beyond the motifs (IconCatalog).
    package static let iconCount = IconCatalog.count

    package static let styles: [String] = BadgeArt.Style.allCases.map(\.rawValue)

    /// A few colours to suggest; any of the 147 CSS names and the descriptive words work.
    package static let suggestedColors = ["coral", "amber", "golden", "teal", "ocean", "forest", "rose", "lavender", "midnight", "crimson"]

    /// How each symbol is written: words the backend reads as its motif.
    static let phrases: [Motif: String] = [
        .dumbbells: "a pair of dumbbells", .tree: "a tree", .forest: "a forest", .path: "a path", .book: "an open book",
        .drop: "a water drop", .heart: "a heart", .sun: "the sun", .runner: "a runner", .mountain: "a mountain",
        .bicycle: "a bicycle", .swimmer: "a swimmer", .meditation: "a figure in meditation", .moon: "the moon and stars",
        .waves: "ocean waves", .pencil: "a pencil", .music: "a music note", .laptop: "a laptop", .speech: "a speech bubble",
        .leaf: "a leaf", .cup: "a cup", .coins: "a stack of coins", .globe: "a globe", .camera: "a camera",
        .plane: "a plane", .suitcase: "a suitcase", .bed: "a bed", .phone: "a phone", .piggyBank: "a piggy bank",
        .pot: "a cooking pot", .sprout: "a sprout", .noSmoking: "a no-smoking sign", .helpingHands: "helping hands",
        .storybook: "a storybook", .gradCap: "a graduation cap", .yoga: "a yoga pose", .boot: "a hiking boot",
        .language: "two languages", .apple: "an apple", .alarmClock: "an alarm clock", .palette: "a painter's palette",
        .paw: "a paw print", .tooth: "a tooth", .calendar: "a calendar", .checklist: "a checklist", .house: "a house",
        .hourglass: "an hourglass", .trophy: "a trophy", .lightbulb: "a lightbulb", .noAlcohol: "no alcohol", .tent: "a tent",
        .headphones: "headphones",
    ]

    /// The colours in an answer, written the way people write a list: "coral and
    /// teal", "coral, teal", "coral & teal", "coral teal".
    package static func colors(in answer: String) -> [String] {
        answer.split(whereSeparator: { $0 == "," || $0 == "&" || $0 == "+" || $0 == "/" || $0.isWhitespace })
            .map(String.init).filter { $0.lowercased() != "and" }
    }

    /// Words people use for a mood, and the vibe that draws it ("chill": calm).
    package static let vibeSynonyms: [String: String] = [
        "chill": "calm", "relaxed": "calm", "relaxing": "calm", "quiet": "calm", "still": "calm", "peaceful": "serene",
        "tranquil": "serene", "zen": "serene", "soft": "gentle", "tender": "gentle", "kind": "gentle", "sweet": "gentle",
        "happy": "joyful", "cheerful": "joyful", "glad": "joyful", "festive": "joyful", "fun": "playful", "silly": "playful",
        "whimsical": "playful", "sparkly": "bright", "sparkling": "bright", "shiny": "bright", "sunny": "bright",
        "colorful": "vivid", "colourful": "vivid", "loud": "vivid", "strong": "bold", "brave": "bold", "confident": "bold",
        "excited": "energetic", "dynamic": "energetic", "sporty": "energetic", "intense": "fierce", "powerful": "fierce",
        "wild": "fierce", "comfy": "cozy", "cosy": "cozy", "homey": "cozy", "snug": "cozy", "optimistic": "hopeful",
        "new": "hopeful", "fresh": "dawn", "determined": "focused", "serious": "focused", "driven": "focused",
        "moody": "dark", "mysterious": "night", "sleepy": "night", "starry": "night", "dreamy": "pastel", "romantic": "warm", "icy": "cool", "crisp": "cool",
    ]

    /// The vibe `word` is drawn as: itself, or the vibe a word for a mood
    /// stands for ("chill": calm); nil for neither.
    package static func vibe(named word: String) -> String? {
        let word = word.lowercased().trimmingCharacters(in: .whitespaces)
        return vibes.contains(word) ? word : vibeSynonyms[word]
    }

    package static func isColor(_ word: String) -> Bool {
        let word = word.lowercased()
        return Palette.named[word] != nil || CSSColors.named[word] != nil
    }

    /// The symbol the purpose's own words suggest, if any ("Run a marathon": runner).
    package static func suggestedMetaphor(for purpose: String) -> String? {
        let (motif, _) = PromptReading(purpose).scene
        return motif == .abstract ? nil : motif.rawValue
    }

    // MARK: - Checking and writing

    /// Says what is wrong with a stage, and what it can be instead.
    package func validate() throws {
        let text = purpose.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else {
            throw BadgeError(.usage, "the purpose is empty", hint: "say what the promise is, e.g. \"Run a marathon\"")
        }
        if text.split(whereSeparator: \.isWhitespace).contains(where: { $0.hasPrefix("--") }) {
            throw BadgeError(.usage, "the purpose contains a flag (\"--\"): the composer writes the flags itself",
                             hint: "give the style and colours as their own stages")
        }
        if let vibe, Self.vibe(named: vibe) == nil {
            // A typo suggests the nearest vibe.
            let suggestion = Self.suggestion(for: vibe, in: Self.vibes)
            throw BadgeError(.usage, "\"\(vibe)\" is not a vibe the badge can draw",
                             hint: suggestion + "choose one of: \(Self.vibes.joined(separator: ", "))")
        }
        if let metaphor, Self.motif(named: metaphor) == nil {
            throw BadgeError(.usage, "\"\(metaphor)\" is not a symbol the badge can draw",
                             hint: Self.suggestion(for: metaphor, in: Self.metaphors)
                                 + "choose one of: \(Self.metaphors.joined(separator: ", ")) (or a word for one: guitar, coffee, trail, ...)")
        }
        if let style, !Self.styles.contains(style.lowercased()) {
            throw BadgeError(.usage, "\"\(style)\" is not a style",
                             hint: Self.suggestion(for: style, in: Self.styles) + "choose one of: \(Self.styles.joined(separator: ", "))")
        }
        for color in colors where !Self.isColor(color) {
            throw BadgeError(.usage, "\"\(color)\" is not a colour the badge knows",
                             hint: Self.suggestion(for: color, in: Self.colorWords)
                                 + "use a CSS colour name or a word such as \(Self.suggestedColors.joined(separator: ", "))")
        }
    }

    /// Every colour word the composer takes: the CSS names and the palette's words.
    package static let colorWords: [String] = Array(Set(Palette.named.keys).union(CSSColors.named.keys)).sorted()

    /// "did you mean "calm"? " for a near miss ("calmm"), or nothing.
    package static let didYouMean = "did you mean"
    static func suggestion(for word: String, in choices: [String]) -> String {
        ConfigObject.closest(to: word, in: choices).map { "\(didYouMean) \"\($0)\"? " } ?? ""
    }

    /// The motif a symbol's name or word stands for.
    static func motif(named name: String) -> Motif? {
        let word = name.lowercased().trimmingCharacters(in: .whitespaces)
        return Motif(rawValue: word).flatMap { $0 == .abstract ? nil : $0 } ?? PromptReading.motif(for: word)
    }

    /// The prompt: the purpose, then a clause for each stage given, then `--ar 1:1`.
    package var line: String {
        var purpose = purpose.trimmingCharacters(in: .whitespacesAndNewlines)
        // Its own final full stop or comma would end a clause early.
        while let last = purpose.last, ",.;".contains(last) { purpose.removeLast() }
        var clauses = [purpose]
        if let vibe { clauses.append("\(Self.vibe(named: vibe) ?? vibe.lowercased()) mood") }
        if let metaphor, let motif = Self.motif(named: metaphor) {
            let word = metaphor.lowercased().trimmingCharacters(in: .whitespaces)
            clauses.append("\(Motif(rawValue: word) == nil ? word : Self.phrases[motif] ?? word) as its symbol")
        }
        let colors = colors.map { $0.lowercased() }
        let palette = colors.count > 1 ? colors.dropLast().joined(separator: ", ") + " and " + colors.last! : colors.first
        switch (style?.lowercased(), palette) {
        case let (style?, palette?): clauses.append("\(style) style in \(palette)")
        case let (style?, nil): clauses.append("\(style) style")
        case let (nil, palette?): clauses.append("in \(palette)")
        case (nil, nil): break
        }
        if grain { clauses.append("film grain") }
        if glow { clauses.append("glowing") }
        return clauses.joined(separator: ", ") + Self.lineEnd
    }

    static let lineEnd = " --ar 1:1"

    /// The purpose of a line `line` wrote ("Learn Spanish" of "Learn Spanish, calm mood, a
    /// speech bubble as its symbol, flat style in teal --ar 1:1"): the promise to record.
    /// nil for any other prompt.
    package static func purpose(ofLine line: String) -> String? {
        let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasSuffix(lineEnd) else { return nil }
        var clauses = text.dropLast(lineEnd.count).components(separatedBy: ", ")
        func isStage(_ clause: String) -> Bool {
            clause.hasSuffix(" mood") || clause.hasSuffix(" as its symbol") || clause.hasPrefix("in ")
                || clause.hasSuffix(" style") || clause.contains(" style in ") || clause == "film grain" || clause == "glowing"
        }
        while clauses.count > 1, let last = clauses.last, isStage(last) { clauses.removeLast() }
        let purpose = clauses.joined(separator: ", ").trimmingCharacters(in: .whitespaces)
        return purpose.isEmpty || purpose.contains("--") ? nil : purpose
    }
}
