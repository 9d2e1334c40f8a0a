import BadgeKit
import Foundation
import Testing

// MARK: - 4. A badge prompt line: the purpose is the promise, the line the prompt

extension FirstTenMinutesTests {
    @Test func aPromptLinesPurposeIsThePromiseAndTheCaptionDrawnIsShown() async throws {
        let s = try Sandbox()
        let line = try await s.run(["prompt", "--purpose", "Learn Spanish", "--vibe", "calm", "--metaphor", "speech",
                                    "--style", "flat", "--color", "teal", "--color", "gold"])
        #expect(line.status == 0)
        let prompt = line.stdout.trimmingCharacters(in: .newlines)
        #expect(prompt.hasPrefix("Learn Spanish, calm mood") && prompt.hasSuffix("--ar 1:1"))
        let made = try json(try await s.run(["generate", "--json", "--size", "256", "--seed", "3", prompt]).stdout)
        #expect(made["promise"] as? String == "Learn Spanish")
        #expect(made["prompt"] as? String == prompt)
        #expect(made["caption"] as? String == "LEARN SPANISH", "\(made)")

        let shown = try await s.run(["show"])
        #expect(shown.stdout.contains("Promise          Learn Spanish\n") || shown.stdout.range(of: #"Promise +Learn Spanish\n"#, options: .regularExpression) != nil,
                "\(shown.stdout)")
        #expect(shown.stdout.range(of: #"Caption +LEARN SPANISH"#, options: .regularExpression) != nil, "\(shown.stdout)")
        // The card's heading is the promise.
        let cardDirectory = s.root.appendingPathComponent("card")
        let html = try await s.run(["card", "html", cardDirectory.path])
        #expect(html.status == 0, "\(html.stderr)")
        let page = try String(contentsOf: cardDirectory.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(page.contains("Learn Spanish") && !page.contains("calm mood, a speech bubble"), "the card shows the whole line")
        #expect(try await s.run(["generate", "--size", "64", "Next"]).status == 0)
        let history = try await s.run(["history"])
        #expect(history.stdout.contains("Learn Spanish (LEARN SPANISH)") && !history.stdout.contains("calm mood"), "\(history.stdout)")
        // It still verifies: the line is what was drawn from.
        #expect(try await s.run(["verify", s.store.appendingPathComponent("history").appendingPathComponent("\(made["id"] as! String).png").path]).status == 0)
    }

    @Test func generateCaptionSetsTheCaptionOutright() async throws {
        let s = try Sandbox()
        let made = try json(try await s.run(["generate", "--json", "--size", "256", "--seed", "3", "--caption", "¡Vamos, 2027!", "Learn Spanish"]).stdout)
        // Drawn as given, punctuation and all (the art engine draws every character some font has).
        #expect(made["caption"] as? String == "¡VAMOS, 2027!", "\(made)")
        let verified = try await s.run(["verify"])
        #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
        let imported = try await s.run(["import", "--size", "64", "--caption", "Hi", Self.picture.path, "My picture"])
        #expect(imported.status == 64 && imported.stderr.contains("draws no caption"), "\(imported.stderr)")
    }
}
