import BadgeKit
import Foundation
import Testing

// MARK: - 8. Completions complete values

extension FirstTenMinutesTests {
    /// What the shell asks the binary as the user types (argument-parser's `---completion`,
    /// as its generated scripts call it): the command path, the argument, the word index,
    /// the cursor, then the words typed.
    private func complete(_ s: Sandbox, _ command: String, _ argument: String, _ words: [String]) async throws -> [String] {
        let result = try await s.run(["---completion", command, "--", argument, String(words.count - 1), String(words.last?.count ?? 0)] + words)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func completionsOfferBackendsStylesFilesAndHistoryIDs() async throws {
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("config.json")
        try Data(#"{"backends": {"photos": {"type": "import", "fit": "contain"}}}"#.utf8).write(to: config)
        let backends = try await complete(s, "generate", "--backend", ["badge", "generate", "--config", config.path, "--backend", ""])
        #expect(Set(backends) == ["procedural", "import", "photos"], "\(backends)")
        let narrowed = try await complete(s, "import", "--backend", ["badge", "import", "--config", config.path, "--backend", "ph"])
        #expect(narrowed == ["photos"])

        #expect(try await s.run(["generate", "--size", "64", "one"]).status == 0)
        #expect(try await s.run(["generate", "--size", "64", "two"]).status == 0)
        let replaced = try #require(try s.storeObject.history().first).metadata.id
        #expect(try await complete(s, "restore", "positional@0", ["badge", "restore", ""]) == [replaced])

        for shell in ["bash", "zsh", "fish"] {
            let script = try await s.run(["--generate-completion-script", shell]).stdout
            #expect(script.contains("medal") && script.contains("sketch"), "\(shell): no styles")
        }
        let bash = try await s.run(["--generate-completion-script", "bash"]).stdout
        for command in ["import", "batch"] {
            let section = try #require(bash.range(of: "_badge_\(command)() {").map { bash[$0.upperBound...] })
            let body = section[..<(section.range(of: "\n}\n")?.lowerBound ?? section.endIndex)]
            #expect(body.contains("positional@0") == false && (body.contains("-f") || body.contains("-fX")), "\(command) does not complete files:\n\(body)")
        }
    }
}
