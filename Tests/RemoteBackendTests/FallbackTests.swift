import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
@testable import RemoteBackend

@Suite(.threadsOfTheirOwn, .serialized)
struct FallbackTests {
    @Test func aFailingBackendHandsOverToItsFallbackAndTheBadgeSaysSo() async throws {
        let h = try RemoteHarness()
        defer { h.stop() }
        let text = """
            {"backends": {
              "remote": {"type": "http", "api": "openai", "url": "http://127.0.0.1:\(h.server.port)/503/v1", "retries": 0, "fallback": "backup"},
              "backup": {"type": "http", "api": "openai", "url": "http://127.0.0.1:\(h.server.port)/ok/v1"}
            }}
            """
        let config = try BadgeConfig.parse(Data(text.utf8), file: "f.json")
        #expect(config.fallbackChain(for: "remote") == ["remote", "backup"])
        var registry = BackendRegistry()
        RemoteGenerator.register(in: &registry)
        let environment = h.environment()
        let primary = try registry.makeBackend(named: "remote", in: config, environment: environment)
        let backup = try registry.makeBackend(named: "backup", in: config, environment: environment)
        let outcome = try await Pipeline(environment: environment).run(
            BadgeRequest(prompt: "Swim twice a week", size: 256, seed: 1), backend: primary, fallbacks: [backup],
            commitment: .init(timeZone: .gmt), to: .store(h.store))
        #expect(outcome.metadata.backend == "backup")
        #expect(outcome.metadata.extra["fallback-from"]?.hasPrefix("remote: HTTP 503") == true)
        #expect(try BadgeMetadata.read(from: h.store.badgeURL)?.extra["fallback-from"] == outcome.metadata.extra["fallback-from"])
    }

    @Test func fallbacksMustExistAndMustNotGoRoundInACircle() throws {
        let missing = #"{"backends": {"a": {"type": "procedural", "fallback": "nowhere"}}}"#
        let absent = #expect(throws: BadgeError.self) { try BadgeConfig.parse(Data(missing.utf8), file: "f.json") }
        #expect(absent?.keyPath == "backends.a.fallback" && absent?.message == "no backend is named \"nowhere\"", "\(String(describing: absent))")
        let circle = #"{"backends": {"a": {"type": "procedural", "fallback": "b"}, "b": {"type": "procedural", "fallback": "a"}}}"#
        do {
            _ = try BadgeConfig.parse(Data(circle.utf8), file: "f.json")
            Issue.record("a circle must be refused")
        } catch let error as BadgeError {
            #expect(error.description.contains("a -> b -> a"), "\(error)")
            #expect(error.keyPath == "backends.a.fallback")
        }
    }
}
