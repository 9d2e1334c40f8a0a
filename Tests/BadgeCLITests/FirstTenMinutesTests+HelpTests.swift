import Foundation
import Testing

// MARK: - 7. Help that says what there is, with examples whole

extension FirstTenMinutesTests {
    @Test func generateHelpListsTheStylesAndTheDefaultSize() async throws {
        let s = try Sandbox()
        let help = try await s.run(["generate", "--help"])
        #expect(help.status == 0)
        for style in ["medal", "tile", "flat", "sketch"] { #expect(help.stdout.contains(style), "\(style) is not in:\n\(help.stdout)") }
        #expect(help.stdout.contains("1024"), "\(help.stdout)")
    }

    /// At 80 columns (no terminal), an example is never wrapped: a wrapped line
    /// starts in column 0, cutting a quoted promise in two.
    @Test(arguments: ["generate", "import", "batch", "prompt", "card", "verify", "config", "show", "history", "restore", "backends"])
    func examplesInHelpAreNotWrapped(command: String) async throws {
        let s = try Sandbox()
        let help = try await s.run([command, "--help"])
        #expect(help.status == 0)
        var inExamples = false
        var example = ""
        for line in help.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("Examples:") { inExamples = true; continue }
            guard inExamples else { continue }
            if line.isEmpty { inExamples = false; continue }
            #expect(line.hasPrefix("  "), "\(command) --help wraps an example: \(line)")
            // A shell command continued with a backslash is one example.
            example += String(line.split(separator: "#").first ?? "")
            if example.hasSuffix("\\") { example.removeLast(); continue }
            #expect(example.filter { $0 == "\"" }.count % 2 == 0 && example.filter { $0 == "'" }.count % 2 == 0,
                    "unbalanced quotes: \(example)")
            example = ""
        }
    }
}
