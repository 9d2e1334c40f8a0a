import BadgeKit
import BadgeTestSupport
import Foundation
import Testing
@testable import ProceduralBackend

/// `badge prompt` writes what the procedural backend reads: each stage of the
/// composed line reaches the drawing.
@Suite(.threadsOfTheirOwn)
struct PromptComposerTests {
    @Test func theFourStagesMakeOneLineEndingInTheAspectRatio() {
        let composer = PromptComposer(purpose: "Run a marathon.", vibe: "Joyful", metaphor: "path", style: "flat",
                                      colors: ["coral", "gold"], grain: true, glow: true)
        #expect(composer.line == "Run a marathon, joyful mood, a path as its symbol, flat style in coral and gold, film grain, glowing --ar 1:1")
        #expect(PromptComposer(purpose: "Save money").line == "Save money --ar 1:1")
        #expect(PromptComposer(purpose: "Save money", colors: ["teal"]).line == "Save money, in teal --ar 1:1")
    }

    @Test func theBackendReadsEveryStage() {
        let line = PromptComposer(purpose: "Run a marathon", vibe: "calm", metaphor: "path", style: "tile",
                                  colors: ["coral"], grain: true, glow: true).line
        let reading = PromptReading(line)
        #expect(reading.caption == "RUN A MARATHON", "the caption is the purpose alone")
        #expect(reading.scene.0 == .path, "the symbol named wins over the purpose's own word (run)")
        #expect(reading.colorWords.contains("coral") && reading.colorWords.contains("calm"))
        #expect(reading.style == .tile)
        #expect(reading.grain && reading.glow)
        #expect(reading.notes.isEmpty, "--ar 1:1 is a square: nothing to note")
    }

    @Test(arguments: PromptComposer.metaphors)
    func everySymbolOfferedIsTheSymbolDrawn(name: String) {
        let line = PromptComposer(purpose: "Keep my promise", metaphor: name).line
        #expect(PromptReading(line).scene.0.rawValue == name, "\(line)")
    }

    /// The symbol named wins over the purpose's motifs, even when its word is
    /// one that alone would yield ("walk") and when the purpose composes a scene.
    @Test func theNamedSymbolWinsOverWeakWordsAndComposedScenes() {
        #expect(PromptReading(PromptComposer(purpose: "Run a marathon", metaphor: "walk").line).scene.0 == .path)
        #expect(PromptReading(PromptComposer(purpose: "A path through a forest", metaphor: "sun").line).scene.0 == .sun)
        #expect(PromptReading(PromptComposer(purpose: "Walk in the woods", metaphor: "path").line).scene.0 == .path)
    }

    @Test func aWordForASymbolIsTakenAsItIs() throws {
        let composer = PromptComposer(purpose: "Practise daily", metaphor: "guitar")
        try composer.validate()
        #expect(composer.line == "Practise daily, guitar as its symbol --ar 1:1")
        #expect(PromptReading(composer.line).scene.0 == .music)
    }

    @Test(arguments: PromptComposer.vibes)
    func everyVibeOfferedChangesThePalette(vibe: String) {
        var plain = SplitMix64(seed: 7), moody = SplitMix64(seed: 7)
        let plainReading = PromptReading("Save money"), moodyReading = PromptReading(PromptComposer(purpose: "Save money", vibe: vibe).line)
        let without = Palette.make(look: plainReading.look, colorWords: plainReading.colorWords, motif: .coins, random: &plain)
        let with = Palette.make(look: moodyReading.look, colorWords: moodyReading.colorWords, motif: .coins, random: &moody)
        #expect(without.faceLight != with.faceLight || without.faceDark != with.faceDark, "\(vibe)")
    }

    @Test func eachWrongStageSaysWhatItCanBe() {
        let cases: [(PromptComposer, String)] = [
            (PromptComposer(purpose: "  "), "the purpose is empty"),
            (PromptComposer(purpose: "Run --ar 16:9"), "contains a flag"),
            (PromptComposer(purpose: "Run", vibe: "grumpy"), "\"grumpy\" is not a vibe"),
            (PromptComposer(purpose: "Run", metaphor: "dragon"), "\"dragon\" is not a symbol"),
            (PromptComposer(purpose: "Run", style: "baroque"), "\"baroque\" is not a style"),
            (PromptComposer(purpose: "Run", colors: ["blurple"]), "\"blurple\" is not a colour"),
        ]
        for (composer, message) in cases {
            do {
                try composer.validate()
                Issue.record("\(composer) must be refused")
            } catch let error as BadgeError {
                #expect(error.code == .usage)
                #expect(error.message.contains(message), "\(error.message)")
                #expect(error.hint != nil || message == "the purpose is empty")
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    /// A prompt's descriptive clauses are description, not caption.
    @Test func descriptiveClausesLeaveTheCaption() {
        #expect(PromptReading("Read 20 books, lavender pastel").caption == "READ 20 BOOKS")
        // A clause about the promise stays.
        #expect(PromptReading("Run; swim and cycle, joyful mood").caption == "RUN; SWIM AND CYCLE")
        #expect(PromptReading("Sleep early, a path as its symbol").scene.0 == .path)
    }
}
