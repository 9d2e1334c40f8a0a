import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import ProceduralBackend
import Testing

/// What a new user still tripped over in a third hands-on hour (issue #60), through the built binary.
@Suite(.threadsOfTheirOwn)
struct FirstTenMinutesPartThreeTests {
    static let picture = CommandTests.pngsuite.appendingPathComponent("basn6a08.png")

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    /// Every command a message suggests ("...: badge generate -- -5 kg"), as the shell reads it, without "badge".
    static func suggestions(in text: String) -> [[String]] {
        text.components(separatedBy: "\n").compactMap { line -> [String]? in
            guard let start = line.range(of: ": badge ") else { return nil }
            return Array(FirstTenMinutesPartTwoTests.shellWords("badge " + line[start.upperBound...]).dropFirst())
        }
    }

    // MARK: - 1. An unquoted promise

    /// The words after the options are the promise, joined by spaces, wherever the options stand.
    @Test func anUnquotedPromiseIsTheWordsAfterTheOptions() async throws {
        let s = try Sandbox()
        let cases: [([String], String)] = [
            (["generate", "--size", "64", "--json", "Run", "a", "marathon"], "Run a marathon"),
            (["generate", "Read", "20", "books", "--size", "64", "--json"], "Read 20 books"),
            (["generate", "--size", "64", "Drink", "--json", "more", "water"], "Drink more water"),
            (["generate", "--size", "64", "--json", "Run a marathon"], "Run a marathon"),
            (["import", "--size", "64", "--json", Self.picture.path, "Walk", "every", "day"], "Walk every day"),
        ]
        for (arguments, promise) in cases {
            let result = try await s.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("unexpected argument"), "\(result.stderr)")
            #expect(try json(result.stdout)["promise"] as? String == promise, "\(arguments)")
        }
        let help = try await s.run(["generate", "--help"])
        #expect(help.stdout.contains("<promise> ..."), "\(help.stdout)")
    }

    /// A promise that starts with a dash gets the `--` hint, and the command it prints works as printed.
    @Test func everySuggestedCommandForAPromiseWorks() async throws {
        let s = try Sandbox()
        let cases: [(arguments: [String], message: String, promise: String)] = [
            (["generate", "--size", "64", "-5", "kg", "by", "summer"], "unknown option '-5'", "-5 kg by summer"),
            (["generate", "-5 kg by summer", "--size", "64"], "unknown option '-5 kg by summer'", "-5 kg by summer"),
            (["generate", "--size", "64", "Lose", "-5", "kg"], "unknown option '-5'", "Lose -5 kg"),
            // No command: the words are generate's promise.
            (["Run", "a", "marathon"], "'Run' is not a badge command", "Run a marathon"),
            (["-5", "kg"], "unknown option '-5'", "-5 kg"),
        ]
        for (arguments, message, promise) in cases {
            let result = try await s.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("error: " + message), "\(arguments): \(result.stderr)")
            let suggested = Self.suggestions(in: result.stderr)
            #expect(!suggested.isEmpty, "\(arguments): no command suggested: \(result.stderr)")
            for command in suggested {
                // --json after the command's name, before any "--".
                let fixed = try await s.run([command[0], "--json"] + command.dropFirst())
                #expect(fixed.status == 0, "\(command): \(fixed.stderr)")
                #expect(try json(fixed.stdout)["promise"] as? String == promise, "\(command)")
            }
        }
    }

    // MARK: - 3. An import with no promise

    /// Not on a terminal, an import with no promise is refused, and the command the hint gives commits one.
    @Test func anImportWithNoPromiseIsRefusedWithTheCommandThatGivesOne() async throws {
        let s = try Sandbox()
        let photo = s.root.appendingPathComponent("my photo.png")
        try FileManager.default.copyItem(at: Self.picture, to: photo)
        for arguments in [["import", "--size", "64", photo.path], ["import", "-", "--size", "64"]] {
            let before = s.badge
            let refused = try await s.run(arguments, stdin: try Data(contentsOf: photo))
            #expect(refused.status == 64, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.hasPrefix("error: import needs the promise the picture stands for"), "\(refused.stderr)")
            #expect(s.badge == before, "nothing is committed")
            let suggested = Self.suggestions(in: refused.stderr)
            #expect(suggested.count == 1, "\(refused.stderr)")
            for command in suggested {
                let fixed = try await s.run([command[0], "--json", "--size", "64"] + command.dropFirst(), stdin: try Data(contentsOf: photo))
                #expect(fixed.status == 0, "\(command): \(fixed.stderr)")
                #expect(try json(fixed.stdout)["promise"] as? String == "Walk every day")
            }
        }
    }

    // MARK: - 6. The docs and the words they promise

    /// `--vibe chill` is the calm vibe, as the README says; a prompt's "chill mood" is never dropped
    /// without a word: the Note names the mood to write, and that one is drawn.
    @Test func aWordForAMoodIsDrawnOrSaidNeverIgnored() async throws {
        let s = try Sandbox()
        let line = try await s.run(["prompt", "--purpose", "Learn Spanish", "--vibe", "chill"])
        #expect(line.status == 0 && line.stdout == "Learn Spanish, calm mood --ar 1:1\n", "\(line.stdout) \(line.stderr)")
        #expect(line.stderr == "badge: \"chill\" is drawn as the calm vibe\n", "\(line.stderr)")
        let composed = try json(try await s.run(["prompt", "--purpose", "Learn Spanish", "--vibe", "Chill", "--json"]).stdout)
        #expect(composed["vibe"] as? String == "calm")
        let fromLine = try json(try await s.run(["generate", "--size", "64", "--json", line.stdout.trimmingCharacters(in: .newlines)]).stdout)
        #expect((fromLine["extra"] as? [String: String])?["palette"]?.hasSuffix("<- calm") == true, "\(fromLine)")

        let typed = try await s.run(["generate", "--size", "64", "Learn Spanish, chill mood"])
        #expect(typed.status == 0, "\(typed.stderr)")
        #expect(typed.stdout.contains("Note             \"chill mood\" is not drawn: chill is no mood the procedural backend knows; write \"calm mood\""),
                "\(typed.stdout)")
        let written = try json(try await s.run(["generate", "--size", "64", "--json", "Learn Spanish, calm mood"]).stdout)
        #expect((written["extra"] as? [String: String])?["palette"]?.hasSuffix("<- calm") == true, "\(written)")
        #expect((written["extra"] as? [String: String])?["note"] == nil, "\(written)")
        // A mood the backend knows has no note.
        let known = try json(try await s.run(["generate", "--size", "64", "--json", "Learn Spanish, dark mood"]).stdout)
        #expect((known["extra"] as? [String: String])?["note"] == nil, "\(known)")
    }

    /// The README's count of motifs is the number the backend draws.
    @Test func theReadmeCountsTheMotifsThereAre() throws {
        let readme = try String(contentsOf: Sandbox.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let counts = readme.matches(of: /(\d+) motifs/).map { Int($0.1)! }
        #expect(!counts.isEmpty && counts.allSatisfy { $0 == PromptComposer.metaphors.count }, "\(counts) vs \(PromptComposer.metaphors.count)")
        // And of the icons beyond them.
        let icons = readme.matches(of: /(\d+) icons/).map { Int($0.1)! }
        #expect(!icons.isEmpty && icons.allSatisfy { $0 == PromptComposer.iconCount }, "\(icons) vs \(PromptComposer.iconCount)")
    }

    // MARK: - 8. Small things

    /// argument-parser's own messages read as badge's do: "error: " and a lower-case word, in text and in JSON.
    @Test func argumentParsersMessagesStartInLowerCaseAsBadgesDo() async throws {
        let s = try Sandbox()
        let cases: [([String], String)] = [
            (["generate", "--size", "4096px", "x"], "error: the value '4096px' is invalid for '--size <px>'\nhelp:  --size <px>"),
            (["generate"], "error: missing expected argument '<promise> ...'\nhelp:  <promise>"),
            (["show", "extra"], "error: unexpected argument 'extra'\nusage: badge show"),
            (["generate", "--nope", "x"], "error: unknown option '--nope'"),
            (["--store"], "error: missing value for '--store'"),
        ]
        for (arguments, start) in cases {
            let result = try await s.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix(start), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Usage:") && !result.stderr.contains("Help:"), "\(result.stderr)")
        }
        let json = try await s.run(["generate", "--json", "--size", "4096px", "x"])
        #expect(json.stderr.contains(#""message":"the value '4096px' is invalid for '--size <px>'""#), "\(json.stderr)")
    }

    /// The back of a round 512 px badge: the date's ink is at least 4.5 % of the card's width
    /// tall (it was about 3 %, laid out at the inscribed square's scale).
    @Test func theCardBacksDateIsLegibleOnARoundBadge() async throws {
        let s = try Sandbox()
        let made = try await s.run(["generate", "--size", "512", "--seed", "1", "--style", "medal", "Run a marathon"],
                                   extraEnvironment: ["SOURCE_DATE_EPOCH": "1796160720", "TZ": "UTC"])
        #expect(made.status == 0, "\(made.stderr)")
        let file = s.root.appendingPathComponent("back.png")
        let back = try await s.run(["card", "back", "-o", file.path], extraEnvironment: ["TZ": "UTC"])
        #expect(back.status == 0 && back.stdout.contains("Commitment Date: December 1, 2026"), "\(back.stdout) \(back.stderr)")
        let image = try GDImage.decodePNG(try Data(contentsOf: file))
        let side = image.width
        // The rows with ink (the back's near-black) in the middle of the face: the symbol, then the two lines.
        let inked = (0..<side).map { y in
            (side / 5..<(side * 4 / 5)).contains { x in let p = image.pixel(x, y); return p.a > 200 && p.r < 70 && p.g < 70 && p.b < 70 }
        }
        var runs: [Range<Int>] = [], start: Int?
        for (y, ink) in (inked + [false]).enumerated() {
            if ink, start == nil { start = y }
            if !ink, let first = start { runs.append(first..<y); start = nil }
        }
        let date = try #require(runs.last, "no ink on the back")
        #expect(runs.count >= 3, "\(runs)")
        #expect(Double(date.count) >= 0.045 * Double(side), "the date is \(date.count) px tall on a \(side) px card: \(runs)")
    }

    /// `card back --badge photo.jpg`: the hint makes a preview badge from the picture and the
    /// card from that, and both commands work as printed, leaving the store alone.
    @Test func aCardOfAPictureSuggestsAPreviewNotACommit() async throws {
        let s = try Sandbox()
        let folder = s.root.appendingPathComponent("pictures")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Sandbox.repository.appendingPathComponent("Tests/Data/exif/gps-rotated.jpg"),
                                         to: folder.appendingPathComponent("my photo.jpg"))
        let inFolder = ["sh", "-c", "cd \"$1\" && shift && exec \"$@\"", "sh", folder.path]
        for command in [["card", "back"], ["card", "flip", "-o", "flip.gif"], ["card", "html", "page"]] {
            let refused = try await s.run(command + ["--badge", "my photo.jpg"], prefix: inFolder)
            #expect(refused.status == 1, "\(refused.stderr)")
            #expect(refused.stderr.hasPrefix("error: ") && refused.stderr.contains("my photo.jpg: not a PNG file"), "\(refused.stderr)")
            let hint = try #require(refused.stderr.range(of: "leaves the current badge alone: ").map { refused.stderr[$0.upperBound...] },
                                    "\(refused.stderr)").prefix { $0 != "\n" }
            let commands = hint.components(separatedBy: "; then: ")
            #expect(commands.count == 2 && commands[0].hasPrefix("badge import --output ") && commands[1].hasPrefix("badge " + command.joined(separator: " ")),
                    "\(hint)")
            for line in commands {
                // A 1024 px flip in the debug build takes a core for ~20 s, and far longer beside the whole suite.
                let ran = try await s.run(Array(FirstTenMinutesPartTwoTests.shellWords(line).dropFirst()), prefix: inFolder, timeout: 600)
                #expect(ran.status == 0, "\(line): \(ran.stderr)")
            }
            #expect(s.badge == nil, "the suggestion committed a badge")
        }
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("badge-back.png").path))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("flip.gif").path))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("page/index.html").path))
    }

    // MARK: - 5. History says each time's zone

    /// A badge made in Auckland and replaced in UTC: each time in the row names its zone.
    @Test func historySaysTheZoneOfEachTime() async throws {
        let s = try Sandbox()
        let auckland = ["TZ": "Pacific/Auckland", "SOURCE_DATE_EPOCH": "1796160720"]  // 2026-12-01 21:32 UTC
        #expect(try await s.run(["generate", "--size", "64", "Run a marathon"], extraEnvironment: auckland).status == 0)
        #expect(try await s.run(["generate", "--size", "64", "Read 20 books"], extraEnvironment: ["TZ": "UTC"]).status == 0)
        let listed = try await s.run(["history"], extraEnvironment: ["TZ": "UTC"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.range(of: #"replaced \w{3} \d{1,2}, \d{4} at \d{1,2}:\d{2}[\x{202F} ][AP]M UTC  committed Dec 2, 2026 at 10:32[\x{202F} ]AM GMT\+13  procedural  Run a marathon\n"#,
                                    options: .regularExpression) != nil, "\(listed.stdout)")
        // Elsewhere, the replacement is in that zone; the commitment stays in Auckland's.
        let berlin = try await s.run(["history"], extraEnvironment: ["TZ": "Europe/Berlin"])
        #expect(berlin.stdout.range(of: #"[AP]M GMT\+1  committed Dec 2, 2026 at 10:32[\x{202F} ]AM GMT\+13"#, options: .regularExpression) != nil,
                "\(berlin.stdout)")
    }
}

/// Issue #60 where a terminal matters (`TmuxPane`): questions, widths, completion.
@Suite(.threadsOfTheirOwn, .serialized)
struct TmuxPartThreeTests {
    /// On a terminal, an import with no promise asks for one; Enter takes the file's name, as the question says.
    @Test(arguments: ["Walk every day", ""])
    func anImportWithNoPromiseAsksForOneOnATerminal(answer: String) async throws {
        let s = try Sandbox()
        let photo = s.root.appendingPathComponent("trail.png")
        try FileManager.default.copyItem(at: FirstTenMinutesPartThreeTests.picture, to: photo)
        let pane = try TmuxPane(s, ["import", "--size", "64", photo.path], term: "xterm-256color")
        defer { pane.close() }
        try await pane.waitFor("(Enter: \"trail\", the file's name)")
        #expect(s.badge == nil, "nothing is committed before the answer")
        if !answer.isEmpty { try pane.send("-l", answer) }
        try pane.send("Enter")
        #expect(try await pane.waitForExit() == 0, "\(pane.screenText)")
        let promise = answer.isEmpty ? "trail" : answer
        #expect(try pane.screen().range(of: "Promise +\(promise)\n", options: .regularExpression) != nil, "\(pane.screenText)")
        let shown = try await s.run(["show", "--json"])
        #expect((try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])?["promise"] as? String == promise)
    }

    // MARK: - 4. Text wrapped at word boundaries

    /// Every word of `text`, split where a list or a sentence breaks.
    static func words(_ text: String) -> Set<String> {
        Set(text.split(whereSeparator: { " ,;:()\"\n".contains($0) }).map(String.init))
    }

    /// `badge prompt`'s questions on an 80-column terminal: broken by badge at spaces, no line
    /// longer than the screen (capture-pane joins the lines the terminal itself wrapped), every choice whole.
    @Test func promptsQuestionsWrapAtWordsToTheTerminalsWidth() async throws {
        let s = try Sandbox()
        let pane = try TmuxPane(s, ["prompt"], term: "xterm-256color", columns: 80)
        defer { pane.close() }
        try await pane.waitFor("1. Purpose")
        try pane.send("-l", "Run a marathon")
        try pane.send("Enter")
        try await pane.waitFor("2. Vibe")
        try pane.send("Enter")
        try await pane.waitFor("3. Metaphor")
        try pane.send("-l", "palete")
        try pane.send("Enter")
        // The reason and its did-you-mean, wrapped too; then the question's answer.
        try await pane.waitFor("did you mean")
        for _ in 0..<3 {
            try pane.send("Enter")
        }
        #expect(try await pane.waitForExit() == 0, "\(pane.screenText)")
        let screen = try pane.screen()
        let lines = screen.components(separatedBy: "\n")
        #expect(lines.allSatisfy { $0.count <= 80 }, "a line the terminal wrapped:\n\(screen)")
        let words = Self.words(screen)
        for choice in PromptComposer.vibes + PromptComposer.metaphors {
            #expect(words.contains(choice), "\(choice) is not whole on the screen:\n\(screen)")
        }
        #expect(lines.contains { $0.hasPrefix("Run a marathon, a runner as its symbol") }, "\(screen)")
    }

    /// `badge history` on an 80-column terminal goes on under the id, broken at spaces;
    /// in a pipe each badge is one line.
    @Test func historyWrapsAtWordsOnATerminalAndNotInAPipe() async throws {
        let s = try Sandbox()
        let promises = ["Walk the dog around the lake every single morning before work", "Read twenty books", "Now"]
        for promise in promises {
            #expect(try await s.run(["generate", "--size", "64", promise]).status == 0)
        }
        let piped = try await s.run(["history"])
        #expect(piped.stdout.split(separator: "\n").count == 2, "\(piped.stdout)")
        let pane = try TmuxPane(s, ["history"], term: "xterm-256color", columns: 80)
        defer { pane.close() }
        #expect(try await pane.waitForExit() == 0, "\(pane.screenText)")
        let screen = try pane.screen()
        // (tmux's own last line, "Pane is dead", is not badge's.)
        let lines = screen.components(separatedBy: "\n").filter { !$0.isEmpty && !$0.hasPrefix("Pane is dead") }
        #expect(lines.allSatisfy { $0.count <= 80 }, "a line the terminal wrapped:\n\(screen)")
        #expect(lines.count > 2, "nothing was wrapped:\n\(screen)")
        let words = Self.words(screen)
        for word in (promises[0] + " " + promises[1]).split(separator: " ") {
            #expect(words.contains(String(word)), "\(word) is not whole on the screen:\n\(screen)")
        }
        // The lines that go on start under the id's column, past it.
        let id = try #require(piped.stdout.split(separator: " ").first).count
        #expect(lines.filter { !$0.hasPrefix(" ") }.count == 2, "\(screen)")
        #expect(lines.filter { $0.hasPrefix(" ") }.allSatisfy { $0.prefix(id + 2).allSatisfy { $0 == " " } }, "\(screen)")
    }

    // MARK: - 7. Completion of the global options before the command

    /// bash, as a person types: `--store` and `--config` before the command complete a
    /// directory and a file, and the command after them completes as it does without them.
    @Test func bashCompletesTheGlobalOptionsBeforeTheCommand() async throws {
        let s = try Sandbox()
        try FileManager.default.createDirectory(at: s.root.appendingPathComponent("stores"), withIntermediateDirectories: true)
        try Data(#"{"backends": {"photos": {"type": "import"}}}"#.utf8).write(to: s.root.appendingPathComponent("conf.json"))
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
        let cases: [(typed: String, completed: String)] = [
            ("badge --store sto", "badge --store stores/@"),
            ("badge --config con", "badge --config conf.json @"),
            ("badge --store stores --config conf.json sh", "badge --store stores --config conf.json show @"),
            ("badge -v --store stores gen", "badge -v --store stores generate @"),
            ("badge --store stores generate --sty", "badge --store stores generate --style @"),
            ("badge --store stores generate --style sk", "badge --store stores generate --style sketch @"),
            ("badge --conf", "badge --config @"),
            // A value badge itself completes, from the configuration named before the command.
            ("badge --config conf.json import --backend ph", "badge --config conf.json import --backend photos @"),
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

    /// zsh and fish: the top level declares the global options, with a file and a directory to complete.
    @Test func zshAndFishCompleteTheGlobalOptionsBeforeTheCommand() async throws {
        let s = try Sandbox()
        let zsh = try await s.run(["--generate-completion-script", "zsh"]).stdout
        let start = try #require(zsh.range(of: "\n_badge() {"), "\(zsh)")
        let root = zsh[start.lowerBound..<(zsh[start.upperBound...].range(of: "\n}\n")?.lowerBound ?? zsh.endIndex)]
        #expect(root.contains("'--store[") && root.contains(":dir:_files -/'") && root.contains("'--config[") && root.contains(":file:_files -g"), "\(root)")
        let fish = try await s.run(["--generate-completion-script", "fish"]).stdout
        #expect(fish.contains("__badge_parse_subcommand 0 'config=' 'store=' 'v/verbose' 'version' 'h/help'"), "\(fish)")
        #expect(fish.contains("\"badge\" store' -l 'store'") && fish.contains("-rfa '(__badge_complete_directories)'"), "\(fish)")
    }
}
