import BadgeKit
@testable import BadgeServer
import BadgeTestSupport
import Canvas
import Foundation
import Synchronization
import Testing

/// The studio asks a backend for a style in the backend's own spelling: a
/// compiled backend whose styles are capitalised is chosen by any case, as
/// `badge generate --style` chooses it (Pipeline's matching).
@Suite(.threadsOfTheirOwn)
struct StudioStyleTests {
    /// Draws a grey disc, whatever the style; says which styles it has.
    struct StyledGenerator: RegisteringGenerator {
        static func register(in registry: inout BackendRegistry) {
            registry.register("styled", summary: "capitalised styles") { _, _ in StyledGenerator() }
        }

        var styles: [String]? { ["Watercolour", "Ink"] }

        func style(askedForIn prompt: String) -> String? { prompt.hasSuffix("in ink") ? "Ink" : nil }

        func availability() async -> Availability { .available }

        func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
            let png = try await BlockingExecutor.run {
                let side = Double(request.size)
                let canvas = try Canvas(width: request.size, height: request.size, background: .white)
                canvas.fill(.circle(center: Point(side / 2, side / 2), radius: side * 0.4), with: .solid(RGBA(0x80, 0x80, 0x80)))
                return try PNGEncoder.encode(canvas)
            }
            return GeneratedImage(file: try workspace.write(png, to: "styled.png"), model: "styled 1")
        }
    }

    static func studio(in directory: URL, defaultStyle: String? = nil) throws -> Studio {
        var registry = BackendRegistry()
        StyledGenerator.register(in: &registry)
        let style = defaultStyle.map { #", "style": "\#($0)""# } ?? ""
        let config = try BadgeConfig.parse(Data(#"{"backends": {"s": {"type": "styled"}}, "defaults": {"backend": "s", "size": 64\#(style)}}"#.utf8),
                                           file: "config.json")
        let store = BadgeStore(directory: directory.appendingPathComponent("store"))
        return Studio(context: ServeContext(config: config, environment: BadgeEnvironment(), registry: registry, store: store), maxJobs: 4)
    }

    static func request(_ json: String) throws -> Studio.GenerateRequest {
        try JSONDecoder().decode(Studio.GenerateRequest.self, from: Data(json.utf8))
    }

    @Test(arguments: ["watercolour", "WATERCOLOUR", "Watercolour"])
    func aStyleIsChosenInAnyCaseAndAskedForInTheBackendsSpelling(given: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-studio-style-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let studio = try Self.studio(in: directory)
        let job = try await studio.generate(try Self.request(#"{"promise": "Paint more", "style": "\#(given)", "count": 2, "seed": "5"}"#))
        for await _ in job.listen().events {}
        for number in 1...2 {
            let made = try #require(job.candidate(number), "candidate \(number) was not made")
            #expect(made.metadata.style == "Watercolour")
        }
    }

    /// With no style chosen, the candidates vary through the backend's
    /// styles from the config's default; a promise whose words ask for a
    /// style keeps it in every candidate, and is not handed the default.
    @Test func candidatesVaryInStyleUnlessThePromiseAsksForOne() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-studio-style-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let studio = try Self.studio(in: directory, defaultStyle: "ink")
        for (promise, styles) in [("Paint more", ["Ink", "Watercolour", "Ink"]), ("Paint more in ink", [nil, nil, nil])] {
            let job = try await studio.generate(try Self.request(#"{"promise": "\#(promise)", "count": 3, "seed": "5"}"#))
            for await _ in job.listen().events {}
            let made = try (1...3).map { number in try #require(job.candidate(number), "\(promise): candidate \(number) was not made") }
            #expect(made.map(\.metadata.style) == styles, "\(promise)")
        }
    }

    @Test func aStyleTheBackendLacksIsRefusedNamingItsStyles() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-studio-style-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let studio = try Self.studio(in: directory)
        do {
            _ = try await studio.generate(try Self.request(#"{"promise": "Paint more", "style": "Oil\u0007", "count": 2}"#))
            Issue.record("a style the backend lacks must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .usage)
            #expect(error.message == #"the styled backend "s" has no style "Oil\u{7}""#, "\(error.message)")
            #expect(error.hint == "choose one of: Watercolour, Ink")
        }
    }

    /// A backend is set up once for the server's life, and on a thread of
    /// badge's: its set-up may read files (a ComfyUI workflow), which must
    /// not hold up the pool that serves requests.
    @Test func aBackendIsSetUpOnceOnAThreadOfBadgesOwn() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-studio-style-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let setUps = Mutex<[String?]>([])
        var registry = BackendRegistry()
        registry.register("styled", summary: "capitalised styles") { _, _ in
            setUps.withLock { $0.append(currentThreadName()) }
            return StyledGenerator()
        }
        let config = try BadgeConfig.parse(Data(#"{"backends": {"s": {"type": "styled"}}, "defaults": {"backend": "s", "size": 64}}"#.utf8),
                                           file: "config.json")
        let studio = Studio(context: ServeContext(config: config, environment: BadgeEnvironment(), registry: registry,
                                                  store: BadgeStore(directory: directory.appendingPathComponent("store"))), maxJobs: 4)
        #expect(await studio.backends().contains { $0.name == "s" && $0.available })
        let job = try await studio.generate(try Self.request(#"{"promise": "Paint more", "count": 2, "seed": "5"}"#))
        for await _ in job.listen().events {}
        #expect(job.candidate(1) != nil && job.candidate(2) != nil)
        #expect(setUps.withLock { $0 } == ["badge.blocking"])
    }
}
