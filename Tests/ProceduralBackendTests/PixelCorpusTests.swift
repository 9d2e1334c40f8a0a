import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Testing
@testable import ProceduralBackend

/// The art engine's pixels, pinned: 240 badges (60 of each style, whole and
/// in bands, on one thread and on several, captions in five scripts, grain,
/// glow, horizons and backdrops), each as the SHA-256 of its RGBA. A change
/// to how a badge is drawn that moves one pixel of one of them fails here;
/// one that is meant to is a new art engine (`BadgeArt.currentEngine`), and
/// the corpus is written again with BADGE_PIXEL_CORPUS=DIR (a file a style,
/// to be copied into Fixtures/pixel-corpus).
@Suite(.threadsOfTheirOwn)
struct PixelCorpusTests {
    static let promises = [
        "A pair of dumbbells", "Run a marathon", "Read 20 books", "Drink more water", "Meditate daily in pastel lavender",
        "Sleep before midnight", "Climb a mountain in midnight blue", "Learn Spanish, pastel colours, grain",
        "A minimalist sunset over the sea, deep navy sky, coral and gold light at the horizon, edge-to-edge, no borders",
        "Call grandmother every Sunday, glowing", "学习中文", "اقرأ كل يوم", "हर दिन पढ़ें", "Ξύπνα νωρίς κάθε πρωί",
        "Walk the dog through the forest every single morning before work, whatever the weather",
    ]
    static let sizes = [128, 256, 320, 512]

    struct Entry: Codable, Equatable {
        var prompt: String
        var style: String
        var size: Int
        var seed: UInt64
        var threads: Int?
        var rgbaSHA256: String
    }

    struct Corpus: Codable {
        var engine: Int
        var badges: [Entry]
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/pixel-corpus")

    /// The corpus's badges of `style` as drawn now.
    static func drawn(_ style: BadgeArt.Style) throws -> [Entry] {
        var entries: [Entry] = []
        for (p, prompt) in promises.enumerated() {
            for size in sizes {
                let seed = UInt64(p * 31 + size)
                // Every other badge on one thread: drawn whole rather than in bands.
                let threads: Int? = (p + size / 128) % 2 == 0 ? nil : 1
                let request = BadgeRequest(prompt: prompt, style: style.rawValue, size: size, seed: seed)
                let art = BadgeArt(request: request, caption: true, compression: 0)
                let canvas = try ImageThreads.$limit.withValue(threads) { try art.draw().canvas }
                let hash = try SHA256()
                canvas.withMutablePixels { hash.update(Data(buffer: UnsafeBufferPointer($0))) }
                entries.append(Entry(prompt: prompt, style: style.rawValue, size: size, seed: seed, threads: threads,
                                     rgbaSHA256: hash.finalize().map { String(format: "%02x", $0) }.joined()))
            }
        }
        return entries
    }

    @Test(arguments: BadgeArt.Style.allCases)
    func everyBadgeOfTheCorpusHasThePixelsItHad(style: BadgeArt.Style) throws {
        let entries = try Self.drawn(style)
        #expect(entries.count == 60)
        let file = style.rawValue + ".json"
        if let directory = ProcessInfo.processInfo.environment["BADGE_PIXEL_CORPUS"] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(Corpus(engine: BadgeArt.currentEngine, badges: entries))
                .write(to: URL(fileURLWithPath: directory).appendingPathComponent(file))
            return
        }
        let corpus = try JSONDecoder().decode(Corpus.self, from: Data(contentsOf: Self.fixtures.appendingPathComponent(file)))
        #expect(corpus.engine == BadgeArt.currentEngine, "the corpus is of art engine \(corpus.engine); write it again for this one")
        #expect(corpus.badges.count == entries.count)
        let changed = zip(corpus.badges, entries).filter { $0 != $1 }
        #expect(changed.isEmpty, "\(changed.count) of \(entries.count) \(style.rawValue) badges changed, the first: \(changed.first.map { "\($0.1)" } ?? "")")
    }
}
