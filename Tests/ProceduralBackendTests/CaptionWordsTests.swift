import BadgeKit
import Canvas
import Foundation
import Testing
@testable import ProceduralBackend

/// Art engine 4's caption: the promise in the user's own words (CaptionOCRTests reads them back from the pixels).
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
        // Engines 2 and 3 read the words as they always did.
        #expect(!PromptReading(prompt, engine: 3).caption.isEmpty)
    }

    /// Shortened only at a phrase boundary, never ending on a preposition,
    /// an article, a conjunction or a bare number, and never inside a phrase.
    @Test(arguments: [
        ("SAVE MONEY FOR A TRIP AROUND THE WORLD", ["SAVE MONEY FOR A TRIP AROUND THE WORLD", "SAVE MONEY FOR A TRIP", "SAVE MONEY"]),
        ("DRINK TWO LITRES OF WATER A DAY", ["DRINK TWO LITRES OF WATER A DAY", "DRINK TWO LITRES OF WATER"]),
        ("MEDITATE TEN MINUTES EACH MORNING", ["MEDITATE TEN MINUTES EACH MORNING", "MEDITATE TEN MINUTES"]),
        ("RUN 5K WITHOUT STOPPING", ["RUN 5K WITHOUT STOPPING", "RUN 5K"]),
        ("GO TO BED BEFORE MIDNIGHT", ["GO TO BED BEFORE MIDNIGHT", "GO TO BED"]),
        ("LEARN TO PLAY THE GUITAR", ["LEARN TO PLAY THE GUITAR"]),
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
        // Engine 3 read no emoji.
        #expect(PromptReading("🏃", engine: 3).scene.0 == .abstract)
    }

    @Test func engines2And3DrawTheirCaptionsAsBefore() {
        #expect(PromptReading.caption("Go to bed before midnight", engine: 3) == "GO TO BED BEFORE MIDNIGHT")
        #expect(BadgeArt.captionForms("GO TO BED BEFORE MIDNIGHT", engine: 3).contains("GO BED"))
        #expect(!Caption.forms("GO TO BED BEFORE MIDNIGHT").contains("GO BED"))
    }
}
