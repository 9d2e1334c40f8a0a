import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Testing

/// docs/EXTENDING.md, followed to the letter by the backend of Examples/consumer
/// (SolidGenerator.swift here is a link to it): its code is the document's, it registers with the document's
/// one line, passes the shared conformance suite and makes a real badge.
@Suite(.threadsOfTheirOwn)
struct SampleBackendTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What Sources/BadgeCLI/Backends.swift would do, with the document's line added.
    static var registry: BackendRegistry {
        var registry = BackendRegistry()
        SolidGenerator.register(in: &registry)
        return registry
    }

    static func swiftBlocks(in markdown: String) -> [String] {
        markdown.components(separatedBy: "```swift\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
    }

    @Test func theDocumentShowsThisBackendsCodeExactly() throws {
        let document = try String(contentsOf: Self.repository.appendingPathComponent("docs/EXTENDING.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("SolidGenerator.swift"), encoding: .utf8)
        let blocks = Self.swiftBlocks(in: document)
        #expect(blocks.contains(source), "docs/EXTENDING.md no longer shows Tests/SampleBackendTests/SolidGenerator.swift as it is")
        #expect(document.contains("SolidGenerator.register(in: &registry)"))
        #expect(blocks.contains { $0.contains("try await GeneratorConformance.check(") })
    }

    @Test func itPassesTheSharedConformanceSuite() async throws {
        try await GeneratorConformance.check(
            SolidGenerator(color: RGBA(0x2E, 0x86, 0xDE)), request: BadgeRequest(prompt: "Be kind", size: 64), expectDeterministic: true)
    }

    @Test func itIsConfiguredLikeEveryOtherBackend() throws {
        let text = "{\"backends\": {\n  \"blue\": {\"type\": \"solid\", \"colour\": \"#0000FF\"}\n}}"
        let config = try BadgeConfig.parse(Data(text.utf8), file: "sample.json")
        #expect {
            try Self.registry.makeBackend(named: "blue", in: config, environment: BadgeEnvironment(variables: [:]))
        } throws: { error in
            let error = try #require(error as? BadgeError)
            return error.description.hasPrefix("sample.json:2:29: backends.blue.colour: unknown key \"colour\"")
                && error.hint?.hasPrefix("did you mean \"color\"?") == true
        }
    }

    @Test func itMakesABadgeThroughThePipeline() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-sample-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try BadgeConfig.parse(Data(##"{"backends": {"red": {"type": "solid", "color": "#C0392B"}}}"##.utf8), file: nil)
        let environment = BadgeEnvironment(variables: [:])
        let backend = try Self.registry.makeBackend(named: "red", in: config, environment: environment)
        let outcome = try await Pipeline(environment: environment).run(
            BadgeRequest(prompt: "Be kind", size: 64), backend: backend, commitment: .init(timeZone: .gmt),
            to: .store(BadgeStore(directory: directory)))
        #expect(outcome.metadata.backendType == "solid" && outcome.metadata.model == "solid 1")
        let image = try GDImage.decodePNG(try Data(contentsOf: outcome.url))
        #expect(image.pixel(32, 32) == RGBA(0xC0, 0x39, 0x2B) && image.pixel(1, 1) == .white)
    }
}
