import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue #24, end to end: what came from outside (a foreign badge's prompt, a
/// server's error) reaches the terminal without control characters or a key,
/// `--json` escapes them, and a FIFO in the store is an error, not a hang.
@Suite(.threadsOfTheirOwn)
struct HostileOutputTests {
    static let imageServer = Sandbox.repository.appendingPathComponent("Tests/RemoteBackendTests/Fixtures/fake_image_server.py")
    static let escapes = "walk\u{1B}]0;pwned\u{07}\u{1B}[2J daily\u{9B}31m\u{7F}"

    static func hasControls(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) }
    }

    @Test func aForeignPromptIsPrintedWithoutItsEscapesAndEscapedInJSON() async throws {
        let s = try Sandbox()
        let metadata = BadgeMetadata(
            commitmentDate: Date(timeIntervalSince1970: 1_800_000_000), timeZone: "UTC", createdAt: Date(),
            prompt: Self.escapes, backend: "procedural", backendType: "procedural", size: 16)
        try s.storeObject.commit(.stamping(metadata, into: TestPNG.solid(width: 16, height: 16, rgb: (1, 2, 3))))

        let shown = try await s.run(["show"])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(!Self.hasControls(shown.stdout), "\(shown.stdout.unicodeScalars.map(\.value))")
        #expect(shown.stdout.contains("walk]0;pwned[2J daily31m"), "\(shown.stdout)")

        let json = try await s.run(["show", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(!Self.hasControls(json.stdout), "\(json.stdout.unicodeScalars.map(\.value))")
        #expect(json.stdout.contains(#"\u001b]0;pwned\u0007\u001b[2J daily\u009b31m\u007f"#), "\(json.stdout)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["prompt"] as? String == Self.escapes, "the JSON still says exactly what the badge says")
    }

    @Test func aServersEscapesAndEchoedKeyNeverReachTheTerminal() async throws {
        let server = try FixtureServer(script: Self.imageServer)
        defer { server.stop() }
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("config.json")
        try Data("""
            {"backends": {"remote": {"type": "http", "api": "openai", "url": "http://127.0.0.1:\(server.port)/echo-key-in-request-id/v1",
                                     "apiKeyEnv": "BADGE_TEST_KEY", "retries": 0}}}
            """.utf8).write(to: config)
        let key = "sk-e2e-secret-0123456789"
        let result = try await s.run(["generate", "--config", config.path, "--backend", "remote", "--verbose", "a calm sea"],
                                     extraEnvironment: ["BADGE_TEST_KEY": key])
        #expect(result.status == 1)
        #expect(result.stderr.contains("refused 31mfor you (request id req-********)"), "\(result.stderr)")
        #expect(!result.stderr.contains(key) && !result.stdout.contains(key))
        #expect(!Self.hasControls(result.stderr), "\(result.stderr.unicodeScalars.map(\.value))")
    }

    /// A FIFO as badge.png blocked `show`, `history` and `generate` in open().
    @Test func aFIFOAsTheBadgeIsAnErrorNotAHang() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "--seed", "1", "the first promise"]).status == 0)
        try FileManager.default.removeItem(at: s.store.appendingPathComponent("badge.png"))
        #expect(mkfifo(s.store.appendingPathComponent("badge.png").path, 0o600) == 0)
        let shownFIFO = try await s.run(["show"], timeout: 30)
        #expect(shownFIFO.status == 1, "\(shownFIFO.stderr)")
        #expect(shownFIFO.stderr.contains("it is a FIFO (named pipe), not a regular file"), "\(shownFIFO.stderr)")
        // The history does not need the current badge: it lists what it has.
        let history = try await s.run(["history"], timeout: 30)
        #expect(history.status == 0, "\(history.stderr)")
        let generated = try await s.run(["generate", "--size", "64", "--seed", "2", "the second promise"], timeout: 30)
        #expect(generated.status == 0, "\(generated.stderr)")
        let shown = try await s.run(["show"], timeout: 30)
        #expect(shown.stdout.contains("the second promise"), "\(shown.stdout)")
    }
}
