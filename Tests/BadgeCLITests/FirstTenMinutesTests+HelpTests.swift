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

    /// The man page is made from `--experimental-dump-help` (generate-manual): the
    /// top-level command lists the global options there, as its help does, and
    /// a subcommand's description is argument-parser's own.
    @Test func theManPagesDescriptionListsTheGlobalOptions() async throws {
        let s = try Sandbox()
        func arguments(_ command: [String]) async throws -> [String: String] {
            let dump = try await s.run(command + ["--experimental-dump-help"])
            #expect(dump.status == 0, "\(dump.stderr)")
            let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
            let list = try #require((root["command"] as? [String: Any])?["arguments"] as? [[String: Any]])
            var found: [String: String] = [:]
            for argument in list {
                let names = (argument["names"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
                for name in names { found[name] = argument["abstract"] as? String ?? "" }
            }
            return found
        }
        let top = try await arguments([])
        #expect(top["store"]?.hasPrefix("Store directory") == true && top["config"]?.hasPrefix("Configuration file") == true
                && top["verbose"] != nil && top["version"] != nil, "\(top)")
        #expect(Set(top.keys) == ["config", "store", "v", "verbose", "version", "h", "help"], "\(top.keys.sorted())")
        let generate = try await arguments(["generate"])
        #expect(generate["store"] != nil && generate["style"] != nil, "\(generate.keys.sorted())")
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
