import Foundation

/// Colour words in Spanish, French, German, Italian, Portuguese and Dutch,
/// read as the English ones the palette knows (`Palette.named`,
/// `LookReading.descriptive`, `CSSColors`): "azul marino" is navy, "vert
/// foncé" dark green, "hellblau" light blue, "rote" red. A prompt with an
/// English function word (`PromptReading.englishWords`) is read as English and
/// not translated: "rot" and "wit" are English words too.
enum ColourWords {
    /// Each word (in its inflected forms) and the English colour it names.
    static let english: [String: String] = {
        var table: [String: String] = [:]
        for (colour, forms) in words { for form in forms { table[form] = colour } }
        return table
    }()

    /// English colour → its words in the six languages, every form written out
    /// (gender, number, the German and Dutch adjective endings).
    static let words: [String: [String]] = [
        "red": ["rojo", "roja", "rojos", "rojas", "rouge", "rouges", "rot", "rote", "roten", "roter", "rotes", "rosso", "rossa", "rossi",
                "rosse", "vermelho", "vermelha", "vermelhos", "vermelhas", "rood", "rode"],
        "blue": ["azul", "azules", "bleu", "bleue", "bleus", "bleues", "blau", "blaue", "blauen", "blauer", "blaues", "blu", "azzurro",
                 "azzurra", "azuis", "blauw", "blauwe"],
        "green": ["verde", "verdes", "vert", "verte", "verts", "vertes", "grün", "grüne", "grünen", "grüner", "grünes", "verdi",
                  "groen", "groene"],
        "yellow": ["amarillo", "amarilla", "amarillos", "amarillas", "jaune", "jaunes", "gelb", "gelbe", "gelben", "gelber", "giallo",
                   "gialla", "gialli", "amarelo", "amarela", "amarelos", "geel", "gele"],
        "orange": ["naranja", "anaranjado", "oranges", "orangefarben", "arancione", "arancio", "laranja", "oranje"],
        "purple": ["morado", "morada", "púrpura", "violeta", "pourpre", "lila", "violett", "violette", "roxo", "roxa",
                   "paars", "paarse"],
        "violet": ["violet"],
        "pink": ["rosa", "rosado", "rosada", "rose", "roses", "rosafarben", "roze"],
        "black": ["negro", "negra", "negros", "negras", "noir", "noire", "noirs", "noires", "schwarz", "schwarze", "schwarzen", "nero",
                  "nera", "neri", "preto", "preta", "zwart", "zwarte"],
        "white": ["blanco", "blanca", "blancos", "blancas", "blanc", "blanche", "blancs", "blanches", "weiß", "weiss", "weiße", "weißen",
                  "bianco", "bianca", "bianchi", "branco", "branca", "wit", "witte"],
        "grey": ["gris", "grise", "grau", "graue", "grauen", "grigio", "grigia", "cinza", "grijs", "grijze"],
        "brown": ["marrón", "marron", "braun", "braune", "braunen", "marrone", "castanho", "marrom", "bruin", "bruine"],
        "gold": ["dorado", "dorada", "doré", "dorée", "gold", "golden", "goldene", "oro", "dorato", "dorata", "dourado",
                 "dourada", "goud", "gouden"],
        "silver": ["plateado", "plata", "argenté", "argentée", "silbern", "silber", "argento", "argentato", "prateado", "prata",
                   "zilver", "zilveren"],
        "lavender": ["lavanda", "lavande", "lavendel", "lavendelfarben"],
        "turquoise": ["turquesa", "türkis", "turchese", "turkoois", "turquoise"],
        "coral": ["coral", "corail", "koralle", "korallenrot", "corallo", "koraal"],
        "navy": ["marineblau", "marineblaue", "marineblauen", "marineblauw", "blu navy"],
        "teal": ["verde azulado", "bleu canard", "petrol", "petrolio", "petróleo", "petrol", "blauwgroen"],
        "burgundy": ["burdeos", "bordeaux", "bordeauxrot", "bordeaux", "bordô", "bordeauxrood"],
        "crimson": ["carmesí", "cramoisi", "karminrot", "cremisi", "carmesim", "karmijnrood"],
        "emerald": ["esmeralda", "émeraude", "smaragdgrün", "smeraldo", "smaragdgroen"],
        "indigo": ["índigo", "indigo", "indaco", "anil"],
        "mint": ["menta", "menthe", "mintgrün", "mentolo", "munt", "mintgroen"],
        "beige": ["beige", "beis", "bege"],
        "cream": ["crema", "crème", "creme", "cremefarben", "crème", "creme"],
        "peach": ["melocotón", "pêche", "pfirsich", "pesca", "pêssego", "perzik"],
        "lightblue": ["celeste", "celestes", "azzurrino"],
    ]

    /// Words that darken or lighten the colour before them (Spanish, French,
    /// Italian, Portuguese: "azul claro", "vert foncé") and "marino"/"marine"
    /// after blue, which is navy.
    static let lighteners: Set<String> = ["claro", "clara", "claros", "claras", "clair", "claire", "clairs", "chiaro", "chiara", "chiari"]
    static let darkeners: Set<String> = ["oscuro", "oscura", "oscuros", "oscuras", "foncé", "foncée", "foncés", "scuro", "scura",
                                         "scuri", "escuro", "escura"]
    static let marine: Set<String> = ["marino", "marina", "marine", "marinho", "marinha"]
    /// "pastel" in the six languages.
    static let pastel: Set<String> = ["pastell", "pastello", "pastelli", "pasteles", "pastels", "pastelkleurig", "pastelkleur"]
    /// German and Dutch colour compounds: "dunkelblau", "hellgrün", "donkerblauw", "lichtgroen".
    static let darkPrefixes = ["dunkel", "donker"], lightPrefixes = ["hell", "licht"]

    /// Whether `word` is one of these colour words, a modifier of one or "pastel".
    static func isColour(_ word: String) -> Bool {
        english[word] != nil || pastel.contains(word) || compound(word) != nil
    }

    /// Words that stand inside a run of colour words without naming a colour themselves.
    static func isModifier(_ word: String) -> Bool {
        lighteners.contains(word) || darkeners.contains(word) || marine.contains(word)
    }

    /// A German or Dutch compound of a shade and a colour: ("dark", "blue") for "dunkelblau".
    static func compound(_ word: String) -> (String, String)? {
        for (prefixes, shade) in [(darkPrefixes, "dark"), (lightPrefixes, "light")] {
            for prefix in prefixes where word.hasPrefix(prefix) && word.count > prefix.count + 2 {
                if let colour = english[String(word.dropFirst(prefix.count))] { return (shade, colour) }
            }
        }
        return nil
    }

    /// `words` (lower case) with these colour words in English, each modifier
    /// before its colour ("azul claro" → "light blue"; "azul marino",
    /// "marineblau" → "navy"; "dunkelblau" → "dark blue"). Other words stay.
    static func translated(_ words: [String]) -> [String] {
        var out: [String] = []
        var i = 0
        while i < words.count {
            let word = words[i], next = i + 1 < words.count ? words[i + 1] : nil
            defer { i += 1 }
            if let next, let colour = english[word + " " + next] {
                out.append(colour)
                i += 1
                continue
            }
            if pastel.contains(word) { out.append("pastel"); continue }
            if let (shade, colour) = compound(word) { out += [shade, colour]; continue }
            guard let colour = english[word] else { out.append(word); continue }
            if let next, marine.contains(next), colour == "blue" {
                out.append("navy")
                i += 1
            } else if let next, lighteners.contains(next) {
                out += ["light", colour]
                i += 1
            } else if let next, darkeners.contains(next) {
                out += ["dark", colour]
                i += 1
            } else {
                out.append(colour)
            }
        }
        return out
    }

    /// Whether to read `words` as English rather than translate its colour words.
    static func isEnglish(_ words: [String]) -> Bool {
        words.contains(where: PromptReading.englishWords.contains)
    }
}
