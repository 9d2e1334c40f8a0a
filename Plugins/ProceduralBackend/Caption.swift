import Canvas
import Foundation

/// The caption: the promise in the user's own words, in any script. No word
/// inside a phrase is dropped (a leading "a", "the" or "I will" may go); words
/// that only describe the picture (colours, moods, styles, composition) are
/// left out, and a prompt that describes a picture rather than promising
/// something gets none. It is fitted on up to two balanced lines, then smaller
/// down to a legible minimum, and only then shortened, at a phrase boundary
/// ("every month", "before midnight"), to at least three words, never ending
/// on a preposition, article, conjunction or bare number.
enum Caption {
    /// The largest caption, and the legible minimum: 4.6% of the badge's side
    /// (23 px on a 512-px badge, cap height ~17 px; 47 px at 1024).
    static let largest = 0.068, smallest = 0.046
    /// More room between words than the font gives, in ems: bold capitals
    /// set close read as one word (OCR read "A NIGHT" as "ANIGHT").
    static let wordSpacing = 0.2

    // MARK: The words

    /// The promise's words for the caption, upper case ("" when the prompt
    /// asks for no text or describes a picture). `flags`: the Midjourney-style
    /// flags taken off the prompt ("--ar 1:1" says a picture is described).
    static func words(of prompt: String, flags: [(String, String)] = []) -> String {
        if asksForNoText(prompt) || describesAnImage(prompt, flags: flags) { return "" }
        var text = String(String.UnicodeScalarView(prompt.unicodeScalars.filter { !isEmoji($0) && $0.properties.generalCategory != .control }))
        if mayHoldCompositionPhrase(text) {
            for phrase in compositionPhrases {
                text = phrase.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: ",")
            }
        }
        // The first clause is the promise; a later one is kept when nothing in it describes the picture.
        let clauses = PromptReading.clauses(text)
        var kept = [clauses[0]]
        for clause in clauses.dropFirst() where !describesPicture(PromptReading.words(clause)) {
            kept.append(clause)
        }
        var words = kept.joined().split(whereSeparator: \.isWhitespace).map(String.init).filter { !bare($0).isEmpty || $0 == "&" }
        // Style words that only ever describe a picture go wherever they are; before a colour
        // ("pastel lavender"), with the colour's run below.
        words = words.enumerated().filter { i, word in
            !lookOnly.contains(bare(word)) || (i + 1 < words.count && isLook(bare(words[i + 1])) && !lookOnly.contains(bare(words[i + 1])))
        }.map(\.element)
        // "I will", "To", "A": the promise starts after them.
        while let first = words.first, words.count > 1, PromptReading.leading.contains(bare(first)) {
            words.removeFirst()
        }
        let before = words.count
        words = droppingLookRuns(words).filter { !lookOnly.contains(bare($0)) }
        // What removing the look words may leave hanging ("... and", "CYCLE TO WORK IN").
        while let last = words.last, words.count > 1, articles.contains(bare(last)) || conjunctions.contains(bare(last))
            || (words.count < before && prepositions.contains(bare(last))) {
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
    /// Compiled once, when a prompt may hold one (`mayHoldCompositionPhrase`):
    /// ICU compiles the seven case-insensitive patterns in ~2.5 ms, a tenth
    /// of a badge's drawing.
    static let compositionPhrases = [
        #"\bedge[- ]to[- ]edge\b"#, #"\bfull[- ]bleed\b"#, #"\bfull[- ]square\b"#, #"\bborderless\b"#, #"\bframeless\b"#,
        #"\bno (rounded )?(borders?|corners|frames?)\b"#, #"\bwithout (a )?(borders?|frames?)\b"#,
    ].map { pattern in
        // Fixed patterns: a typo fails every caption test, never a user's prompt.
        try! NSRegularExpression(pattern: pattern, options: .caseInsensitive)
    }

    /// False only when no composition phrase can match `text`: it is ASCII
    /// (where ICU's case-insensitive match is ASCII's) and holds none of the
    /// words every phrase has one of. Any other script goes to ICU, whose
    /// case folding matches more than ASCII's ("ſ" is an "s").
    static func mayHoldCompositionPhrase(_ text: String) -> Bool {
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return true }
        let lower = text.lowercased()
        return ["edge", "bleed", "square", "border", "corner", "frame"].contains { lower.contains($0) }
    }

    /// Words that only ever describe a picture, dropped wherever they are.
    static let lookOnly: Set<String> = ["minimalist", "minimal", "grainy", "glowing", "textured", "sketched", "lineart", "pastel",
                                        "photorealistic", "hyperrealistic", "hyperdetailed"]

    /// Words about the picture as a picture ("the composition", "8k resolution"):
    /// a later clause with one describes the picture. Not look words inside a
    /// sentence: "Learn graphic design" is a promise.
    static let pictureWords: Set<String> = [
        "design", "composition", "resolution", "8k", "4k", "uhd", "render", "rendering", "rendered", "illustration", "artwork",
        "wallpaper", "vector", "graphic", "backdrop", "background", "surface", "aspect", "ratio", "depiction", "detailed",
    ]

    /// What a picture is called when a prompt describes one ("a minimalist graphic design of a sunrise").
    static let pictureNouns: Set<String> = [
        "design", "illustration", "image", "render", "rendering", "logo", "icon", "poster", "painting", "artwork", "composition",
        "graphic", "wallpaper", "vector", "picture", "photo", "photograph", "drawing", "sketch", "scene",
        "depiction", "view",
    ]

    /// Words that may stand between "a" and the picture's name ("a minimalist abstract graphic design").
    static let pictureAdjectives: Set<String> = [
        "minimalist", "minimal", "abstract", "flat", "simple", "modern", "clean", "geometric", "graphic", "vector", "digital",
        "bold", "colourful", "colorful", "vibrant", "isometric", "stylised", "stylized", "detailed", "beautiful", "serene",
        "3d", "2d", "retro", "vintage", "elegant", "playful", "watercolour", "watercolor", "cinematic", "square", "round",
    ]

    /// Signs that a prompt describes a picture: "--ar 1:1", "8k resolution", "the composition".
    static let pictureMarks: Set<String> = ["composition", "resolution", "8k", "4k", "uhd", "render", "rendered", "artstation", "octane",
                                            "aspect"]

    /// A prompt that describes a picture rather than promising something: it
    /// starts by naming one ("A minimalist abstract graphic design of a
    /// sunrise", "An illustration of..."), or it carries two marks of a
    /// picture's making ("The composition is a full square ... 8k resolution",
    /// "--ar 1:1").
    static func describesAnImage(_ prompt: String, flags: [(String, String)] = []) -> Bool {
        let words = PromptReading.words(prompt)
        var i = 0
        if let first = words.first, ["a", "an", "the"].contains(first) { i = 1 }
        while i < words.count, pictureAdjectives.contains(words[i]) || isLook(words[i]) && !pictureNouns.contains(words[i]) { i += 1 }
        // "design of", "illustration showing", a picture noun with nothing after it.
        if i > 0, i < words.count, pictureNouns.contains(words[i]) {
            let next = i + 1 < words.count ? words[i + 1] : nil
            if next == nil || ["of", "showing", "depicting", "with", "featuring", "in"].contains(next!) { return true }
        }
        // "8k resolution" is one mark.
        var marks = Set(words.filter(pictureMarks.contains).map { ["8k", "4k", "uhd"].contains($0) ? "resolution" : $0 })
        if flags.contains(where: { ["ar", "aspect", "v", "q", "stylize", "chaos"].contains($0.0) }) { marks.insert("--flag") }
        return marks.count >= 2
    }

    /// Words that name a part of the picture's description ("teal palette").
    static let stageNames: Set<String> = ["mood", "vibe", "palette", "tone", "tones", "colour", "colours", "color", "colors", "style"]

    /// A word about the picture's look or feel: a colour, mood, vibe, style, texture.
    static func isLook(_ word: String) -> Bool {
        Palette.named[word] != nil || Palette.moods[word] != nil || CSSColors.named[word] != nil || LookReading.descriptive[word] != nil
            || PromptReading.vibes[word] != nil || ColourWords.isColour(word)
            || PromptReading.styleWords[word] != nil || PromptReading.grainWords.contains(word) || PromptReading.glowWords.contains(word)
            || stageNames.contains(word) || lookOnly.contains(word)
    }

    /// A later clause that names a colour, a mood, a style or the symbol describes the picture.
    static func describesPicture(_ clause: [String]) -> Bool {
        clause.isEmpty || clause.contains { isLook($0) || pictureWords.contains($0) || PromptReading.metaphorWords.contains($0) }
    }

    /// Words a run of look words holds besides them ("in teal and coral", "in a teal palette").
    static let lookJoiners: Set<String> = Set([
        "and", "in", "with", "&", "a", "an", "the", "of", "shades", "soft", "pale", "light", "deep", "muted", "rich", "dark",
        "en", "em", "im", "dans", "con", "avec", "mit", "met", "com", "y", "et", "und", "e", "el", "la", "le", "il", "o", "de", "di",
        "tonos", "tons", "tinten", "toni", "tonen",
    ]).union(ColourWords.lighteners).union(ColourWords.darkeners).union(ColourWords.marine)

    /// Prepositions that introduce a colour ("in lavender", "en azul marino", "in Blau"): a
    /// colour after one that ends its clause leaves the caption with it.
    static let colourPrepositions: Set<String> = ["in", "en", "em", "im", "dans", "with", "con", "avec", "mit", "met", "com"]

    /// Words that are colours only, never a thing ("forest", "ocean" or "gold" may be the promise's own).
    static func isColourOnly(_ word: String) -> Bool {
        LookReading.basicTerms.contains(word) || ColourWords.english[word] != nil || ColourWords.compound(word) != nil
            || ["navy", "teal", "lavender", "turquoise", "crimson", "indigo", "violet", "magenta", "cyan", "beige", "maroon", "scarlet",
                "burgundy", "mauve", "lilac", "pastel"].contains(word)
    }

    /// Prepositions of time and place: a colour after one is its object and
    /// belongs to the promise ("before midnight", "under a blue sky").
    static let timeAndPlace: Set<String> = [
        "before", "after", "until", "till", "by", "at", "under", "beneath", "below", "above", "over", "past", "around", "near",
        "beside", "across", "through", "on", "from", "to", "into", "towards", "toward",
    ]

    /// Cuts runs of look words, at the end or inside the promise ("... teal coral
    /// palette", "... in teal and coral", "Paint the fence in teal and coral
    /// colours every summer"): a run that names the stage ("palette") or holds
    /// two looks. A lone colour may be the promise's own ("Eat less chocolate"),
    /// and a run after a preposition of time or place is its object ("before
    /// midnight", "under a deep blue sky"), unless it names the stage.
    static func droppingLookRuns(_ words: [String]) -> [String] {
        var kept: [String] = []
        var i = 0
        while i < words.count {
            // A run starts at a look word, or at "in"/"with" and the articles before one.
            var j = i
            while j < words.count, lookJoiners.contains(bare(words[j])), !["and", "&", "y", "et", "und", "e", "o"].contains(bare(words[j])) { j += 1 }
            guard j < words.count, isLook(bare(words[j])) else {
                kept.append(words[i])
                i += 1
                continue
            }
            // The object of a time or place phrase ("before midnight") is the promise's;
            // a run of look words after it is looked at afresh.
            if let last = kept.last, timeAndPlace.contains(bare(last)) {
                kept.append(contentsOf: words[i...j])
                i = j + 1
                continue
            }
            var end = j, looks = 0, staged = false, lastLook = j
            while end < words.count {
                let word = bare(words[end])
                if isLook(word) {
                    looks += 1
                    lastLook = end
                    if stageNames.contains(word) { staged = true }
                } else if !lookJoiners.contains(word) {
                    break
                }
                // A clause ends the run ("in teal, every day").
                if let mark = words[end].last, mark == "," || mark == ";" { end += 1; break }
                end += 1
            }
            end = lastLook + 1
            // Its modifiers after it ("azul marino", "vert foncé").
            while end < words.count, ColourWords.isModifier(bare(words[end])), words[end - 1].last.map({ $0 == "," || $0 == ";" }) != true {
                end += 1
            }
            // A colour that a preposition introduced ("in lavender", "en azul") at the end of its clause.
            let clauseEnds = end == words.count || words[end - 1].last.map { $0 == "," || $0 == ";" } == true
            let introduced = i > 0 && colourPrepositions.contains(bare(words[i])) && clauseEnds
                && words[j...lastLook].contains { isColourOnly(bare($0)) }
            if (staged || looks >= 2 || introduced) && (i > 0 || end < words.count) {
                // Punctuation after the run stays with what came before.
                if let mark = words[end - 1].last, mark == "," || mark == ";", var last = kept.popLast() {
                    last.append(mark)
                    kept.append(last)
                }
                i = end
            } else {
                kept.append(contentsOf: words[i..<end])
                i = end
            }
        }
        return kept
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

    /// Lower case, without punctuation or accents: the form the word lists
    /// below are matched in (a Greek capital caption has lost its tonos).
    static func plain(_ word: String) -> String {
        bare(word).folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil)
    }

    // MARK: Shortening

    // The small words below are English, Spanish, French, German, Italian, Portuguese, Dutch,
    // Russian and Greek, without accents (`plain`). A word two languages share is in the set of
    // either: "de" is a preposition and, in Dutch, an article; a caption ends on neither.
    static let prepositions: Set<String> = [
        "to", "of", "for", "at", "in", "on", "with", "without", "by", "from", "into", "onto", "over", "under", "before", "after",
        "around", "through", "about", "across", "per", "until", "till", "during", "between", "towards", "toward", "than", "like",
        "near", "since", "beside", "beneath", "below", "above", "past",
        // Spanish
        "a", "al", "de", "del", "en", "con", "sin", "para", "por", "desde", "hasta", "antes", "despues", "durante", "sobre", "entre",
        "hacia", "contra", "tras", "bajo", "segun",
        // French
        "du", "d", "dans", "avec", "sans", "pour", "par", "sur", "sous", "avant", "apres", "pendant", "depuis", "jusqu", "vers",
        "chez", "au", "aux", "contre", "durant",
        // German
        "zu", "zum", "zur", "mit", "ohne", "fur", "von", "vom", "bei", "beim", "nach", "vor", "im", "am", "auf", "aus", "bis",
        "wahrend", "seit", "uber", "unter", "um", "gegen", "durch", "ins", "ans", "ab",
        // Italian
        "di", "da", "su", "tra", "fra", "senza", "prima", "dopo", "fino", "entro", "verso", "allo", "alla", "ai", "agli", "alle",
        "dello", "della", "dei", "degli", "delle", "nel", "nello", "nella", "nei", "negli", "nelle", "dal", "dalla", "dai", "sul",
        "sulla", "col",
        // Portuguese
        "do", "dos", "das", "em", "no", "na", "nos", "nas", "sem", "pra", "pelo", "pela", "pelos", "pelas", "depois", "ate", "ao",
        "aos", "num", "numa",
        // Dutch
        "te", "van", "voor", "met", "zonder", "op", "aan", "bij", "naar", "uit", "om", "tot", "tijdens", "sinds", "onder", "tegen",
        "tussen", "vanaf", "binnen",
        "в", "во", "на", "с", "со", "к", "ко", "по", "до", "после", "перед", "для", "без", "через", "за", "под", "над", "о", "об",
        "от", "из", "у", "при", "про", "около", "вокруг", "вместе", "между",
        "σε", "στο", "στη", "στην", "στον", "στα", "στις", "στους", "με", "για", "απο", "χωρις", "πριν", "μετα", "μεχρι", "κατα",
        "προς", "να",
    ]
    static let articles: Set<String> = [
        "a", "an", "the", "my", "your", "our", "their", "his", "her", "its", "some", "every", "each",
        // Spanish
        "el", "la", "los", "las", "un", "una", "unos", "unas", "mi", "mis", "tu", "tus", "su", "sus", "nuestro", "nuestra",
        "nuestros", "nuestras", "este", "esta", "estos", "estas", "ese", "esa", "cada",
        // French
        "le", "les", "l", "une", "des", "mon", "ma", "mes", "ton", "ta", "tes", "sa", "ses", "notre", "nos", "votre", "vos", "leur",
        "leurs", "ce", "cet", "cette", "ces", "chaque",
        // German
        "der", "die", "das", "den", "dem", "ein", "eine", "einen", "einem", "einer", "eines", "mein", "meine", "meinen",
        "meinem", "meiner", "dein", "deine", "seine", "seinen", "seinem", "ihr", "ihre", "ihren", "ihrem", "unser", "unsere",
        "unseren", "jeden", "jede", "jedes", "jedem", "jeder", "diesen", "diese", "dieses", "diesem",
        // Italian
        "il", "lo", "i", "gli", "uno", "mio", "mia", "miei", "mie", "tuo", "tua", "suo", "sua", "suoi", "nostro", "nostra", "ogni",
        "questo", "questa", "questi", "queste",
        // Portuguese
        "o", "os", "as", "um", "uma", "uns", "umas", "meu", "minha", "meus", "minhas", "seu", "seus", "suas", "nosso", "nossa",
        "esse", "essa", "neste", "nesta",
        // Dutch
        "het", "een", "mijn", "je", "jouw", "zijn", "haar", "ons", "onze", "elke", "elk", "ieder", "iedere", "deze", "dit",
        "мой", "моя", "моё", "мое", "мои", "мою", "моей", "моим", "моих", "каждый", "каждое", "каждую", "каждой", "каждые", "свой",
        "свою", "свои", "своей", "своим", "этот", "эту", "это",
        "ο", "η", "το", "οι", "τα", "του", "της", "των", "τον", "την", "ενα", "μια", "εναν", "μου", "σου", "μας", "καθε",
    ]
    static let conjunctions: Set<String> = [
        "and", "or", "but", "so", "nor", "yet", "then", "&", "while", "when", "because", "if",
        "y", "e", "u", "pero", "porque", "cuando", "si", "mientras",
        "et", "ou", "mais", "donc", "quand", "parce", "lorsque", "puis",
        "und", "oder", "aber", "weil", "wenn", "dass", "damit", "sondern", "denn", "als", "sowie",
        "ed", "ma", "perche", "se", "mentre", "oppure",
        "mas", "enquanto", "quando",
        "en", "maar", "omdat", "wanneer", "terwijl", "zodat",
        "и", "или", "но", "а", "чтобы", "что", "когда", "пока", "если", "потому",
        "και", "η", "αλλα", "οταν", "ωστε", "αν", "επειδη", "ενω",
    ]
    /// Words that begin a clause of their own inside a sentence ("... the novel
    /// I have been planning", "... a garden that feeds us").
    static let clauseStarts: Set<String> = [
        "i", "we", "you", "he", "she", "they", "that", "which", "who", "whom", "whose", "where",
        "que", "quien", "donde", "yo", "nosotros", "qui", "dont", "je", "nous", "ich", "wir", "welche", "welcher", "welches",
        "che", "chi", "io", "noi", "quem", "onde", "eu", "ik", "wij", "dat", "wat", "waar",
        "я", "мы", "который", "которую", "которое", "которые", "которой", "где",
        "που", "οπου", "εγω",
    ]
    static let numberWords: Set<String> = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "fifteen", "twenty",
        "thirty", "forty", "fifty", "hundred", "thousand", "half", "once", "twice",
        "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve", "diez", "quince", "veinte", "treinta", "cuarenta",
        "cincuenta", "cien", "mil",
        "deux", "trois", "quatre", "cinq", "sept", "huit", "neuf", "dix", "quinze", "vingt", "trente", "quarante", "cinquante",
        "mille", "demi", "demie",
        "eins", "zwei", "drei", "vier", "funf", "sechs", "sieben", "acht", "neun", "zehn", "zwanzig", "dreißig", "dreissig",
        "vierzig", "funfzig", "hundert", "tausend", "halbe", "halben",
        "quattro", "cinque", "sei", "sette", "otto", "nove", "dieci", "venti", "trenta", "quaranta", "cinquanta", "cento",
        "mezza", "mezzo",
        "dois", "duas", "quatro", "sete", "oito", "dez", "vinte", "trinta", "quarenta", "cinquenta", "cem", "meia",
        "twee", "drie", "vijf", "zes", "zeven", "negen", "tien", "twintig", "dertig", "veertig", "vijftig", "honderd", "duizend",
        "halve",
    ]
    /// Words that begin an adverbial tail ("every month", "daily", "cada semana", "jeden Morgen").
    static let tailStarts: Set<String> = [
        "every", "each", "daily", "weekly", "monthly", "nightly", "yearly", "everyday", "today", "tonight", "tomorrow",
        "this", "next", "once", "twice", "again", "instead", "together", "more", "regularly", "always", "enough",
        "cada", "todos", "todas", "siempre", "hoy", "manana", "diariamente", "este", "esta", "otra", "juntos", "bastante",
        "chaque", "tous", "toutes", "toujours", "aujourd", "demain", "ce", "cette", "cet", "encore", "assez",
        "jeden", "jede", "jedes", "jedem", "taglich", "immer", "heute", "morgen", "morgens", "abends", "diesen", "dieses", "diese",
        "wieder", "zusammen", "genug", "regelmaßig", "regelmassig",
        "ogni", "tutti", "tutte", "sempre", "oggi", "domani", "questo", "questa", "insieme", "abbastanza", "ancora",
        "hoje", "amanha", "neste", "nesta", "juntas", "novamente",
        "elke", "elk", "iedere", "altijd", "vandaag", "deze", "dit", "dagelijks", "weer", "opnieuw", "samen", "genoeg",
        "каждый", "каждое", "каждую", "каждой", "каждые", "ежедневно", "всегда", "даже", "снова",
        "καθε", "παντα", "ξανα", "ακομα", "καθημερινα",
    ]
    static let timeUnits: Set<String> = [
        "day", "days", "week", "weeks", "month", "months", "year", "years", "night", "nights", "morning", "mornings", "evening",
        "evenings", "weekend", "weekends", "minute", "minutes", "hour", "hours", "min", "mins",
        "dia", "dias", "semana", "semanas", "mes", "meses", "ano", "anos", "noche", "noches", "manana", "mananas", "tarde",
        "minuto", "minutos", "hora", "horas",
        "jour", "jours", "semaine", "semaines", "mois", "an", "ans", "annee", "annees", "soir", "soirs", "matin", "matins", "nuit",
        "nuits", "heure", "heures",
        "tag", "tage", "tagen", "woche", "wochen", "monat", "monate", "jahr", "jahre", "nacht", "nachte", "abend", "abende",
        "minuten", "stunde", "stunden", "wochenende",
        "giorno", "giorni", "settimana", "settimane", "mese", "mesi", "anno", "anni", "sera", "sere", "mattina", "mattine", "notte",
        "notti", "minuti", "ora", "ore",
        "noite", "noites", "manha", "manhas",
        "dag", "dagen", "maand", "maanden", "jaar", "jaren", "ochtend", "avond", "avonden", "uur", "uren",
    ]

    /// Whether a shortened caption may end on `word`: not on a preposition,
    /// an article, a conjunction or a bare number.
    static func endsWell(_ word: String) -> Bool {
        let w = plain(word)
        return !(prepositions.contains(w) || articles.contains(w) || conjunctions.contains(w) || numberWords.contains(w)
            || clauseStarts.contains(w) || (!w.isEmpty && w.allSatisfy(\.isNumber)) || w.isEmpty)
    }

    /// Prepositions that join a verb or a noun to what follows ("learn to
    /// play", "a page of my novel", "aprender a nadar", "jouer du piano",
    /// "Zeit zu lesen", "om te lezen"): a tail never begins at one.
    static let joiners: Set<String> = [
        "to", "of", "να", "a", "de", "del", "d", "du", "des", "zu", "zum", "zur", "di", "dello", "della", "dei", "degli", "delle",
        "do", "da", "dos", "das", "te", "van",
    ]

    /// Whether a tail begins at `words[i]`: a preposition (not a joiner,
    /// `joiners`), a conjunction, an adverb of time, or "a"/"an" before a
    /// unit of time ("a day").
    static func startsTail(_ words: [String], at i: Int) -> Bool {
        let w = plain(words[i])
        // After a comma or semicolon: a clause of its own ("READ 20 BOOKS, ONE A MONTH").
        if let end = words[i - 1].last, end == "," || end == ";" || end == "，" || end == "、" { return true }
        if (w == "a" || w == "an") && i + 1 < words.count && timeUnits.contains(plain(words[i + 1])) { return true }
        if joiners.contains(w) { return false }
        return prepositions.contains(w) || tailStarts.contains(w) || clauseStarts.contains(w)
            || (conjunctions.contains(w) && w != "&" && w != "then" && w != "yet" && w != "nor")
    }

    /// The forms to try, longest first: the whole caption, then shorter at
    /// each phrase boundary, from the last to the first; then, for a promise
    /// with no such boundary early enough, before a noun phrase ("FINISH
    /// WRITING THE NOVEL / THE FANTASY NOVEL" is not one: only a prefix of at
    /// least `fewestWords` words ending well).
    static func forms(_ caption: String) -> [String] {
        let words = caption.split(separator: " ").map(String.init)
        guard !words.isEmpty else { return [] }
        var forms = [caption]
        func add(_ i: Int) {
            let prefix = words[..<i]
            // A tail ends a phrase only if what remains is whole.
            guard let last = prefix.last, endsWell(last), !bare(last).isEmpty else { return }
            let text = prefix.joined(separator: " ")
            let trimmed = String(text.reversed().drop { $0.isPunctuation || $0 == "-" }.reversed())
            if !forms.contains(trimmed) { forms.append(trimmed) }
        }
        for i in stride(from: words.count - 1, through: 1, by: -1) where startsTail(words, at: i) { add(i) }
        for i in stride(from: words.count - 1, through: fewestWords, by: -1) where articles.contains(plain(words[i])) { add(i) }
        for form in phraseForms(caption) where !forms.contains(form) { forms.append(form) }
        return forms
    }

    /// The language whose line breaking cuts `text`: "ja" with kana, "ko" with
    /// hangul, "zh" with Han alone; nil for any other script.
    static func unspacedLanguage(_ text: String) -> String? {
        let scalars = text.unicodeScalars
        if scalars.contains(where: { (0x3040...0x30FF).contains($0.value) }) { return "ja" }
        if scalars.contains(where: { (0xAC00...0xD7AF).contains($0.value) || (0x1100...0x11FF).contains($0.value) }) { return "ko" }
        if scalars.contains(where: { (0x3400...0x9FFF).contains($0.value) }) { return "zh" }
        return nil
    }

    /// Where a Chinese, Japanese or Korean caption may end (`LineBreaks`: ICU's
    /// line breaks that are word boundaries); in Japanese, not before hiragana,
    /// which begins a particle or a verb's ending (毎朝 / 三十分 / 走って, not 走 / って).
    static func phraseEnds(_ text: String) -> [Int] {
        guard let language = unspacedLanguage(text), let ends = try? LineBreaks.phraseEnds(text, language: language) else { return [] }
        let characters = Array(text)
        switch language {
        case "ja": return ends.filter { end in !(characters[end].unicodeScalars.first.map { (0x3041...0x309F).contains($0.value) } ?? false) }
        case "zh": return ends.filter { !chineseLinks.contains(characters[$0 - 1]) }
        default: return ends
        }
    }

    /// Chinese words a phrase does not end on: the particles 的, 地 and 得, and the
    /// prepositions and conjunctions that join it to what follows (在, 和, 把...).
    static let chineseLinks: Set<Character> = ["的", "地", "得", "和", "与", "或", "及", "在", "把", "被", "给", "对", "从", "向", "跟", "为"]

    /// Shorter forms of a Chinese, Japanese or Korean caption, at its phrase
    /// ends, longest first; none for another script.
    static func phraseForms(_ caption: String) -> [String] {
        let characters = Array(caption)
        var forms: [String] = []
        for end in phraseEnds(caption).reversed() {
            let prefix = String(characters[..<end]).trimmingCharacters(in: .whitespaces)
            let form = String(prefix.reversed().drop { $0.isPunctuation || $0.isWhitespace }.reversed())
            if !form.isEmpty, !forms.contains(form) { forms.append(form) }
        }
        return forms
    }

    /// The fewest words a shortened caption keeps, when the promise has as many.
    static let fewestWords = 3

    /// Why a caption was shortened, for the user (the badge's `caption-shortened` note).
    static func shortening(_ whole: String, drawn: String) -> String? {
        let all = whole.split(separator: " "), kept = drawn.split(whereSeparator: { $0 == " " || $0 == "\n" })
        // Written without spaces (Chinese, Japanese): counted in characters.
        if all.count == 1, unspacedLanguage(whole) != nil {
            let letters = drawn.filter { $0 != "\n" && $0 != " " }
            guard letters.count < whole.count else { return nil }
            let next = whole.dropFirst(letters.count).prefix { !$0.isWhitespace }.prefix(4)
            return "\(letters.count) of \(whole.count) characters: the whole promise does not fit on two lines at the legible size "
                + "(\(String(format: "%.1f", smallest * 100))% of the side, at any size of badge); cut at the phrase boundary before \"\(next)\"; "
                + "give a shorter caption with --caption"
        }
        guard kept.count < all.count else { return nil }
        let next = all[kept.count]
        return "\(kept.count) of \(all.count) words: the whole promise does not fit on two lines at the legible size "
            + "(\(String(format: "%.1f", smallest * 100))% of the side, at any size of badge); cut at the phrase boundary before \"\(next)\"; "
            + "give a shorter caption with --caption"
    }

    // MARK: Fitting

    /// The widest caption line `line` of `lines` may be, as a share of the
    /// side: a round badge's face narrows below its middle, so the second of
    /// two lines, lower, is given less. On a round badge every line's corners
    /// stay within about 0.353 of the side from the centre, clear of the accent
    /// ring inside the rim (from 0.365; Composition): two lines stand with
    /// their middle at 0.675 of the height (BadgeArt.captionCorner).
    static func maxWidth(line: Int, of lines: Int, round: Bool) -> Double {
        guard round else { return 0.82 }
        return lines == 1 ? 0.56 : line == 0 ? 0.6 : 0.52
    }

    /// The caption fitted (`fitted(_:fonts:size:round:)` over its forms): the
    /// shorter forms are worked out only when the whole does not fit at the
    /// legible size, since a Chinese or Japanese caption's need ICU's
    /// dictionaries, loaded on first use (docs/PERFORMANCE.md).
    static func fitted(caption: String, fonts: FontStack, size: Double, round: Bool) -> TextImage? {
        guard !caption.isEmpty else { return nil }
        if let image = fit(caption, fonts: fonts, size: size, round: round, down: smallest) { return image }
        return fitted(forms(caption), fonts: fonts, size: size, round: round)
    }

    /// The caption rendered at the largest size at which a form fits on one
    /// line or two, trying each form (longest first) down to the legible
    /// minimum before the next; nil when nothing can be drawn.
    /// Chinese and Japanese forms break into two lines at a phrase's end (`split(_:round:phrases:)`).
    static func fitted(_ forms: [String], fonts: FontStack, size: Double, round: Bool) -> TextImage? {
        let forms = forms.filter { !$0.isEmpty }
        guard let whole = forms.first else { return nil }
        // Forms of at least three words (or the whole, when it has fewer) first, down to the legible minimum.
        let enough = min(fewestWords, whole.split(separator: " ").count)
        let long = forms.filter { $0.split(separator: " ").count >= enough }
        for text in long {
            if let image = fit(text, fonts: fonts, size: size, round: round, down: smallest, phrases: true) { return image }
        }
        // The shortest of them a little smaller, before fewer words.
        if let last = long.last, let image = fit(last, fonts: fonts, size: size, round: round, down: smallest * 0.85, phrases: true) {
            return image
        }
        for text in forms where !long.contains(text) {
            if let image = fit(text, fonts: fonts, size: size, round: round, down: smallest, phrases: true) { return image }
        }
        // Even the shortest form is too long for the legible minimum: the shortest, smaller.
        return fit(forms[forms.count - 1], fonts: fonts, size: size, round: round, down: smallest * 0.7, phrases: true)
    }

    private static func fit(_ text: String, fonts: FontStack, size: Double, round: Bool, down floor: Double, phrases: Bool = false) -> TextImage? {
        // A form longer than two lines could hold at the smallest size, were every letter as
        // narrow as 0.45 em (narrower than any caption script's average), is not rendered:
        // a 4000-byte prompt is measured once a form, not a hundred times.
        let room = maxWidth(line: 0, of: 2, round: round) + maxWidth(line: 1, of: 2, round: round)
        guard Double(text.count) * 0.45 * floor <= room else { return nil }
        let halves = split(text, round: round, phrases: phrases)
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
    /// nil for one word of any other script. With `phrases`, Chinese and
    /// Japanese prefer a phrase's end (`phraseEnds`).
    static func split(_ text: String, round: Bool, phrases: Bool = false) -> (String, String)? {
        let characters = Array(text)
        var breaks = characters.indices.filter { $0 > 0 && characters[$0] == " " }
        let spaced = !breaks.isEmpty
        if !spaced {
            guard text.unicodeScalars.contains(where: { (0x3040...0x30FF).contains($0.value) || (0x3400...0x9FFF).contains($0.value) })
            else { return nil }
            breaks = characters.indices.filter { $0 > 0 && !characters[$0].isPunctuation }
        }
        // A shortened Chinese or Japanese caption (ICU already asked) breaks at a phrase's end when that balances nearly as well.
        let phraseEnds: Set<Int> = spaced || !phrases ? [] : Set(Self.phraseEnds(text))

        let words = text.split(separator: " ").map(String.init)
        let (top, bottom) = (maxWidth(line: 0, of: 2, round: round), maxWidth(line: 1, of: 2, round: round))
        func score(_ at: Int) -> Double {
            let first = Double(at), second = Double(characters.count - at - (spaced ? 1 : 0))
            var fill = max(first / top, second / bottom)
            if spaced {
                let wordIndex = characters[..<at].filter { $0 == " " }.count + 1
                if characters[at - 1] == "," || (wordIndex < words.count && startsTail(words, at: wordIndex)) { fill *= 0.88 }
            } else if phraseEnds.contains(at) {
                // Lines unequal by a quarter, rather than a word broken ("每天学习 / 中文", not "每天学 / 习中文").
                fill *= 0.8
            }
            return fill
        }
        guard let best = breaks.min(by: { score($0) < score($1) }) else { return nil }
        let first = String(characters[..<best]), second = String(characters[(spaced ? best + 1 : best)...])
        return first.isEmpty || second.isEmpty ? nil : (first, second)
    }
}
