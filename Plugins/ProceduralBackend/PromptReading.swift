import BadgeKit
import Foundation

/// The motifs the procedural backend can draw.
enum Motif: String, CaseIterable, Sendable {
    case dumbbells, tree, forest, path, book, drop, heart, sun, runner, mountain
    case bicycle, swimmer, meditation, moon, waves, pencil, music, laptop, speech, leaf, cup, coins, globe, camera
    case plane, suitcase, bed, phone, piggyBank = "piggy-bank", pot, sprout, noSmoking = "no-smoking"
    case helpingHands = "helping-hands", storybook, gradCap = "graduation-cap", yoga, boot, language, apple
    case alarmClock = "alarm-clock", palette, paw, tooth, calendar, checklist, house, hourglass, trophy
    case lightbulb, noAlcohol = "no-alcohol", tent, headphones
    case abstract

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
        case .waves, .swimmer: return 198
        case .moon: return 238
        case .leaf: return 110
        case .cup: return 24
        case .coins: return 150
        case .globe: return 205
        case .meditation: return 275
        case .plane: return 205
        case .bed: return 235
        case .piggyBank: return 340
        case .sprout: return 120
        case .apple: return 355
        case .tooth: return 195
        case .tent: return 28
        case .yoga: return 280
        case .boot: return 25
        case .dumbbells, .runner, .abstract, .bicycle, .pencil, .music, .laptop, .speech, .camera: return nil
        case .suitcase, .phone, .pot, .noSmoking, .helpingHands, .storybook, .gradCap, .language, .alarmClock, .palette,
             .paw, .calendar, .checklist, .house, .hourglass, .trophy, .lightbulb, .noAlcohol, .headphones: return nil
        }
    }
}

/// What a prompt says to the art engine: which motif (and which words chose
/// it), which colour words, and the words for the caption.
struct PromptReading: Sendable {
    var motifs: [(Motif, String)]
    /// The motif a clause names as the symbol ("a path as its symbol").
    var symbol: (Motif, String)?
    var colorWords: [String]
    var caption: String
    /// A style the prompt asks for in words ("a minimalist tree") or with a
    /// Midjourney-style flag ("--style sketch").
    var style: BadgeArt.Style?
    var grain = false
    var glow = false
    /// What badge did with flags it cannot honour ("--ar 16:9").
    var notes: [String] = []
    /// Colours in order, pastel, full bleed, a horizon scene.
    var look = LookReading()

    static let styleWords: [String: BadgeArt.Style] = [
        "flat": .flat, "minimalist": .flat, "minimal": .flat, "simple": .flat,
        "sketch": .sketch, "sketched": .sketch, "drawing": .sketch, "drawn": .sketch, "lineart": .sketch, "outline": .sketch,
        "tile": .tile, "square": .tile, "icon": .tile,
        "medal": .medal, "gradient": .medal, "badge": .medal,
    ]
    static let grainWords: Set<String> = ["grain", "grainy", "film", "noise", "noisy", "textured"]
    static let glowWords: Set<String> = ["glow", "glowing", "neon", "shine", "shining", "radiant"]

    /// Vibes, and the mood each is drawn as (`Palette.moods`).
    static let vibes: [String: String] = [
        "calm": "cool", "serene": "pastel", "gentle": "pastel", "joyful": "bright", "playful": "bright",
        "bold": "vivid", "energetic": "vivid", "fierce": "vivid", "cozy": "warm", "hopeful": "dawn", "focused": "dark",
    ]

    /// A clause with one of these words names the symbol to draw: its motif comes first.
    static let metaphorWords: Set<String> = ["symbol", "emblem", "metaphor"]

    /// The prompt's clauses, split at commas and semicolons: each after the
    /// first begins with its separator, so joined they give the text back.
    static func clauses(_ text: String) -> [String] {
        var clauses = [""]
        for character in text {
            if character == "," || character == ";" { clauses.append("") }
            clauses[clauses.count - 1].append(character)
        }
        return clauses
    }

    /// Emoji read as the word for a motif.
    static let emojiWords: [Unicode.Scalar: String] = [
        "🏃": "run", "👟": "run", "🏋": "gym", "💪": "strength", "🌳": "tree", "🌲": "forest", "🥾": "hike", "📚": "book",
        "📖": "book", "💧": "water", "🚰": "water", "❤": "heart", "🧡": "heart", "☀": "sun", "🌅": "sunrise", "⛰": "mountain",
        "🏔": "mountain", "🚴": "bike", "🚲": "bike", "🏊": "swim", "🧘": "yoga", "🌙": "moon", "😴": "sleep", "🛏": "bed",
        "🌊": "wave", "✍": "write", "✏": "pencil", "📝": "journal", "🎵": "music", "🎸": "guitar", "🎹": "piano", "💻": "laptop",
        "💬": "speech", "🗣": "speak", "🍃": "leaf", "🥗": "salad", "🥦": "vegetable", "☕": "coffee", "🍵": "tea", "💰": "money",
        "🪙": "coin", "🐷": "save", "🌍": "world", "🌎": "world", "🌏": "world", "✈": "travel", "📷": "camera", "📸": "photo",
    ]

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
        "run": .runner, "runn": .runner, "jog": .runner, "jogg": .runner, "marathon": .runner, "sprint": .runner, "5k": .runner, "10k": .runner, "race": .runner,
        "mountain": .mountain, "climb": .mountain, "peak": .mountain, "summit": .mountain, "alp": .mountain,
        "bike": .bicycle, "bicycl": .bicycle, "bicycle": .bicycle, "cycle": .bicycle, "cycl": .bicycle, "cycling": .bicycle, "ride": .bicycle,
        "swim": .swimmer, "swimm": .swimmer, "pool": .swimmer,
        "yoga": .meditation, "meditat": .meditation, "meditate": .meditation, "meditation": .meditation, "mindful": .meditation, "breath": .meditation, "calm": .meditation,
        "moon": .moon, "star": .moon, "stars": .moon, "sleep": .moon, "bed": .moon, "bedtim": .moon, "rest": .moon,
        "wave": .waves, "ocean": .waves, "sea": .waves, "surf": .waves, "beach": .waves,
        "write": .pencil, "writ": .pencil, "pen": .pencil, "pencil": .pencil, "journal": .pencil, "diary": .pencil, "poem": .pencil,
        "music": .music, "song": .music, "sing": .music, "guitar": .music, "piano": .music, "cello": .music, "violin": .music,
        "viola": .music, "flute": .music, "drum": .music, "drums": .music, "trumpet": .music, "saxophon": .music, "saxophone": .music,
        "ukulele": .music, "harp": .music, "clarinet": .music, "instrument": .music, "orchestra": .music, "choir": .music,
        "kg": .dumbbells, "kilo": .dumbbells, "kilos": .dumbbells, "kilogram": .dumbbells, "lbs": .dumbbells, "weigh": .dumbbells,
        "code": .laptop, "cod": .laptop, "program": .laptop, "laptop": .laptop, "computer": .laptop, "develop": .laptop, "app": .laptop,
        "speech": .speech, "bubble": .speech, "language": .speech, "languag": .speech, "speak": .speech, "talk": .speech, "spanish": .speech, "french": .speech, "call": .speech,
        "leaf": .leaf, "green": .leaf, "vegetabl": .leaf, "vegan": .leaf, "salad": .leaf, "veggi": .leaf, "eat": .leaf,
        "coffee": .cup, "tea": .cup, "cup": .cup, "mug": .cup,
        "save": .coins, "sav": .coins, "saving": .coins, "money": .coins, "coin": .coins, "budget": .coins, "invest": .coins,
        "travel": .globe, "trip": .globe, "world": .globe, "globe": .globe, "abroad": .globe, "visit": .globe, "fly": .globe,
        "photo": .camera, "photograph": .camera, "camera": .camera, "picture": .camera,
    ]

    /// Words that name a motif, looked up before `lexicon`: the common resolutions' own pictures.
    static let lexicon4: [String: Motif] = [
        "fly": .plane, "flight": .plane, "plane": .plane, "airplane": .plane, "travel": .plane, "travell": .plane,
        "trip": .suitcase, "vacation": .suitcase, "holiday": .suitcase, "suitcas": .suitcase, "suitcase": .suitcase, "pack": .suitcase, "luggag": .suitcase,
        "sleep": .bed, "bed": .bed, "bedtim": .bed, "bedtime": .bed, "nap": .bed, "insomnia": .bed,
        "phone": .phone, "call": .phone, "text": .phone, "telephon": .phone,
        "save": .piggyBank, "sav": .piggyBank, "saving": .piggyBank, "piggy": .piggyBank, "pig": .piggyBank,
        "cook": .pot, "recip": .pot, "recipe": .pot, "meal": .pot, "bake": .pot, "bak": .pot, "kitchen": .pot, "chef": .pot, "dinner": .pot, "soup": .pot,
        "garden": .sprout, "grow": .sprout, "seed": .sprout, "sprout": .sprout, "herb": .sprout, "flower": .sprout, "balcony": .sprout,
        "smok": .noSmoking, "smoke": .noSmoking, "cigarett": .noSmoking, "cigarette": .noSmoking, "vape": .noSmoking, "vap": .noSmoking,
        "nicotin": .noSmoking, "nicotine": .noSmoking, "tobacco": .noSmoking,
        "volunteer": .helpingHands, "charity": .helpingHands, "donat": .helpingHands, "donate": .helpingHands, "help": .helpingHands,
        "give": .helpingHands, "giv": .helpingHands, "kid": .storybook, "kids": .storybook, "child": .storybook, "children": .storybook,
        "son": .storybook, "daughter": .storybook, "story": .storybook, "stori": .storybook, "storybook": .storybook,
        "study": .gradCap, "studi": .gradCap, "exam": .gradCap, "degree": .gradCap, "graduat": .gradCap, "school": .gradCap,
        "university": .gradCap, "graduation": .gradCap, "college": .gradCap, "course": .gradCap, "class": .gradCap, "homework": .gradCap, "diploma": .gradCap,
        "yoga": .yoga, "pilat": .yoga, "pilates": .yoga, "stretch": .yoga,
        "hike": .boot, "hik": .boot, "trek": .boot, "trekk": .boot, "boot": .boot, "boots": .boot,
        "language": .language, "languag": .language, "spanish": .language, "french": .language, "german": .language,
        "italian": .language, "japanese": .language, "chinese": .language, "mandarin": .language, "korean": .language,
        "english": .language, "portuguese": .language, "arabic": .language, "vocabulary": .language, "fluent": .language, "speak": .language,
        "apple": .apple, "fruit": .apple, "diet": .apple, "nutrition": .apple, "snack": .apple, "sugar": .apple,
        "wake": .alarmClock, "wak": .alarmClock, "alarm": .alarmClock, "clock": .alarmClock, "punctual": .alarmClock, "oversleep": .alarmClock,
        "paint": .palette, "art": .palette, "artist": .palette, "watercolour": .palette, "watercolor": .palette, "creativ": .palette,
        "dog": .paw, "puppy": .paw, "pet": .paw, "cat": .paw, "paw": .paw,
        "teeth": .tooth, "tooth": .tooth, "floss": .tooth, "dentist": .tooth, "dental": .tooth,
        "habit": .calendar, "calendar": .calendar, "schedul": .calendar, "schedule": .calendar, "routine": .calendar, "plan": .calendar, "plann": .calendar,
        "todo": .checklist, "list": .checklist, "task": .checklist, "organiz": .checklist, "organis": .checklist, "productiv": .checklist, "checklist": .checklist,
        "home": .house, "house": .house, "clean": .house, "tidy": .house, "declutter": .house, "chore": .house, "chores": .house,
        "time": .hourglass, "patienc": .hourglass, "patience": .hourglass, "procrastinat": .hourglass, "hourglass": .hourglass, "screen": .hourglass,
        "win": .trophy, "trophy": .trophy, "champion": .trophy, "compet": .trophy, "tournament": .trophy, "achiev": .trophy, "goal": .trophy,
        "idea": .lightbulb, "lightbulb": .lightbulb, "bulb": .lightbulb, "ideas": .lightbulb, "invent": .lightbulb, "think": .lightbulb, "brain": .lightbulb, "business": .lightbulb, "startup": .lightbulb,
        "alcohol": .noAlcohol, "sober": .noAlcohol, "beer": .noAlcohol, "wine": .noAlcohol, "booze": .noAlcohol, "drunk": .noAlcohol,
        "camp": .tent, "tent": .tent, "outdoor": .tent, "outdoors": .tent,
        "podcast": .headphones, "listen": .headphones, "audiobook": .headphones, "headphon": .headphones,
    ]

    /// Motifs that say more than another the prompt also names:
    /// "Read to my kids" is a storybook, "Drink less alcohol" no alcohol.
    static let outranks: [Motif: Set<Motif>] = [
        .storybook: [.book, .heart], .noAlcohol: [.drop], .noSmoking: [.heart], .language: [.speech, .book, .gradCap],
        .helpingHands: [.heart], .tooth: [.sun], .yoga: [.meditation], .sprout: [.leaf],
    ]

    /// The motif a word names.
    static func motif(for word: String) -> Motif? {
        lexicon4[word] ?? lexicon4[stem(word)] ?? lexicon[word] ?? lexicon[stem(word)]
    }

    /// Words that suggest a motif only when nothing more specific does:
    /// "Learn the guitar" is about music, not books.
    static let weak: Set<String> = ["learn", "study", "walk", "eat", "call", "health", "healthy", "fit", "app", "kind", "rest", "early", "earli",
                                    "time", "plan", "list", "give", "help", "goal", "text", "home", "class", "pack", "art", "win",
                                    "think", "stretch", "grow"]

    /// Words a caption does not start with ("A pair of dumbbells" reads "PAIR OF DUMBBELLS").
    /// In Spanish, French, German, Portuguese and Dutch, the future's "I will" too
    /// ("voy a", "je vais", "ich werde", "eu vou", "ik ga", "ik zal").
    static let leading: Set<String> = ["a", "an", "the", "to", "i", "will", "my", "i'll", "yo", "voy", "je", "vais", "ich", "werde",
                                       "eu", "vou", "ik", "ga", "zal"]

    init(_ prompt: String) {
        let (text, flags) = Self.separateFlags(prompt)
        // Emoji are motif hints ("🏃" reads "run"), never caption.
        let hints = text.unicodeScalars.compactMap { Self.emojiWords[$0] }
        let words = hints + Self.words(text)
        // Words of adverbials of time, place and duration ("every morning", "thirty minutes",
        // "before my trip to Kyoto"): a motif they name comes after the verb's and its object's.
        let adverbial = Set(Self.adverbialWords(in: text).map { $0 + hints.count })
        var motifs: [(Motif, String)] = []
        var incidental: Set<String> = []
        for (i, word) in words.enumerated() {
            if let motif = Self.motif(for: word), !motifs.contains(where: { $0.0 == motif }) {
                motifs.append((motif, word))
                if adverbial.contains(i) { incidental.insert(word) }
            }
            if style == nil, let named = Self.styleWords[word] { style = named }
            if Self.grainWords.contains(word) { grain = true }
            if Self.glowWords.contains(word) { glow = true }
        }
        // Colour words of other languages are read as the English ones ("azul marino" is navy).
        let colourWords = ColourWords.isEnglish(words) ? words : ColourWords.translated(words)
        var colors: [String] = []
        var skipNext = false
        for (i, word) in colourWords.enumerated() {
            let skipping = skipNext
            skipNext = false
            if i + 1 < colourWords.count, CSSColors.named[word + colourWords[i + 1]] != nil {
                colors.append(word + colourWords[i + 1])  // "sea green" is seagreen
                skipNext = true
            } else if !skipping, !LookReading.isTime(colourWords, at: i),
                      Palette.named[word] != nil || Palette.moods[word] != nil || CSSColors.named[word] != nil || Self.vibes[word] != nil {
                colors.append(word)
            }
        }
        var weakWords: Set<String> = []
        if motifs.isEmpty {
            Self.readOtherLanguages(text, words: words, adverbial: adverbial, into: &motifs, weak: &weakWords, incidental: &incidental)
        }
        self.weakWords = weakWords
        self.incidental = incidental
        // The symbol the prompt names ("a path as its symbol") is drawn, whatever else it mentions.
        let named = Set(Self.clauses(text).map(Self.words).filter { $0.contains(where: Self.metaphorWords.contains) }.joined())
        symbol = motifs.first { named.contains($0.1) }
        look = LookReading(text: text)
        // Composition words ("edge-to-edge", "no borders") win over style words ("minimalist").
        if look.fullBleed { style = .tile }
        self.motifs = motifs
        colorWords = colors
        caption = Caption.words(of: text, flags: flags)
        notes += Self.undrawnMoods(in: words)
        for (name, value) in flags {
            switch name {
            case "ar", "aspect":
                if value != "1:1" { notes.append("--ar \(value) ignored: a badge is always square") }
            case "style":
                if let named = BadgeArt.Style(rawValue: value.lowercased()) {
                    style = named
                } else {
                    notes.append("--style \(value) is not a procedural style; known: \(BadgeArt.Style.allCases.map(\.rawValue).joined(separator: ", "))")
                }
            default:
                notes.append("--\(name) ignored: the procedural backend knows --ar and --style")
            }
        }
    }

    /// English function words: a prompt with one is read as English, and its
    /// words are not looked up in other Latin-script languages ("course" is
    /// not French "cour-", to run).
    static let englishWords: Set<String> = ["the", "to", "my", "every", "and", "of", "with", "more", "less", "i", "will", "your", "at",
                                            "for", "each", "day", "week", "before", "after", "our"]

    /// The motifs a promise names in another language (MotifWords): its words
    /// by stem, and Chinese, Japanese and Korean text by substring.
    private static func readOtherLanguages(
        _ text: String, words: [String], adverbial: Set<Int>, into motifs: inout [(Motif, String)], weak weakWords: inout Set<String>,
        incidental: inout Set<String>
    ) {
        let english = words.contains(where: englishWords.contains)
        for (i, word) in words.enumerated() {
            if english && word.unicodeScalars.allSatisfy({ $0.value < 0x250 }) { continue }
            guard let (motif, weak) = MotifWords.motif(for: word), !motifs.contains(where: { $0.0 == motif }) else { continue }
            motifs.append((motif, word))
            if weak { weakWords.insert(word) }
            if adverbial.contains(i) { incidental.insert(word) }
        }
        for (motif, key, weak) in MotifWords.unspacedMotifs(in: text) where !motifs.contains(where: { $0.0 == motif }) {
            motifs.append((motif, key))
            if weak { weakWords.insert(key) }
        }
    }

    /// Words of other languages read here that say little alone (MotifWords.weak).
    var weakWords: Set<String> = []

    /// Words that chose a motif inside an adverbial of time, place or duration
    /// ("every morning", "thirty minutes", "avant mon voyage à Kyoto").
    var incidental: Set<String> = []

    /// Whether a word that chose a motif says little alone.
    func isWeak(_ word: String) -> Bool { Self.weak.contains(word) || weakWords.contains(word) }

    /// Splits Midjourney-style flags ("--ar 16:9", "--style raw") off the prompt.
    static func separateFlags(_ prompt: String) -> (text: String, flags: [(String, String)]) {
        var kept: [Substring] = []
        var flags: [(String, String)] = []
        var tokens = prompt.split(whereSeparator: \.isWhitespace)[...]
        while let token = tokens.popFirst() {
            guard token.hasPrefix("--"), token.count > 2 else {
                kept.append(token)
                continue
            }
            var value = ""
            if let next = tokens.first, !next.hasPrefix("--") {
                value = String(next)
                tokens.removeFirst()
            }
            flags.append((token.dropFirst(2).lowercased(), value))
        }
        return (kept.joined(separator: " "), flags)
    }

    /// The motif to draw: the symbol the prompt names, even by a weak word
    /// ("a walk as its symbol"), unless it is part of a composed scene ("a
    /// path through a forest"); then composed scenes, the first motif a
    /// specific word chose, one a weak word chose.
    var scene: (Motif, [String]) {
        let composed = motifs.first(where: { $0.0 == .path }).flatMap { path in
            motifs.first(where: { $0.0 == .forest || $0.0 == .tree }).map { (path, $0) }
        }
        if let symbol, composed == nil || ![.path, .forest, .tree].contains(symbol.0) {
            return (symbol.0, [symbol.1])
        }
        if let (path, trees) = composed {
            return (.path, [path.1, trees.1])
        }
        // The verb's and its object's motifs before an adverbial's; among them, a specific word's before a weak one's.
        let central = motifs.filter { !incidental.contains($0.1) }
        let candidates = central.isEmpty ? motifs : central
        let strong = candidates.filter { !isWeak($0.1) }
        if let first = strong.first ?? candidates.first {
            if let better = candidates.first(where: { Self.outranks[$0.0]?.contains(first.0) == true }) { return (better.0, [better.1]) }
            return (first.0, [first.1])
        }
        return (.abstract, [])
    }

    /// Prepositions that begin an adverbial of time or place, in English,
    /// Spanish, French, German, Italian, Portuguese and Dutch (without accents,
    /// as `Caption.plain` writes them). Not "on" ("less time on my phone") nor
    /// "to", "for", "with": those introduce what the promise is about.
    static let adverbialPrepositions: Set<String> = [
        "before", "after", "until", "till", "by", "during", "in", "at", "near", "around", "since", "within",
        "antes", "despues", "durante", "hasta", "desde", "en", "tras",
        "avant", "apres", "pendant", "jusqu", "depuis", "dans", "durant",
        "vor", "nach", "bis", "wahrend", "seit", "im", "am", "um",
        "prima", "dopo", "fino", "entro", "nel", "nella", "nei", "nelle",
        "depois", "ate", "em", "no", "na", "nos", "nas",
        "voor", "tot", "tijdens", "sinds", "binnen",
    ]

    /// Words that begin an adverbial of frequency or time ("every morning",
    /// "jeden Morgen", "cette année", "next summer").
    static let frequencyWords: Set<String> = [
        "every", "each", "next", "this", "last", "jeden", "jede", "jedes", "jedem", "jeder", "diesen", "dieses", "diese", "nachsten",
        "kommenden", "chaque", "tous", "toutes", "cette", "ce", "cet", "prochain", "prochaine", "cada", "todos", "todas", "este",
        "esta", "proximo", "proxima", "ogni", "tutti", "tutte", "questo", "questa", "prossimo", "prossima", "esse", "essa", "neste",
        "nesta", "elke", "elk", "iedere", "ieder", "alle", "deze", "dit", "volgende", "komende",
    ]

    /// Adverbs of time that are an adverbial alone.
    static let timeAdverbs: Set<String> = [
        "daily", "weekly", "monthly", "nightly", "tonight", "tomorrow", "today", "taglich", "morgens", "abends", "diariamente",
        "quotidiennement", "quotidianamente", "dagelijks", "wekelijks",
    ]

    /// Words that join a noun to its complement inside one noun phrase ("mon voyage à Kyoto", "the end of summer").
    static let linkers: Set<String> = ["a", "de", "of", "to", "du", "des", "d", "di", "do", "da", "del", "della", "van", "von", "der", "al"]

    /// The indices, in `words(text)`, of the words of adverbials of time,
    /// place and duration: a preposition of time or place, or a word of
    /// frequency, and the noun phrase after it ("before my trip to Kyoto",
    /// "every morning", "vor der Arbeit"); a number and a unit of time
    /// ("thirty minutes", "dreißig Minuten"); an adverb of time ("daily").
    static func adverbialWords(in text: String) -> [Int] {
        var marked: [Int] = []
        var offset = 0
        for clause in clauses(text) {
            let words = Self.words(clause).map(Caption.plain)
            func isNumber(_ word: String) -> Bool {
                (!word.isEmpty && word.allSatisfy(\.isNumber)) || Caption.numberWords.contains(word)
            }
            // The index after the noun phrase that starts at `start`: determiners and numbers, a
            // word, and what a linker joins to it.
            func phraseEnd(from start: Int) -> Int {
                var k = start
                while true {
                    while k < words.count, Caption.articles.contains(words[k]) || linkers.contains(words[k]) || isNumber(words[k]) { k += 1 }
                    guard k < words.count else { return k }
                    k += 1
                    guard k + 1 < words.count, linkers.contains(words[k]) else { return k }
                    k += 1
                }
            }
            var i = 0
            while i < words.count {
                let word = words[i]
                var end = i
                if adverbialPrepositions.contains(word) || frequencyWords.contains(word) {
                    end = phraseEnd(from: i + 1)
                } else if isNumber(word), i + 1 < words.count, Caption.timeUnits.contains(words[i + 1]) {
                    end = i + 2
                } else if timeAdverbs.contains(word) {
                    end = i + 1
                }
                if end > i {
                    marked += (i..<end).map { $0 + offset }
                    i = end
                } else {
                    i += 1
                }
            }
            offset += words.count
        }
        return marked
    }

    /// Motifs that can stand behind another as a faint backdrop: "Run at sunrise"
    /// puts the runner in front of the sun.
    static let backdrops: [Motif] = [.sun, .moon, .mountain, .waves, .forest, .globe]

    /// A second motif to draw faintly behind the scene's, and the word that chose it.
    var backdrop: (Motif, String)? {
        let (main, _) = scene
        guard main != .abstract, main != .path else { return nil }
        return motifs.first { Self.backdrops.contains($0.0) && $0.0 != main && !isWeak($0.1) }
    }

    /// Lower-case words of letters and digits, any script.
    static func words(_ text: String) -> [String] {
        text.lowercased().split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }

    /// Notes for the moods a prompt asks for that are not drawn ("chill mood",
    /// "sparkly vibe"): a word before "mood" or "vibe" that is no vibe, mood or
    /// colour. Each names the vibe that draws it, when one does.
    static func undrawnMoods(in words: [String]) -> [String] {
        var notes: [String] = []
        for (i, word) in words.enumerated().dropFirst() where word == "mood" || word == "vibe" || word == "vibes" {
            let named = words[i - 1]
            guard vibes[named] == nil, Palette.moods[named] == nil, Palette.named[named] == nil, CSSColors.named[named] == nil,
                  !LookReading.descriptive.keys.contains(named) else { continue }
            let nearest = PromptComposer.vibeSynonyms[named] ?? ConfigObject.closest(to: named, in: PromptComposer.vibes)
            notes.append("\"\(named) \(word)\" is not drawn: \(named) is no mood the procedural backend knows"
                         + (nearest.map { "; write \"\($0) \(word)\"" } ?? "; its vibes: \(PromptComposer.vibes.joined(separator: ", "))"))
        }
        return notes
    }

    /// A light stemmer: enough for run/running/runner/runs and read/reading.
    static func stem(_ word: String) -> String {
        for suffix in ["ning", "ing", "ers", "er", "es", "ed", "s", "y"] where word.count > suffix.count + 2 && word.hasSuffix(suffix) {
            return String(word.dropLast(suffix.count))
        }
        return word
    }
}
