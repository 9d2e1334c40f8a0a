import BadgeKit
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

// MARK: - 9. --json errors are JSON

extension FirstTenMinutesTests {
    private func jsonError(_ text: String) throws -> [String: Any] {
        let object = try json(text)
        return try #require(object["error"] as? [String: Any], "no \"error\" object: \(text)")
    }

    @Test func errorsInJSONModeAreJSONOnStandardError() async throws {
        let s = try Sandbox()
        let missing = try await s.run(["show", "--json"])
        #expect(missing.status == 1 && missing.stdout.isEmpty)
        let notFound = try jsonError(missing.stderr)
        #expect(notFound["code"] as? String == "not-found" && notFound["message"] as? String == "there is no badge yet")
        #expect((notFound["hint"] as? String)?.contains("badge generate") == true && (notFound["path"] as? String)?.hasSuffix("badge.png") == true)

        let backend = try await s.run(["generate", "--json", "--backend", "procedurl", "Run a 5k"])
        #expect(backend.status == 64)
        let unknown = try jsonError(backend.stderr)
        #expect(unknown["code"] as? String == "unknown-backend" && (unknown["hint"] as? String)?.contains("did you mean \"procedural\"?") == true,
                "\(backend.stderr)")

        let validation = try await s.run(["generate", "--json", "--size", "5", "Run a 5k"])
        #expect(validation.status == 64)
        let usage = try jsonError(validation.stderr)
        #expect(usage["code"] as? String == "usage" && (usage["message"] as? String)?.contains("--size must be from 64 to 4096") == true,
                "\(validation.stderr)")

        let typo = try jsonError(try await s.run(["generate", "--json", "--stlye", "x", "Run"]).stderr)
        #expect(typo["code"] as? String == "usage" && typo["hint"] as? String != nil)
    }

    @Test func promptHasJSON() async throws {
        let s = try Sandbox()
        let result = try await s.run(["prompt", "--json", "--purpose", "Learn Spanish", "--vibe", "calm", "--metaphor", "speech", "--color", "teal"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try json(result.stdout)
        #expect(object["purpose"] as? String == "Learn Spanish" && object["vibe"] as? String == "calm")
        #expect(object["colors"] as? [String] == ["teal"])
        let line = try #require(object["prompt"] as? String)
        let plain = try await s.run(["prompt", "--purpose", "Learn Spanish", "--vibe", "calm", "--metaphor", "speech", "--color", "teal"])
        #expect(plain.stdout == line + "\n")
    }
}
