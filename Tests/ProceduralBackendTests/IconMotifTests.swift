import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Testing
@testable import ProceduralBackend

/// Motifs beyond the 52 hand-drawn ones: Material Icons drawn as glyph
/// outlines, reached through their names, CLDR's emoji keywords and badge's
/// own table; the hand-drawn motif kept where it reads better.
@Suite(.threadsOfTheirOwn)
struct IconMotifTests {
    /// Promises whose object none of the 52 hand-drawn motifs shows, in five
    /// languages, and the icon each is drawn with.
    static let promises: [(prompt: String, icon: String)] = [
        ("Learn to play the piano", "piano"), ("Play tennis every weekend", "sports_tennis"), ("Lower my golf handicap", "sports_golf"),
        ("Go fishing with my father", "phishing"), ("Learn to skateboard", "skateboarding"), ("Go kayaking every summer", "kayaking"),
        ("Play basketball twice a week", "sports_basketball"), ("Grow a garden on my balcony", "yard"),
        ("Make my own birthday cakes", "cake"), ("Go to the theatre once a month", "theater_comedy"), ("Learn to surf", "surfing"),
        ("Learn to ski this winter", "downhill_skiing"), ("Join a football club", "sports_soccer"), ("Build a model rocket", "rocket"),
        ("Get a motorcycle licence", "motorcycle"),
        ("Apprendre à jouer du piano", "piano"), ("Jouer au tennis chaque samedi", "sports_tennis"),
        ("Aller à la pêche avec mon père", "phishing"), ("Apprendre à skier cet hiver", "downhill_skiing"),
        ("Faire du jardinage chaque printemps", "yard"), ("Aller au théâtre chaque mois", "theater_comedy"),
        ("Aprender a tocar el piano", "piano"), ("Jugar al tenis los domingos", "sports_tennis"), ("Jugar al fútbol con mis amigos", "sports_soccer"),
        ("Aprender a esquiar", "downhill_skiing"), ("Cuidar mi jardín", "yard"), ("Ir de pesca cada verano", "phishing"),
        ("Construir un cohete", "rocket"),
        ("Klavier spielen lernen", "piano"), ("Fußball im Verein spielen", "sports_soccer"), ("Im Garten arbeiten", "yard"),
        ("Segeln lernen", "sailing"), ("Eine Rakete bauen", "rocket"),
        ("Imparare a sciare", "downhill_skiing"), ("Giocare a calcio ogni sabato", "sports_soccer"),
    ]

    private func draw(_ prompt: String, style: String? = nil, seed: UInt64 = 1, size: Int = 256) throws -> BadgeArt.Drawing {
        try ImageThreads.$limit.withValue(1) { try BadgeArt(request: BadgeRequest(prompt: prompt, style: style, size: size, seed: seed), caption: true, compression: 0).draw() }
    }

    /// Each promise records its icon as its motif, and the badge draws the
    /// icon's glyph: the motif's ink covers what the glyph alone covers.
    /// BADGE_ICON_PICTURES=DIR keeps the pictures, to look at.
    @Test func promisesBeyondTheHandDrawnMotifsGetTheirIcon() throws {
        #expect(Self.promises.count >= 30)
        let languages = Set(Self.promises.map { ReadLanguage.guess($0.prompt) })
        #expect(languages.count >= 4, "\(languages)")
        let keep = ProcessInfo.processInfo.environment["BADGE_ICON_PICTURES"]
        var wrong: [String] = []
        for (k, (prompt, icon)) in Self.promises.enumerated() {
            // Not a word any of today's hand-drawn motifs is named after.
            #expect(!PromptComposer.metaphors.contains(icon), "\(icon)")
            // Recorded, not rasterised: the scene says what is drawn.
            let art = BadgeArt(request: BadgeRequest(prompt: prompt, size: 256, seed: 1), caption: true, compression: 0)
            let drawing = try art.record()
            let motif = drawing.notes["motif"] ?? ""
            if !motif.hasPrefix("icon \(icon) <- ") { wrong.append("\(prompt): \(motif), expected icon \(icon)") }
            #expect(drawing.scene.operations.contains { operation in
                if case let .text(text, _, _, _) = operation {
                    return text.shapedGlyphs.contains { $0.face.file.hasSuffix("MaterialIcons-Regular.ttf") }
                }
                return false
            }, "\(prompt): no icon glyph was drawn")
            if let keep {
                try PNGEncoder.encode(try art.draw().canvas, level: 1).write(to: URL(fileURLWithPath: keep).appendingPathComponent("icon-\(k + 1).png"))
            }
        }
        #expect(wrong.isEmpty, "\(wrong.joined(separator: "\n"))")
    }

    /// The hand-drawn motif stays where it reads better: a word it knows
    /// keeps it, and only badge's table puts an icon in its place.
    @Test(arguments: [("Read 20 books", "book <- read"), ("Run a marathon", "runner <- run"), ("Walk the dog every day", "paw <- dog"),
                      ("Drink more water", "drop <- drink"), ("Cycle to work", "bicycle <- cycle")])
    func aHandDrawnMotifIsKeptWhereItFits(prompt: String, motif: String) throws {
        #expect(try draw(prompt).notes["motif"] == motif)
    }

    /// The three ways to an icon, each named in the record.
    @Test func theRecordSaysWhichWordChoseTheIconAndHow() throws {
        #expect(try draw("Go kayaking every summer").notes["motif"] == "icon kayaking <- kayaking (the icon's name)")
        #expect(try draw("Construir un cohete").notes["motif"] == "icon rocket <- cohete (CLDR keyword, es)")
        #expect(try draw("Grow a garden on my balcony").notes["motif"] == "icon yard <- garden (badge's icon table)")
    }

    /// The sorted tables are searched whole: every icon's line is found, and a word between two lines is not.
    @Test func everyIconIsFoundByName() throws {
        let names = "\(IconCatalog.names)".split(separator: "\n")
        #expect(names.count == IconCatalog.count && names.count > 2000)
        for line in names {
            let name = String(line.split(separator: "\t")[0])
            #expect(IconCatalog.icon(named: name)?.name == name, "\(name)")
        }
        #expect(IconCatalog.icon(named: "pianoo") == nil && IconCatalog.icon(named: "") == nil && IconCatalog.icon(named: "zzzz") == nil)
        let words = "\(IconCatalog.words)".split(separator: "\n")
        #expect(words.count > 5000)
        for line in words.prefix(400) + words.suffix(400) {
            let fields = line.split(separator: "\t")
            #expect(IconCatalog.line(String(fields[0]), in: IconCatalog.words)?[1] == fields[1], "\(line)")
        }
    }
}

/// The language a test promise is in, from its words: enough to count the languages of a list.
enum ReadLanguage {
    static func guess(_ prompt: String) -> String {
        let words = Set(PromptReading.words(prompt))
        let marks: [(String, Set<String>)] = [
            ("fr", ["à", "au", "du", "la", "chaque", "avec", "cet", "mon", "aller", "faire", "apprendre", "jouer", "construire"]),
            ("es", ["al", "el", "los", "mi", "mis", "con", "de", "cada", "un", "aprender", "jugar", "ir", "cuidar", "construir"]),
            ("de", ["im", "eine", "lernen", "spielen", "bauen", "arbeiten"]),
            ("it", ["imparare", "giocare", "ogni"]),
        ]
        return marks.first { !$0.1.isDisjoint(with: words) }?.0 ?? "en"
    }
}
