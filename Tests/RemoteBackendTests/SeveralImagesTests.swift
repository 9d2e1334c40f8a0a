import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Testing
@testable import RemoteBackend

/// `generate --choose N` with an http backend: the candidates come from one
/// request for N images where the API takes a count (OpenAI's `n`, AUTOMATIC1111's
/// `batch_size`), from parallel requests otherwise. The fake server checks each
/// request against the OpenAI schema (and A1111's request model) and answers
/// image `i` in its own colour, so each candidate can be told apart.
@Suite(.threadsOfTheirOwn, .serialized)
struct SeveralImagesTests {
    /// The fake server's colours for images 0, 1, 2, ... of one answer (fake_image_server.py's COLOURS).
    static let colours: [(r: Int, g: Int, b: Int)] = [(200, 40, 90), (40, 160, 90), (40, 90, 200), (230, 180, 40), (120, 60, 200)]

    struct Run {
        var candidates: [Candidates.Candidate]
        /// The image requests the server received: path, body, schema violations.
        var posts: [(path: String, body: [String: Any], violations: [String])]
        var downloads: [String]
    }

    /// Makes `count` candidates of "Run a marathon" (seed 42) with a backend on the
    /// fake server's `mode`, as `generate --choose` makes them.
    func candidates(
        _ count: Int, mode: String, api: String = "openai", options: [String: String] = [:], fallback: String? = nil
    ) async throws -> Run {
        let h = try RemoteHarness()
        defer { h.stop() }
        let environment = h.environment()
        let backend = try h.backend(try h.config(mode: mode, api: api, options: options.merging(["retries": "0"]) { a, _ in a }),
                                    environment: environment)
        var fallbacks: [BackendInstance] = []
        if let fallback {
            fallbacks = [try h.backend(try h.config(mode: fallback, api: api), environment: environment)]
        }
        let request = BadgeRequest(prompt: "Run a marathon", size: 64, seed: 42)
        let made = try await Candidates.make(
            Candidates.requests(for: request, count: count), pipeline: Pipeline(environment: environment), backend: backend,
            fallbacks: fallbacks, commitment: .init(timeZone: .gmt), limit: 4)
        let received = try await h.received()
        let posts = received.filter { ($0["path"] as? String ?? "").hasSuffix("/images/generations") || ($0["path"] as? String ?? "").contains("/sdapi/") }
            .map { ($0["path"] as? String ?? "", $0["body"] as? [String: Any] ?? [:], $0["violations"] as? [String] ?? ["no list"]) }
        let downloads = received.filter { $0["mode"] as? String == "download" }.compactMap { $0["path"] as? String }
        #expect(h.currentBadge == h.previousBadge, "making candidates commits nothing")
        return Run(candidates: made, posts: posts, downloads: downloads)
    }

    /// The colour of a candidate's picture, as an index into `colours`.
    func colour(of candidate: Candidates.Candidate) throws -> Int? {
        let made = try #require(candidate.made, "candidate \(candidate.number): \(candidate.failure?.description ?? "")")
        let pixel = try GDImage.decodePNG(made.png).pixel(8, 8)
        return Self.colours.firstIndex { abs($0.r - Int(pixel.r)) < 3 && abs($0.g - Int(pixel.g)) < 3 && abs($0.b - Int(pixel.b)) < 3 }
    }

    @Test func openAIMakesFourCandidatesInOneRequest() async throws {
        let run = try await candidates(4, mode: "ok")
        #expect(run.posts.count == 1, "one request for the four: \(run.posts.map(\.body))")
        let post = try #require(run.posts.first)
        #expect(post.body["n"] as? Int == 4)
        #expect(post.violations.isEmpty, "\(post.violations)")
        #expect(run.candidates.map(\.number) == [1, 2, 3, 4])
        // Candidate i is the answer's image i, each through the intake and stamped.
        #expect(try run.candidates.map { try colour(of: $0) } == [0, 1, 2, 3])
        for candidate in run.candidates {
            let metadata = try #require(candidate.made?.metadata)
            #expect(metadata.revisedPrompt == "a revised prompt")
            #expect(metadata.model == "test-model" && metadata.backend == "remote")
            #expect(metadata.seed == candidate.request.seed, "OpenAI takes no seed: the badge keeps the candidate's own")
            #expect(candidate.made!.png.range(of: Data(metadata.id.utf8)) != nil, "the metadata is stamped into the PNG")
        }
        #expect(Set(run.candidates.compactMap { $0.made?.metadata.id }).count == 4)
    }

    @Test func dallE3TakesOneImageARequestSoItGetsParallelRequests() async throws {
        let run = try await candidates(3, mode: "ok", options: ["model": #""dall-e-3""#])
        #expect(run.posts.count == 3)
        for post in run.posts {
            #expect(post.body["n"] as? Int == 1)
            #expect(post.violations.isEmpty, "\(post.violations)")
        }
        #expect(run.candidates.allSatisfy { $0.made != nil }, "\(run.candidates.map { $0.failure?.description ?? "ok" })")
    }

    @Test func imagesPerRequestSplitsTheCandidatesIntoRequests() async throws {
        let run = try await candidates(5, mode: "ok", options: ["imagesPerRequest": "2"])
        #expect(run.posts.map { $0.body["n"] as? Int ?? 0 }.sorted() == [1, 2, 2])
        #expect(run.posts.allSatisfy { $0.violations.isEmpty })
        // Each request's images in order: 1-2, 3-4, then 5 alone.
        #expect(try run.candidates.map { try colour(of: $0) } == [0, 1, 0, 1, 0])
    }

    @Test func resultURLsAreEachDownloaded() async throws {
        let run = try await candidates(3, mode: "url")
        #expect(run.posts.count == 1 && run.posts.first?.body["n"] as? Int == 3)
        #expect(run.downloads.sorted() == ["/files/badge-0.png", "/files/badge-1.png", "/files/badge-2.png"])
        #expect(try run.candidates.map { try colour(of: $0) } == [0, 1, 2])
    }

    @Test func aShortAnswerFailsOnlyTheMissingCandidates() async throws {
        let run = try await candidates(4, mode: "short")
        #expect(run.posts.count == 1)
        #expect(try run.candidates.prefix(2).map { try colour(of: $0) } == [0, 1])
        for candidate in run.candidates.suffix(2) {
            let failure = try #require(candidate.failure, "candidate \(candidate.number) has no image to show")
            #expect(failure.code == .generationFailed)
            #expect(failure.message == "the backend made 2 of the 4 images asked for; this one is missing", "\(failure)")
            #expect(failure.backend == "remote")
        }
    }

    @Test func aBrokenImageInTheAnswerFailsTheRequestAndSaysWhichImage() async throws {
        let run = try await candidates(3, mode: "second-not-base64")
        #expect(run.candidates.count == 3)
        for candidate in run.candidates {
            let failure = try #require(candidate.failure)
            #expect(failure.message == "the image in data[1] \"b64_json\" is not valid base64", "\(failure)")
        }
    }

    @Test func aFailedRequestHandsEachCandidateToTheFallback() async throws {
        let run = try await candidates(3, mode: "503", fallback: "ok")
        // The one request for three failed; the fallback (an OpenAI server too) was asked one by one.
        #expect(run.posts.map { $0.body["n"] as? Int ?? 0 }.sorted() == [1, 1, 1, 3])
        for candidate in run.candidates {
            let metadata = try #require(candidate.made?.metadata, "\(candidate.failure?.description ?? "")")
            #expect(metadata.extra["fallback-from"]?.hasPrefix("remote: HTTP 503") == true, "\(metadata.extra)")
        }
    }

    @Test func automatic1111MakesABatchAndKeepsEachImagesSeed() async throws {
        let run = try await candidates(4, mode: "ok", api: "automatic1111")
        #expect(run.posts.count == 1)
        let post = try #require(run.posts.first)
        #expect(post.path.hasSuffix("/sdapi/v1/txt2img"))
        #expect(post.body["batch_size"] as? Int == 4 && post.body["seed"] as? Int == 42)
        #expect(post.violations.isEmpty, "\(post.violations)")
        #expect(try run.candidates.map { try colour(of: $0) } == [0, 1, 2, 3])
        // The seeds the server's info names: 42, 43, 44, 45, as the candidates are numbered.
        #expect(run.candidates.map { $0.made?.metadata.seed } == [42, 43, 44, 45])
    }

    @Test func aBackendWithoutACountGetsOneRequestACandidate() async throws {
        let run = try await candidates(3, mode: "ok", api: "automatic1111", options: ["imagesPerRequest": "1"])
        #expect(run.posts.count == 3)
        #expect(run.posts.allSatisfy { $0.body["batch_size"] == nil && $0.violations.isEmpty })
        #expect(run.candidates.map { $0.made?.metadata.seed } == [42, 43, 44])
        #expect(Set(run.posts.compactMap { $0.body["seed"] as? Int }) == [42, 43, 44])
    }

    @Test(arguments: ["openai", "automatic1111"])
    func theRemoteBackendPassesTheConformanceSuite(api: String) async throws {
        let h = try RemoteHarness()
        defer { h.stop() }
        let environment = h.environment()
        let backend = try h.backend(try h.config(mode: "ok", api: api), environment: environment)
        #expect((backend.generator as? any MultiImageGenerator)?.imagesPerCall(for: BadgeRequest(prompt: "x")) ?? 0 >= 2)
        try await GeneratorConformance.check(backend.generator, request: BadgeRequest(prompt: "Run a marathon", size: 64, seed: 3))
        #expect(try await h.received().contains { ($0["body"] as? [String: Any])?[api == "openai" ? "n" : "batch_size"] as? Int == 2 },
                "the suite asked for two images in one request")
    }

    @Test func imagesPerRequestIsCheckedWhereTheConfigSaysIt() throws {
        var registry = BackendRegistry()
        RemoteGenerator.register(in: &registry)
        let cases: [(String, String)] = [
            (#""api": "openai", "url": "https://x/v1", "imagesPerRequest": 0"#, "c.json:1:97: backends.r.imagesPerRequest: 0 is out of range"),
            (#""api": "openai", "url": "https://x/v1", "imagesPerRequest": 11"#, "backends.r.imagesPerRequest: 11 is out of range"),
            (#""api": "automatic1111", "url": "http://x", "imagesPerRequest": "4""#, "backends.r.imagesPerRequest"),
            (#""api": "raw", "url": "https://x/run", "imagesPerRequest": 2"#, "\"imagesPerRequest\" applies only to \"api\": \"openai\" and \"automatic1111\""),
        ]
        for (members, expected) in cases {
            let config = try BadgeConfig.parse(Data(#"{"backends": {"r": {"type": "http", \#(members)}}}"#.utf8), file: "c.json")
            do {
                _ = try registry.makeBackend(named: "r", in: config, environment: BadgeEnvironment())
                Issue.record("\(members) must be refused")
            } catch let error as BadgeError {
                #expect(error.code == .config)
                #expect(error.description.contains(expected), "\(error.description)")
            }
        }
    }
}
