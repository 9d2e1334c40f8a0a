import Canvas
import Foundation

/// The caption from art engine 4 on: the promise in the user's own words, in
/// any script. No word inside a phrase is dropped (a leading "a", "the" or "I
/// will" may go); words that only describe the picture (colours, moods,
/// styles, composition) are left out; it is fitted on up to two balanced
/// lines, then smaller down to a legible minimum, and only then shortened, at
/// a phrase boundary ("every month", "before midnight"), never ending on a
/// preposition, article, conjunction or bare number.
enum Caption {
    /// The largest caption, and the legible minimum: 4.6% of the badge's side
    /// (23 px on a 512-px badge, cap height ~17 px; 47 px at 1024).
    static let largest = 0.068, smallest = 0.046
    /// More room between words than the font gives, in ems: bold capitals
    /// set close read as one word (OCR read "A NIGHT" as "ANIGHT").
    static let wordSpacing = 0.2

    // MARK: The words

    /// The promise's words for the caption, upper case ("" when the prompt asks for no text).
    static func words(of prompt: String) -> String {
        if asksForNoText(prompt) { return "" }
        var text = String(String.UnicodeScalarView(prompt.unicodeScalars.filter { !isEmoji($0) && $0.properties.generalCategory != .control }))
        for phrase in compositionPhrases {
            text = text.replacingOccurrences(of: phrase, with: ",", options: [.regularExpression, .caseInsensitive])
        }
        // The first clause is the promise; a later one is kept when nothing in it describes the picture.
        let clauses = PromptReading.clauses(text)
        var kept = [clauses[0]]
        for clause in clauses.dropFirst() where !describesPicture(PromptReading.words(clause)) {
            kept.append(clause)
        }
        var words = kept.joined().split(whereSeparator: \.isWhitespace).map(String.init).filter { !bare($0).isEmpty || $0 == "&" }
        // Style words that only ever describe a picture go wherever they are.
        words.removeAll { lookOnly.contains(bare($0)) }
        // "I will", "To", "A": the promise starts after them.
        while let first = words.first, words.count > 1, PromptReading.leading.contains(bare(first)) {
            words.removeFirst()
        }
        words = droppingTrailingLook(words)
        // What removing the look words may leave hanging ("... and").
        while let last = words.last, words.count > 1, articles.contains(bare(last)) || conjunctions.contains(bare(last)) {
            words.removeLast()
        }
        let joined = words.joined(separator: " ")
        return capitals(String(joined.reversed().drop { $0.isPunctuation || $0.isWhitespace || $0 == "-" }.reversed()))
    }

    /// Upper case as each script writes it: Greek capitals carry no tonos or
    /// perispomeni ("ΚΆΘΕ ΜΈΡΑ" is written ΚΑΘΕ ΜΕΡΑ); a dialytika stays (Ϊ).
    static func capitals(_ text: String) -> String {
        let upper = text.uppercased()
        guard upper.unicodeScalars.contains(where: { (0x0370...0x03FF).contains($0.value) || (0x1F00...0x1FFF).contains($0.value) }) else {
            return upper
        }
        var kept: [Unicode.Scalar] = []
        for scalar in upper.decomposedStringWithCanonicalMapping.unicodeScalars {
            if scalar.value == 0x0301 || scalar.value == 0x0342 || scalar.value == 0x0313 || scalar.value == 0x0314,
               let base = kept.last, (0x0370...0x03FF).contains(base.value) {
                continue
            }
            kept.append(scalar)
        }
        return String(String.UnicodeScalarView(kept)).precomposedStringWithCanonicalMapping
    }

    /// A caption given outright (`generate --caption`): upper case, without emoji or control characters.
    static func given(_ caption: String) -> String {
        let kept = caption.unicodeScalars.filter { !isEmoji($0) && $0.properties.generalCategory != .control }
        return capitals(String(String.UnicodeScalarView(kept)).split(whereSeparator: \.isWhitespace).joined(separator: " "))
    }

    /// "no text", "no words", "without a caption", "textless".
    static func asksForNoText(_ prompt: String) -> Bool {
        let words = PromptReading.words(prompt)
        if words.contains("textless") { return true }
        for (i, word) in words.enumerated().dropLast() where word == "no" || word == "without" {
            var next = i + 1
            if ["a", "any"].contains(words[next]), next + 1 < words.count { next += 1 }
            if ["text", "words", "caption", "lettering", "writing", "title"].contains(words[next]) { return true }
        }
        return false
    }

    /// Composition phrases: they choose the tile style and are never caption.
    static let compositionPhrases = [
        #"\bedge[- ]to[- ]edge\b"#, #"\bfull[- ]bleed\b"#, #"\bfull[- ]square\b"#, #"\bborderless\b"#, #"\bframeless\b"#,
        #"\bno (rounded )?(borders?|corners|frames?)\b"#, #"\bwithout (a )?(borders?|frames?)\b"#,
    ]

    /// Words that only ever describe a picture, dropped wherever they are.
    static let lookOnly: Set<String> = ["minimalist", "minimal", "grainy", "glowing", "textured", "sketched", "lineart", "pastel"]

    /// Words that name a part of the picture's description ("teal palette").
    static let stageNames: Set<String> = ["mood", "vibe", "palette", "tone", "tones", "colour", "colours", "color", "colors", "style"]

    /// A word about the picture's look or feel: a colour, mood, vibe, style, texture.
    static func isLook(_ word: String) -> Bool {
        Palette.named[word] != nil || Palette.moods[word] != nil || CSSColors.named[word] != nil || PromptReading.vibes[word] != nil
            || PromptReading.styleWords[word] != nil || PromptReading.grainWords.contains(word) || PromptReading.glowWords.contains(word)
            || stageNames.contains(word) || lookOnly.contains(word)
    }

    /// A later clause that names a colour, a mood, a style or the symbol describes the picture.
    static func describesPicture(_ clause: [String]) -> Bool {
        clause.isEmpty || clause.contains { isLook($0) || PromptReading.metaphorWords.contains($0) }
    }

    /// Cuts a trailing run of look words ("... teal coral palette", "... in
    /// teal and coral"): one that names the stage ("palette") or two looks; a
    /// lone colour may be the promise's own ("Eat less chocolate").
    static func droppingTrailingLook(_ words: [String]) -> [String] {
        var start = words.count
        var looks = 0, staged = false
        while start > 1 {
            let word = bare(words[start - 1])
            if isLook(word) {
                looks += 1
                if stageNames.contains(word) { staged = true }
            } else if !["and", "in", "with", "&"].contains(word) {
                break
            }
            start -= 1
        }
        guard staged || looks >= 2 else { return words }
        return Array(words[..<start])
    }

    /// Emoji (motif hints, never caption), with their joiners and modifiers.
    static func isEmoji(_ s: Unicode.Scalar) -> Bool {
        s.properties.isEmojiPresentation || (s.properties.isEmoji && s.value >= 0x2100) || s.value == 0xFE0F || s.value == 0x200D
            || (0x1F3FB...0x1F3FF).contains(s.value)
    }

    /// Lower case, without the punctuation around it.
    static func bare(_ word: String) -> String {
        word.lowercased().trimmingCharacters(in: .punctuationCharacters.union(.symbols))
    }

    // MARK: Shortening

    static let prepositions: Set<String> = [
        "to", "of", "for", "at", "in", "on", "with", "without", "by", "from", "into", "onto", "over", "under", "before", "after",
        "around", "through", "about", "across", "per", "until", "till", "during", "between", "towards", "toward", "than", "like",
        "near",
    ]
    static let articles: Set<String> = ["a", "an", "the", "my", "your", "our", "their", "his", "her", "its", "some", "every", "each"]
    static let conjunctions: Set<String> = ["and", "or", "but", "so", "nor", "yet", "then", "&", "while", "when", "because", "if"]
    static let numberWords: Set<String> = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "fifteen", "twenty",
        "thirty", "forty", "fifty", "hundred", "thousand", "half", "once", "twice",
    ]
    /// Words that begin an adverbial tail ("every month", "daily").
    static let tailStarts: Set<String> = [
        "every", "each", "daily", "weekly", "monthly", "nightly", "yearly", "everyday", "today", "tonight", "tomorrow",
        "this", "next", "once", "twice", "again", "instead", "together", "more", "regularly", "always",
    ]
    static let timeUnits: Set<String> = ["day", "week", "month", "year", "night", "morning", "evening", "weekend", "minute", "hour"]

    /// Whether a shortened caption may end on `word`: not on a preposition,
    /// an article, a conjunction or a bare number.
    static func endsWell(_ word: String) -> Bool {
        let w = bare(word)
        return !(prepositions.contains(w) || articles.contains(w) || conjunctions.contains(w) || numberWords.contains(w)
            || (!w.isEmpty && w.allSatisfy(\.isNumber)) || w.isEmpty)
    }

    /// Whether a tail begins at `words[i]`: a preposition (not "to" nor
    /// "of", which join a verb or a noun to what follows), a conjunction, an
    /// adverb of time, or "a"/"an" before a unit of time ("a day").
    static func startsTail(_ words: [String], at i: Int) -> Bool {
        let w = bare(words[i])
        // After a comma or semicolon: a clause of its own ("READ 20 BOOKS, ONE A MONTH").
        if let end = words[i - 1].last, end == "," || end == ";" || end == "，" || end == "、" { return true }
        if w == "to" || w == "of" { return false }
        if prepositions.contains(w) || tailStarts.contains(w) || ["and", "or", "but", "so", "while", "when", "because"].contains(w) {
            return true
        }
        return (w == "a" || w == "an") && i + 1 < words.count && timeUnits.contains(bare(words[i + 1]))
    }

    /// The forms to try, longest first: the whole caption, then shorter at
    /// each phrase boundary, from the last to the first.
    static func forms(_ caption: String) -> [String] {
        let words = caption.split(separator: " ").map(String.init)
        guard !words.isEmpty else { return [] }
        var forms = [caption]
        for i in stride(from: words.count - 1, through: 1, by: -1) where startsTail(words, at: i) {
            let prefix = words[..<i]
            // A tail ends a phrase only if what remains is whole.
            guard let last = prefix.last, endsWell(last), !bare(last).isEmpty else { continue }
            let text = prefix.joined(separator: " ")
            let trimmed = String(text.reversed().drop { $0.isPunctuation || $0 == "-" }.reversed())
            if !forms.contains(trimmed) { forms.append(trimmed) }
        }
        return forms
    }

    // MARK: Fitting

    /// The widest caption line `line` of `lines` may be, as a share of the
    /// side: a round badge's face narrows below its middle, so the second of
    /// two lines, lower, is given less. On a round badge every line's corners
    /// stay within 0.353 of the side from the centre, clear of the accent ring
    /// inside the rim (from 0.365; Composition) by at least 0.012 of the side.
    static func maxWidth(line: Int, of lines: Int, round: Bool) -> Double {
        guard round else { return 0.82 }
        return lines == 1 ? 0.56 : line == 0 ? 0.58 : 0.48
    }

    /// The caption rendered at the largest size at which a form fits on one
    /// line or two, trying each form (longest first) down to the legible
    /// minimum before the next; nil when nothing can be drawn.
    static func fitted(_ forms: [String], fonts: FontStack, size: Double, round: Bool) -> TextImage? {
        for text in forms where !text.isEmpty {
            if let image = fit(text, fonts: fonts, size: size, round: round, down: smallest) { return image }
        }
        // Even the shortest form is too long for the legible minimum: the shortest, smaller.
        guard let last = forms.last(where: { !$0.isEmpty }) else { return nil }
        return fit(last, fonts: fonts, size: size, round: round, down: smallest * 0.7)
    }

    private static func fit(_ text: String, fonts: FontStack, size: Double, round: Bool, down floor: Double) -> TextImage? {
        // A form longer than two lines could hold at the smallest size, were every letter as
        // narrow as 0.45 em (narrower than any caption script's average), is not rendered:
        // a 4000-byte prompt is measured once a form, not a hundred times.
        let room = maxWidth(line: 0, of: 2, round: round) + maxWidth(line: 1, of: 2, round: round)
        guard Double(text.count) * 0.45 * floor <= room else { return nil }
        let halves = split(text, round: round)
        var pixelSize = size * largest
        while pixelSize >= size * floor {
            guard let line = try? fonts.render(text, pixelSize: pixelSize, wordSpacing: wordSpacing), line.box.width > 0 else { return nil }
            if Double(line.box.width) <= size * maxWidth(line: 0, of: 1, round: round) { return line }
            if let (top, bottom) = halves, let a = try? fonts.render(top, pixelSize: pixelSize, wordSpacing: wordSpacing),
               let b = try? fonts.render(bottom, pixelSize: pixelSize, wordSpacing: wordSpacing),
               Double(a.box.width) <= size * maxWidth(line: 0, of: 2, round: round),
               Double(b.box.width) <= size * maxWidth(line: 1, of: 2, round: round) {
                // Baselines 1.18 em apart, further when the script reaches below and above
                // them (Arabic, Devanagari): at least 0.28 em between the lines' ink.
                let inked = Double(a.box.top + a.box.height - b.box.top) + 0.28 * pixelSize
                return TextImage(lines: [a, b], lineHeight: Int(max(pixelSize * 1.18, inked).rounded()))
            }
            pixelSize *= 0.94
        }
        return nil
    }

    /// The text broken into two lines that fill their widths (`maxWidth`)
    /// alike, preferring a break between phrases ("GO TO BED / BEFORE
    /// MIDNIGHT"): at a space, or between any two characters in a script
    /// written without spaces (Chinese, Japanese), never before punctuation;
    /// nil for one word of any other script.
    static func split(_ text: String, round: Bool) -> (String, String)? {
        let characters = Array(text)
        var breaks = characters.indices.filter { $0 > 0 && characters[$0] == " " }
        let spaced = !breaks.isEmpty
        if !spaced {
            guard text.unicodeScalars.contains(where: { (0x3040...0x30FF).contains($0.value) || (0x3400...0x9FFF).contains($0.value) })
            else { return nil }
            breaks = characters.indices.filter { $0 > 0 && !characters[$0].isPunctuation }
        }
        let words = text.split(separator: " ").map(String.init)
        let (top, bottom) = (maxWidth(line: 0, of: 2, round: round), maxWidth(line: 1, of: 2, round: round))
        func score(_ at: Int) -> Double {
            let first = Double(at), second = Double(characters.count - at - (spaced ? 1 : 0))
            var fill = max(first / top, second / bottom)
            if spaced {
                let wordIndex = characters[..<at].filter { $0 == " " }.count + 1
                if characters[at - 1] == "," || (wordIndex < words.count && startsTail(words, at: wordIndex)) { fill *= 0.88 }
            }
            return fill
        }
        guard let best = breaks.min(by: { score($0) < score($1) }) else { return nil }
        let first = String(characters[..<best]), second = String(characters[(spaced ? best + 1 : best)...])
        return first.isEmpty || second.isEmpty ? nil : (first, second)
    }
}
