import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// Issue #33 in a real terminal (`TmuxPane`): `show` drawing the badge, a batch
/// stopped with Ctrl-C, and bash completing the way a person types.
@Suite(.threadsOfTheirOwn, .serialized)
struct TmuxPartTwoTests {
    static func isBlock(_ scalar: Unicode.Scalar) -> Bool { (0x2580...0x259F).contains(scalar.value) }

    // MARK: - 6. badge show shows the badge

    @Test func showDrawsSymbolArtAboveTheDetails() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "256", "--seed", "3", "Run a marathon"]).status == 0)
        let pane = try TmuxPane(s, ["show"], term: "xterm-256color", columns: 100, rows: 50)
        defer { pane.close() }
        #expect(try await pane.waitForExit() == 0, "exit status \(pane.exitStatus.map(String.init) ?? "none")\n\(pane.screenText)")
        let lines = try pane.screen().components(separatedBy: "\n")
        let details = try #require(lines.firstIndex { $0.contains("Commitment Date") }, "\(lines.joined(separator: "\n"))")
        let art = lines[..<details].filter { $0.unicodeScalars.contains(where: Self.isBlock) }
        #expect(art.count >= 10, "no symbol art above the details:\n\(lines.joined(separator: "\n"))")
        #expect(!lines[details...].contains { $0.unicodeScalars.contains(where: Self.isBlock) }, "art below the details")
        #expect(lines[details...].contains { $0.contains("RUN A MARATHON") })
    }

    /// A kitty terminal gets the badge as one kitty image, above the details.
    @Test func showInKittyDrawsAKittyImage() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "256", "--seed", "3", "Run a marathon"]).status == 0)
        let pane = try TmuxPane(s, ["show"], term: "xterm-kitty", columns: 100, rows: 50)
        defer { pane.close() }
        #expect(try await pane.waitForExit() == 0, "exit status \(pane.exitStatus.map(String.init) ?? "none")\n\(pane.screenText)")
        let output = pane.output
        #expect(output.components(separatedBy: "\u{1B}_Ga=T").count - 1 == 1, "one kitty image: \(output.prefix(300).debugDescription)")
        let image = try #require(output.range(of: "\u{1B}_Ga=T")), details = try #require(output.range(of: "Commitment Date"))
        #expect(image.lowerBound < details.lowerBound)
    }

    @Test(arguments: [["show", "--json"], ["show", "--no-image"]])
    func showDrawsNothingWithJSONOrNoImage(arguments: [String]) async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "256", "--seed", "3", "Run a marathon"]).status == 0)
        let pane = try TmuxPane(s, arguments, term: "xterm-256color", columns: 100, rows: 50)
        defer { pane.close() }
        #expect(try await pane.waitForExit() == 0, "exit status \(pane.exitStatus.map(String.init) ?? "none")\n\(pane.screenText)")
        let screen = try pane.screen()
        #expect(screen.contains("Run a marathon"), "\(screen)")
        #expect(!screen.unicodeScalars.contains(where: Self.isBlock), "\(arguments) drew the badge:\n\(screen)")
        #expect(!pane.output.contains("\u{1B}_G") && !pane.output.contains("\u{1B}["), "escape sequences: \(pane.output.prefix(200).debugDescription)")
    }

    // MARK: - Standard output on a terminal

    /// `--output -` when standard output is the terminal: a usage error that says
    /// what to do, and not one byte of PNG on the screen; the store is untouched.
    @Test func aPictureIsNeverPrintedOnTheTerminal() async throws {
        let s = try Sandbox()
        let pane = try TmuxPane(s, ["generate", "--size", "64", "--output", "-", "Run a marathon"], term: "xterm-256color")
        defer { pane.close() }
        let status = try await pane.waitForExit()
        #expect(status == 64, "exit status \(status)\n\(pane.screenText)")
        let screen = try pane.screen()
        #expect(screen.contains("standard output is a terminal; the badge is not printed there"), "\(screen)")
        #expect(screen.contains("hint: pipe it into a program or a file"), "\(screen)")
        #expect(!pane.output.contains("PNG") && !pane.output.contains("IHDR"), "\(pane.output.prefix(300).debugDescription)")
        #expect(s.badge == nil)
    }

    // MARK: - 7. A batch interrupted

    /// Ctrl-C: the bar keeps what was finished, then says "stopping" and how many are left.
    /// The batch is long (200 badges of 1024 px: some 500 s of a core's time in a debug
    /// build), so Ctrl-C comes before its end however long tmux takes to send it.
    @Test func anInterruptedBatchShowsWhatWasFinished() async throws {
        let s = try Sandbox()
        let count = 200
        let jobs = (1...count).map { #"{"name": "job-\#($0)", "prompt": "Meditate daily \#($0)", "size": 1024}"# }
        let manifest = s.root.appendingPathComponent("jobs.json")
        try Data(("[" + jobs.joined(separator: ",\n") + "]").utf8).write(to: manifest)
        let out = s.root.appendingPathComponent("out")
        let pane = try TmuxPane(s, ["batch", manifest.path, "--output", out.path], term: "xterm-256color")
        defer { pane.close() }
        try await waitUntil("a badge to be finished\n\(pane.screenText)", timeout: .seconds(120), every: .milliseconds(20)) {
            try pane.screen().range(of: #"▏ [1-9][0-9]*/\#(count)"#, options: .regularExpression) != nil || pane.exitStatus != nil
        }
        try pane.send("C-c")
        #expect(try await pane.waitForExit() == 130, "exit status \(pane.exitStatus.map(String.init) ?? "none")\n\(pane.screenText)")
        // The bar's last drawing with "stopping" in it.
        let bars = pane.output.components(separatedBy: "\r").filter { $0.contains("stopping… ") && $0.contains("▕") }
        let last = try #require(bars.last, "no bar says stopping:\n\(pane.output.suffix(2000))")
        let match = try #require(last.firstMatch(of: #/ (\d+)/(\d+) .*stopping… (\d+) left/#), "\(last)")
        let finished = Int(match.1)!, total = Int(match.2)!, left = Int(match.3)!
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasSuffix(".png") }
        #expect(total == count && finished + left == count, "\(last)")
        #expect(finished == files.count && finished < count, "the bar says \(finished) finished; \(files.count) files: \(last)")
    }

    // MARK: - 9. Completion

    /// bash with badge's completion script: a word completes as a file name only where a file is expected.
    @Test func bashCompletesFileNamesOnlyWhereAFileIsExpected() async throws {
        let s = try Sandbox()
        try FileManager.default.createDirectory(at: s.root.appendingPathComponent("card"), withIntermediateDirectories: true)
        let script = s.root.appendingPathComponent("badge.bash")
        try Data(try await s.run(["--generate-completion-script", "bash"]).stdout.utf8).write(to: script)
        let path = Sandbox.binary.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let pane = try TmuxPane(s, command: ["/bin/bash", "--norc", "--noprofile", "-i"], term: "xterm-256color",
                                extraEnvironment: ["PATH": path, "INPUTRC": "/dev/null"])
        defer { pane.close() }
        try pane.send("-l", "PS1='$ '; source \(TmuxPane.quoted(script.path)); clear; echo sourced")
        try pane.send("Enter")
        try await waitUntil("the script to be sourced\n\(pane.screenText)", timeout: .seconds(60), every: .milliseconds(20)) {
            try pane.screen().components(separatedBy: "\n").contains("sourced")
        }
        // Typed, Tab, then a mark: the line shows what the Tab made of the word.
        let cases: [(typed: String, completed: String)] = [
            ("badge ca", "badge card @"),
            ("badge card html ca", "badge card html card/@"),
            ("badge prompt --vibe ca", "badge prompt --vibe calm @"),
            ("badge prompt --metaphor runn", "badge prompt --metaphor runner @"),
            ("badge prompt --style sk", "badge prompt --style sketch @"),
            ("badge prompt --color cora", "badge prompt --color coral @"),
        ]
        for (typed, completed) in cases {
            try pane.send("-l", typed)
            try pane.send("Tab")
            try pane.send("-l", "@")
            func marked() throws -> String? {
                try pane.screen().components(separatedBy: "\n").map { String($0.reversed().drop { $0 == " " }.reversed()) }
                    .last { $0.hasPrefix("$ \(typed)") && $0.hasSuffix("@") }
            }
            try await waitUntil("\(typed)<Tab> to show \(completed)\n\(pane.screenText)", timeout: .seconds(60), every: .milliseconds(20)) {
                try marked() != nil
            }
            let line = try #require(try marked())
            #expect(line == "$ " + completed, "\(typed)<Tab>")
            try pane.send("C-u")
        }
    }
}
