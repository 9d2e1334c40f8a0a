import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Synchronization
import Testing
@testable import ProceduralBackend

@Suite(.threadsOfTheirOwn)
struct ProceduralBackendTests {
    let generator = ProceduralGenerator()

    private func render(_ prompt: String, seed: UInt64 = 1, style: String? = nil, size: Int = 256) async throws -> (GeneratedImage, Data) {
        let (image, data, _) = try await GeneratorConformance.generateOnce(
            generator, BadgeRequest(prompt: prompt, style: style, size: size, seed: seed))
        return (image, data)
    }

    @Test func passesTheSharedConformanceSuite() async throws {
        try await GeneratorConformance.check(
            generator, request: BadgeRequest(prompt: "A pair of dumbbells", size: 128, seed: 7), expectDeterministic: true)
    }

    /// A batch draws each image whole on one thread (ImageThreads.limit = 1),
    /// a single badge band by band on every core, its caption fitted on a
    /// thread of its own: the bytes must not tell them apart, whatever the
    /// style and effects.
    @Test(arguments: [("A pair of dumbbells", "medal", 1024), ("A path through a forest", "tile", 512),
                      ("Run a marathon at sunrise, golden grain glow", "medal", 768), ("Drink more water", "flat", 384),
                      ("Read 20 books", "sketch", 512)])
    func oneThreadOrManyGiveTheSameBytes(prompt: String, style: String, size: Int) async throws {
        let (_, many) = try await render(prompt, style: style, size: size)
        let (_, one) = try await ImageThreads.$limit.withValue(1) { try await render(prompt, style: style, size: size) }
        #expect(one == many)
    }

    /// The thread drawing a badge works on its own bands and PNG bands, and
    /// takes each once it is ready (a PNG band once the rows it reads are
    /// drawn): with every thread of badge's pool busy elsewhere, it draws and
    /// encodes the whole badge alone, the same bytes, with nothing waiting
    /// for a piece that no thread has taken.
    @Test func aBadgeIsFinishedWhileEveryPoolThreadIsBusy() async throws {
        let request = BadgeRequest(prompt: "A pair of dumbbells", style: "medal", size: 1024, seed: 3)
        let expected = try generator.render(request)
        let pool = WorkerThreads.shared
        let holding = Gate(), release = Gate()
        let blocker = Thread {
            pool.share(threads: pool.threads + 1) {
                if WorkerThreads.isWorkerThread {
                    holding.arrive()
                    _ = release.wait()
                } else {
                    _ = holding.wait(for: pool.threads)
                }
            }
        }
        blocker.start()
        defer { release.arrive() }
        let held = try await onThreadOfItsOwn("every pool thread to be held", limit: .seconds(300)) { holding.wait(for: pool.threads) }
        try #require(held, "\(holding.arrivals) of the pool's \(pool.threads) threads took the blocker's parts")
        let generator = self.generator
        let alone = try await onThreadOfItsOwn("a badge drawn with the pool busy", limit: .seconds(300)) { try generator.render(request) }
        #expect(alone == expected)
    }

    /// What badge-bench times as "drawing" and "encoding" apart must be what
    /// `generate` writes, where the drawing threads also compress.
    @Test(arguments: [("medal", 1024), ("tile", 512), ("flat", 300)])
    func drawingThenEncodingGivesWhatGenerateWrites(style: String, size: Int) async throws {
        let request = BadgeRequest(prompt: "A pair of dumbbells", style: style, size: size, seed: 3)
        let (_, written) = try await render(request.prompt, seed: request.seed, style: style, size: size)
        let rendered = try generator.render(request)
        #expect(rendered == written)
        #expect(try generator.encode(generator.draw(request)) == written)
    }

    /// zlib's check runs while the bands are compressed, whichever way a
    /// style is encoded (in bands beside the drawing, or after it), and its
    /// proof is of exactly the bytes written.
    @Test(arguments: [("medal", 1024), ("tile", 512), ("sketch", 300), ("flat", 64)])
    func theEncodersCheckVouchesForTheBytesItMade(style: String, size: Int) throws {
        let request = BadgeRequest(prompt: "A pair of dumbbells", style: style, size: size, seed: 3)
        let result = try BadgeArt(request: request, caption: true, compression: 2).render()
        let proof = try #require(result.inflated, "no check ran while the \(style) badge was encoded")
        #expect(proof.vouches(for: result.png))
        try PNGDataCheck.verify(result.png)
        let other = try BadgeArt(request: BadgeRequest(prompt: "A pair of dumbbells", style: style, size: size, seed: 4),
                                 caption: true, compression: 2).render()
        #expect(!proof.vouches(for: other.png))
    }

    @Test func aCaptionDoesNotEndOnPunctuation() {
        #expect(PromptReading("Run a marathon at sunrise, golden grain glow").caption == "RUN A MARATHON AT SUNRISE")
        // A small word followed by punctuation is still a small word.
        #expect(Caption.forms("WALK THROUGH, THE PARK DAILY").allSatisfy { !$0.hasSuffix("THROUGH") && !$0.hasSuffix(",") })
    }

    @Test func theSameRequestGivesTheSameBytesAndAnotherSeedAnotherBadge() async throws {
        let (_, a) = try await render("A path through a forest", seed: 11)
        let (_, b) = try await render("A path through a forest", seed: 11)
        let (_, c) = try await render("A path through a forest", seed: 12)
        #expect(a == b)
        #expect(a != c)
        // Different enough to see: many pixels differ, not a single one.
        let pa = try GDImage.decodePNG(a), pc = try GDImage.decodePNG(c)
        var differing = 0
        for y in stride(from: 0, to: 256, by: 4) { for x in stride(from: 0, to: 256, by: 4) where pa.pixel(x, y) != pc.pixel(x, y) { differing += 1 } }
        #expect(differing > 400, "only \(differing) of 4096 sampled pixels differ")
    }

    @Test(arguments: ["medal", "tile", "flat", "sketch"])
    func everyStyleAtTheSmallestSize(style: String) async throws {
        try await checkStyle(style, size: 64)
    }

    /// The largest tile, with its grain (the one badge past the intake's limit
    /// for others' images), on one thread: a debug build takes a minute of a
    /// core for it, and the other tests keep the other core. Every style at
    /// this size is drawn by the release binary, where it takes a second
    /// (`LargestBadgeTests`, in the end-to-end suite against that binary).
    @Test func theLargestTile() async throws {
        try await ImageThreads.$limit.withValue(1) { try await checkStyle("tile", size: 4096) }
    }

    /// The badge's size, and its corners: transparent when round, opaque for a
    /// tile. The largest tile has grain too (incompressible: past the intake's
    /// 20 MiB for others' images, which a badge is not held to), on a bright
    /// face where none of the grain is clipped.
    private func checkStyle(_ style: String, size: Int) async throws {
        let grainy = style == "tile" && size == 4096
        let (_, data) = try await render(grainy ? "Drink more water, grainy, bright" : "Drink more water", style: style, size: size)
        if grainy { #expect(data.count > ImageLimits.default.maxFileBytes) }
        let decoded = try GDImage.decodePNG(data, limits: ImageLimits.default.admittingDrawing(side: size))
        #expect(decoded.width == size && decoded.height == size)
        let corner = decoded.pixel(1, 1)
        // Medal, flat and sketch are round (transparent corners); a tile is full-bleed (opaque corners).
        if style == "tile" { #expect(corner.a == 255) } else { #expect(corner.a == 0) }
        #expect(decoded.pixel(size / 2, size / 2).a == 255)
    }

    @Test func anUnknownStyleSaysWhichExist() async throws {
        do {
            _ = try await render("x", style: "watercolour")
            Issue.record("must fail")
        } catch let error as BadgeError {
            #expect(error.code == .usage)
            #expect(error.hint?.contains("medal, tile, flat, sketch") == true)
        }
    }

    @Test(arguments: [
        ("A pair of dumbbells", Motif.dumbbells), ("Go to the gym", .dumbbells), ("Run a marathon", .runner),
        ("running every day", .runner), ("Become a runner", .runner), ("my first 5k", .runner),
        ("A path through a forest", .path), ("Walk in the woods", .path), ("Plant a tree", .tree),
        ("Read 20 books", .book), ("Drink more water", .drop), ("Love my family", .heart),
        ("Watch the sunrise", .sun), ("Climb a mountain", .mountain), ("早起", .alarmClock), ("🎉🎉", .abstract),
        ("Be kinder", .heart), ("", .abstract),
        ("Cycle to work", .bicycle), ("Swim twice a week", .swimmer), ("Meditate daily", .meditation), ("Yoga mornings", .yoga),
        ("Sleep before midnight", .bed), ("Watch the stars", .moon), ("Surf the ocean", .waves), ("Write a journal", .pencil),
        ("Learn the guitar", .music), ("Code every day", .laptop), ("Speak Spanish", .language), ("Eat more greens", .leaf),
        ("Less coffee", .cup), ("Save money", .piggyBank), ("Travel the world", .plane), ("Photography walks", .camera),
        ("Learn something new", .book), ("Walk every day", .path),
    ])
    func wordsChooseTheMotif(prompt: String, motif: Motif) {
        #expect(PromptReading(prompt).scene.0 == motif)
    }

    @Test(arguments: Motif.allCases)
    func everyMotifDrawsInkOnTheFace(motif: Motif) throws {
        let canvas = try Canvas(width: 200, height: 200, background: RGBA(20, 40, 90))
        let scene = SceneRecorder(width: 200, height: 200)
        var painter = MotifPainter(scene: scene, frame: Frame(center: Point(100, 100), radius: 80), ink: .white,
                                   cut: RGBA(20, 40, 90), random: SplitMix64(seed: 1))
        painter.draw(motif)
        canvas.draw(scene.scene)
        var inked = 0
        for y in 0..<200 { for x in 0..<200 where canvas.pixel(x, y).r > 200 { inked += 1 } }
        // A recognisable pictogram covers a fair part of its box: neither a speck nor a blot.
        #expect(inked > 2_000 && inked < 30_000, "\(motif) inks \(inked) of 40000 pixels")
    }

    @Test func stylesAndEffectsCanBeAskedForInThePrompt() {
        #expect(PromptReading("A minimalist tree").style == .flat)
        #expect(PromptReading("a sketch of a cup").style == .sketch)
        #expect(PromptReading("Run --style tile").style == .tile)
        let flagged = PromptReading("Run a marathon --ar 16:9 --chaos 50")
        #expect(flagged.notes == ["--ar 16:9 ignored: a badge is always square", "--chaos ignored: the procedural backend knows --ar and --style"])
        #expect(flagged.caption == "RUN A MARATHON")
        #expect(PromptReading("glowing neon sun, grainy").glow && PromptReading("glowing neon sun, grainy").grain)
        #expect(PromptReading("A minimalist heart").caption == "HEART")
        #expect(PromptReading("Hike in sea green").colorWords == ["seagreen"])
        #expect(PromptReading("a crimson heart").colorWords == ["crimson"])
    }

    @Test func anExplicitStyleWinsOverThePromptAndSketchIsLineArt() async throws {
        let (_, tile) = try await render("A minimalist heart", style: "tile", size: 128)
        #expect(try GDImage.decodePNG(tile).pixel(1, 1).a == 255, "the explicit tile wins over 'minimalist'")
        let (image, sketch) = try await render("A sketch of a heart", size: 256)
        #expect(image.extra["style"] == "sketch (from the prompt)")
        // Line art: the middle of the heart is paper, not ink.
        let centre = try GDImage.decodePNG(sketch).pixel(128, 128)
        #expect(centre.r > 200 && centre.g > 200, "\(centre)")
    }

    @Test func aSecondMotifStandsFaintlyBehindTheFirst() async throws {
        #expect(PromptReading("Run at sunrise").backdrop?.0 == .sun)
        #expect(PromptReading("Read under the stars").backdrop?.0 == .moon)
        #expect(PromptReading("Read 20 books").backdrop == nil)
        #expect(PromptReading("A path through a forest").backdrop == nil)
        let (image, _) = try await render("Read under the stars", size: 128)
        #expect(image.extra["motif"] == "book <- read" && image.extra["backdrop"] == "moon <- stars")
        // A sunrise is the scene itself: nothing stands faintly behind.
        let (scene, _) = try await render("Run at sunrise", size: 128)
        #expect(scene.extra["motif"] == "runner <- run" && scene.extra["backdrop"] == nil)
    }

    @Test func aPathThroughAForestComposesBoth() {
        let (motif, words) = PromptReading("A path through a forest").scene
        #expect(motif == .path)
        #expect(words == ["path", "forest"])
    }

    @Test func nonLatinPromptsNeverCrashAndKeepWhatTheyCanRead() async throws {
        // Every script is drawn (CaptionWordsTests).
        #expect(PromptReading("早起 every day").caption == "早起 EVERY DAY")
        #expect(PromptReading("Пить больше воды blue").colorWords == ["blue"])
        for prompt in ["早起", "🎉 party", "Ünïcödé Ωmega", "\u{200B}\u{0301}"] {
            let (_, data) = try await render(prompt, size: 128)
            #expect(try ImageIntake().inspect(data) == ImageIntake.Header(format: .png, width: 128, height: 128))
        }
    }

    @Test func theMetadataSaysWhichWordsChoseWhat() async throws {
        let (image, _) = try await render("Run a marathon in teal", size: 128)
        #expect(image.model == ProceduralGenerator.artEngineVersion)
        #expect(image.extra["motif"] == "runner <- run")
        #expect(image.extra["palette"]?.hasPrefix("teal") == true)
        #expect(image.isEncodedInProcess)
    }

    @Test func configOptionsAreReadStrictly() throws {
        var registry = BackendRegistry()
        ProceduralGenerator.register(in: &registry)
        let bad = try BadgeConfig.parse(Data(#"{"backends": {"p": {"type": "procedural", "captions": false}}}"#.utf8), file: "c.json")
        do {
            _ = try registry.makeBackend(named: "p", in: bad, environment: BadgeEnvironment())
            Issue.record("an unknown option must be refused")
        } catch let error as BadgeError {
            #expect(error.description.hasPrefix("c.json:1:43: backends.p.captions: unknown key"))
            #expect(error.hint?.contains("did you mean \"caption\"") == true)
        }
    }
}
