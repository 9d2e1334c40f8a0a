import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Testing
@testable import ProceduralBackend

/// The caption: the promise in the user's own words (CaptionOCRTests reads them back from the pixels).
@Suite(.threadsOfTheirOwn)
struct CaptionWordsTests {
    @Test(arguments: [
        ("Go to bed before midnight", "GO TO BED BEFORE MIDNIGHT"),
        ("I will learn to play the guitar", "LEARN TO PLAY THE GUITAR"),
        ("Drink two litres of water a day", "DRINK TWO LITRES OF WATER A DAY"),
        ("Call grandmother every Sunday", "CALL GRANDMOTHER EVERY SUNDAY"),
        // Words about the picture are never caption, in a clause of their own or trailing the promise.
        ("Cycle to work teal coral palette", "CYCLE TO WORK"),
        ("Cycle to work in teal and coral", "CYCLE TO WORK"),
        ("Eat more vegetables, pastel colours", "EAT MORE VEGETABLES"),
        ("A minimalist sunset over the sea, deep navy sky, coral and gold light at the horizon, edge-to-edge, no borders", "SUNSET OVER THE SEA"),
        ("Run a marathon, calm mood, a path as its symbol, tile style in coral, film grain, glowing", "RUN A MARATHON"),
        // A lone colour may be the promise's own; a later clause about the promise stays.
        ("Eat less chocolate", "EAT LESS CHOCOLATE"),
        ("Read 20 books, one a month", "READ 20 BOOKS, ONE A MONTH"),
        // Any script; emoji are motif hints, not caption.
        ("学习中文", "学习中文"),
        ("Бегать каждое утро", "БЕГАТЬ КАЖДОЕ УТРО"),
        ("📚 Read every evening 🌙", "READ EVERY EVENING"),
        ("Give up smoking", "GIVE UP SMOKING"),
    ])
    func theCaptionIsThePromiseInItsOwnWords(prompt: String, caption: String) {
        #expect(PromptReading(prompt).caption == caption)
    }

    /// The phrase rules, as a table: picture words removed at the end or inside
    /// the sentence (never leaving it on a preposition), colour words that are
    /// the object of a time or place phrase kept, "no text", and image
    /// descriptions, which get no caption.
    static let phraseRules: [(String, String)] = [
        // Time and place phrases keep their colour words.
        ("Go to bed before midnight", "GO TO BED BEFORE MIDNIGHT"),
        ("Run until midnight", "RUN UNTIL MIDNIGHT"),
        ("Stay up past midnight less often", "STAY UP PAST MIDNIGHT LESS OFTEN"),
        ("Read under a blue sky every weekend", "READ UNDER A BLUE SKY EVERY WEEKEND"),
        ("Watch the stars under a midnight blue sky", "WATCH THE STARS UNDER A MIDNIGHT BLUE SKY"),
        ("Sleep before midnight, navy and gold", "SLEEP BEFORE MIDNIGHT"),
        ("Be home before midnight in a teal and coral palette", "BE HOME BEFORE MIDNIGHT"),
        ("Write every morning with a fountain pen in deep blue ink", "WRITE EVERY MORNING WITH A FOUNTAIN PEN IN DEEP BLUE INK"),
        // Picture words removed, at the end or mid-sentence, never leaving a preposition.
        ("Cycle to work in a teal and coral palette", "CYCLE TO WORK"),
        ("Cycle to work in teal and coral", "CYCLE TO WORK"),
        ("Cycle to work teal coral palette", "CYCLE TO WORK"),
        ("Paint the fence in teal and coral colours every summer", "PAINT THE FENCE EVERY SUMMER"),
        ("Walk the dog in soft pastel tones every evening", "WALK THE DOG EVERY EVENING"),
        ("Grow tomatoes on the balcony in a warm terracotta and sage palette", "GROW TOMATOES ON THE BALCONY"),
        ("Climb a mountain in midnight blue", "CLIMB A MOUNTAIN"),
        ("Run a minimalist marathon", "RUN A MARATHON"),
        ("Meditate each morning, calm mood", "MEDITATE EACH MORNING"),
        ("Swim in the sea, joyful vibe, ocean blue", "SWIM IN THE SEA"),
        ("Practise the piano, minimalist gold and black design", "PRACTISE THE PIANO"),
        ("Hike the coast path, 4k, photorealistic", "HIKE THE COAST PATH"),
        ("Learn Spanish, pastel colours", "LEARN SPANISH"),
        ("Eat more vegetables, pastel colours", "EAT MORE VEGETABLES"),
        ("Run a marathon --ar 16:9", "RUN A MARATHON"),
        ("A minimalist sunset over the sea, deep navy sky, coral and gold light at the horizon, edge-to-edge, no borders", "SUNSET OVER THE SEA"),
        // Words of the promise that look like picture words stay.
        ("Learn graphic design", "LEARN GRAPHIC DESIGN"),
        ("Take a photo every day for a year", "TAKE A PHOTO EVERY DAY FOR A YEAR"),
        ("Eat less chocolate", "EAT LESS CHOCOLATE"),
        // A colour a preposition introduces at the end of the clause is the picture's: it leaves with its "in".
        ("Read to my kids in green", "READ TO MY KIDS"),
        ("Read to my kids in the green park", "READ TO MY KIDS IN THE GREEN PARK"),
        ("Turn off the light in the evening", "TURN OFF THE LIGHT IN THE EVENING"),
        ("Read 20 books, one a month", "READ 20 BOOKS, ONE A MONTH"),
        ("Finish writing the fantasy novel I have been planning since university",
         "FINISH WRITING THE FANTASY NOVEL I HAVE BEEN PLANNING SINCE UNIVERSITY"),
        // "no text".
        ("Run a marathon, no text", ""),
        ("Read more books, no words", ""),
        ("Swim every day without any text", ""),
        ("A textless sunrise", ""),
        // Image descriptions: no caption.
        ("A minimalist abstract graphic design of a sunrise breaking through darkness. The composition is a full square, "
            + "edge to edge, 8k resolution, flat surface. --ar 1:1", ""),
        ("An illustration of a runner at dawn", ""),
        ("A flat vector icon of a book", ""),
        ("A photo of a sunrise over the sea", ""),
        ("Sunrise over the mountains, 8k resolution --ar 16:9", ""),
        ("A watercolour painting of a lighthouse", ""),
        ("Cinematic render of a forest, octane, artstation", ""),
    ]

    @Test func thePhraseRules() {
        #expect(Self.phraseRules.count >= 40)
        var wrong: [String] = []
        for (prompt, caption) in Self.phraseRules where PromptReading(prompt).caption != caption {
            wrong.append("\"\(prompt)\": \"\(PromptReading(prompt).caption)\", expected \"\(caption)\"")
        }
        #expect(wrong.isEmpty, "\(wrong.count) captions:\n\(wrong.joined(separator: "\n"))")
    }

    /// The pre-check that spares most prompts ICU's regular expressions
    /// never says "no" to a text one of them matches: random ASCII texts
    /// from the phrases' words, mixed case, broken and joined up.
    @Test func theCompositionPhrasePreCheckMissesNoPhrase() {
        let pieces = ["edge", "to", "-", " ", "full", "bleed", "square", "borderless", "frameless", "no", "rounded", "borders",
                      "border", "corners", "frames", "frame", "without", "a", "edg", "bord", "corne", "fram", "run", ",", "x", "\n"]
        var random = SplitMix64(seed: 34)
        var matched = 0, spared = 0
        for _ in 0..<20_000 {
            var text = ""
            for _ in 0..<(2 + Int(random.next() % 7)) {
                var piece = pieces[Int(random.next() % UInt64(pieces.count))]
                if random.next() % 4 == 0 { piece = piece.uppercased() }
                if random.next() % 5 == 0, let first = piece.first { piece = first.uppercased() + piece.dropFirst() }
                text += piece + (random.next() % 3 == 0 ? "" : " ")
            }
            let range = NSRange(text.startIndex..., in: text)
            let matches = Caption.compositionPhrases.contains { $0.firstMatch(in: text, range: range) != nil }
            if matches { matched += 1 }
            if !Caption.mayHoldCompositionPhrase(text) {
                spared += 1
                #expect(!matches, "the pre-check passed over a composition phrase in \"\(text)\"")
            }
        }
        // Both kinds of text were made: the check is not vacuous.
        #expect(matched > 500 && spared > 500, "matched \(matched), spared \(spared)")
        #expect(Caption.mayHoldCompositionPhrase("Read more, ſquare"), "a text beyond ASCII goes to ICU")
        #expect(!Caption.mayHoldCompositionPhrase("A pair of dumbbells"))
    }

    /// "midnight" after a preposition of time is the time, not a colour.
    @Test func midnightIsATimeAfterAPrepositionOfTime() async throws {
        #expect(PromptReading("Go to bed before midnight").colorWords.isEmpty)
        #expect(PromptReading("Go to bed before midnight").look.colours.isEmpty)
        #expect(PromptReading("Climb a mountain in midnight blue").look.colours.map(\.words) == [["midnight", "blue"]])
        let drawing = try BadgeArt(request: BadgeRequest(prompt: "Go to bed before midnight", size: 256, seed: 1), caption: true, compression: 0).draw()
        #expect(drawing.notes["palette"]?.contains("midnight") == false, "\(drawing.notes)")
        #expect(drawing.notes["caption-drawn"] == "GO TO BED BEFORE MIDNIGHT")
    }

    /// An image description draws no caption and says why; --caption still gives one.
    @Test func anImageDescriptionGetsNoCaptionUnlessGivenOne() throws {
        let prompt = "A minimalist abstract graphic design of a sunrise breaking through darkness. The composition is a full square. --ar 1:1"
        let drawing = try BadgeArt(request: BadgeRequest(prompt: prompt, size: 256, seed: 2), caption: true, compression: 0).draw()
        #expect(drawing.captionArea == nil && drawing.notes["caption-drawn"] == nil)
        #expect(drawing.notes["caption-omitted"] == "the prompt describes a picture rather than a promise; give a caption with --caption")
        #expect(drawing.notes["warning"] == nil)
        let given = try BadgeArt(request: BadgeRequest(prompt: prompt, size: 256, seed: 2, caption: "Rise early"), caption: true,
                                 compression: 0).draw()
        #expect(given.notes["caption-drawn"] == "RISE EARLY" && given.notes["caption-omitted"] == nil)
    }

    /// Greek capitals are written without tonos; a dialytika stays; other scripts are only upper-cased.
    @Test func greekCapitalsDropTheirAccents() {
        #expect(Caption.capitals("Διαβάζω κάθε μέρα") == "ΔΙΑΒΑΖΩ ΚΑΘΕ ΜΕΡΑ")
        #expect(Caption.capitals("προϊόν") == "ΠΡΟΪΟΝ")
        #expect(Caption.capitals("Café crème") == "CAFÉ CRÈME")
        #expect(Caption.capitals("Бегать каждое утро") == "БЕГАТЬ КАЖДОЕ УТРО")
    }

    @Test(arguments: ["Run a marathon, no text", "Read more books, no words", "Swim every day without any text", "A textless sunrise"])
    func noTextMeansNoCaption(prompt: String) async throws {
        #expect(PromptReading(prompt).caption.isEmpty)
        let drawing = try BadgeArt(request: BadgeRequest(prompt: prompt, size: 256, seed: 1), caption: true, compression: 0).draw()
        #expect(drawing.notes["caption-drawn"] == nil)
        #expect(drawing.captionArea == nil)
    }

    /// Shortened only at a phrase boundary, never ending on a preposition,
    /// an article, a conjunction or a bare number, and never inside a phrase.
    @Test(arguments: [
        ("SAVE MONEY FOR A TRIP AROUND THE WORLD", ["SAVE MONEY FOR A TRIP AROUND THE WORLD", "SAVE MONEY FOR A TRIP", "SAVE MONEY"]),
        ("DRINK TWO LITRES OF WATER A DAY", ["DRINK TWO LITRES OF WATER A DAY", "DRINK TWO LITRES OF WATER"]),
        ("MEDITATE TEN MINUTES EACH MORNING", ["MEDITATE TEN MINUTES EACH MORNING", "MEDITATE TEN MINUTES"]),
        ("RUN 5K WITHOUT STOPPING", ["RUN 5K WITHOUT STOPPING", "RUN 5K"]),
        ("GO TO BED BEFORE MIDNIGHT", ["GO TO BED BEFORE MIDNIGHT", "GO TO BED"]),
        // Before a noun phrase, when three words or more are left: for a promise with no earlier boundary.
        ("LEARN TO PLAY THE GUITAR", ["LEARN TO PLAY THE GUITAR", "LEARN TO PLAY"]),
        ("FINISH WRITING THE FANTASY NOVEL I HAVE BEEN PLANNING SINCE UNIVERSITY",
         ["FINISH WRITING THE FANTASY NOVEL I HAVE BEEN PLANNING SINCE UNIVERSITY", "FINISH WRITING THE FANTASY NOVEL I HAVE BEEN PLANNING",
          "FINISH WRITING THE FANTASY NOVEL"]),
        ("READ 20 BOOKS, ONE A MONTH", ["READ 20 BOOKS, ONE A MONTH", "READ 20 BOOKS"]),
        ("SWIM FOR 30 EVERY DAY", ["SWIM FOR 30 EVERY DAY", "SWIM"]),
    ])
    func shortenedAtAPhraseBoundary(caption: String, forms: [String]) {
        #expect(Caption.forms(caption) == forms)
    }

    @Test func aLongPromiseIsDrawnWholeOnTwoBalancedLines() throws {
        let prompt = "Volunteer at the animal shelter"
        let drawing = try BadgeArt(request: BadgeRequest(prompt: prompt, size: 512, seed: 1), caption: true, compression: 0).draw()
        #expect(drawing.notes["caption-drawn"] == "VOLUNTEER AT THE ANIMAL SHELTER")
        let area = try #require(drawing.captionArea)
        #expect(area.height > Int(512 * Caption.smallest * 1.8), "two lines")
        // Broken between phrases when that balances the lines about as well; Chinese between characters.
        #expect(try #require(Caption.split("GO TO BED BEFORE MIDNIGHT", round: true)) == ("GO TO BED", "BEFORE MIDNIGHT"))
        #expect(try #require(Caption.split("每天学习中文", round: true)) == ("每天学", "习中文"))
        #expect(Caption.split("MARATHON", round: true) == nil)
    }

    /// The longest prompt a request takes: its caption is the start of the promise, cut at a phrase boundary.
    @Test func theLongestPromptGetsTheStartOfItsPromise() throws {
        let prompt = String(repeating: "Walk to the park with friends every day and ", count: 90).prefix(3990) + "rest"
        let drawing = try BadgeArt(request: BadgeRequest(prompt: String(prompt), size: 256, seed: 1), caption: true, compression: 0).draw()
        let drawn = try #require(drawing.notes["caption-drawn"])
        #expect(drawn == "WALK TO THE PARK WITH FRIENDS" || drawn == "WALK TO THE PARK" || drawn == "WALK", "\(drawn)")
    }

    @Test func emojiAreMotifHints() {
        #expect(PromptReading("🏃 every morning").scene.0 == .runner)
        #expect(PromptReading("📚 before bed").scene.0 == .book)
        #expect(PromptReading("🚲 to work").scene.0 == .bicycle)
    }
}
