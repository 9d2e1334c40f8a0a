import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// What a new user still tripped over in a second hands-on hour (issue #33), through the built binary.
@Suite(.threadsOfTheirOwn)
struct FirstTenMinutesPartTwoTests {
    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    // MARK: - 1. Help and global options

    static let commands = [[], ["generate"], ["import"], ["show"], ["history"], ["restore"], ["batch"], ["card"], ["card", "back"],
                           ["card", "flip"], ["card", "html"], ["backends"], ["config"], ["config", "validate"], ["config", "show"],
                           ["verify"], ["prompt"]]

    @Test(arguments: commands)
    func helpHasNoBackslash(command: [String]) async throws {
        let help = try await Sandbox().run(command + ["--help"])
        #expect(help.status == 0, "\(help.stderr)")
        #expect(!help.stdout.contains("\\"), "badge \(command.joined(separator: " ")) --help:\n\(help.stdout)")
    }

    @Test func topLevelHelpListsTheGlobalOptions() async throws {
        let help = try await Sandbox().run(["--help"]).stdout
        let section = try #require(help.range(of: "GLOBAL OPTIONS").map { help[$0.lowerBound...] }, "\(help)")
        let body = section[..<(section.range(of: "SUBCOMMANDS:")?.lowerBound ?? section.endIndex)]
        for option in ["--config <file>", "--store <dir>", "-v, --verbose"] { #expect(body.contains(option), "\(option):\n\(help)") }
    }

    /// Every global option, before the command and after it, gives the same output.
    @Test func globalOptionsBeforeTheCommandAreTheSameAsAfterIt() async throws {
        let s = try Sandbox()
        let store = s.root.appendingPathComponent("elsewhere").path
        let made = try await s.run(["--store", store, "generate", "--size", "64", "--seed", "5", "Read 20 books"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(s.badge == nil, "--store before the command is where the badge went")
        // One in the sandbox's own store ($BADGE_STORE) too, for the commands given only --config.
        #expect(try await s.run(["generate", "--size", "64", "--seed", "6", "Walk daily"]).status == 0)
        let config = s.root.appendingPathComponent("config.json")
        try Data(#"{"backends": {"photos": {"type": "import"}}}"#.utf8).write(to: config)
        let back = s.root.appendingPathComponent("back.png").path
        let pairs: [([String], [String])] = [
            (["--store", store, "show"], ["show", "--store", store]),
            (["--store=\(store)", "show", "--json"], ["show", "--json", "--store=\(store)"]),
            (["--config", config.path, "show"], ["show", "--config", config.path]),
            (["--config", config.path, "backends"], ["backends", "--config", config.path]),
            (["--verbose", "--store", store, "history"], ["history", "--store", store, "--verbose"]),
            (["-v", "--config", config.path, "card", "back", "-o", back], ["card", "back", "-o", back, "-v", "--config", config.path]),
        ]
        for (before, after) in pairs {
            let first = try await s.run(before), second = try await s.run(after)
            #expect(first.status == 0 && first.status == second.status, "\(before): \(first.stderr)")
            #expect(first.stdout == second.stdout, "\(before) and \(after) differ:\n\(first.stdout)\n---\n\(second.stdout)")
            #expect(first.stderr == second.stderr, "\(before) and \(after) differ:\n\(first.stderr)\n---\n\(second.stderr)")
        }
        #expect(try await s.run(["--verbose", "--store", store, "show"]).stderr.contains("store=\(store)"))
        // A command that does not take them says so rather than losing them.
        let refused = try await s.run(["--verbose", "prompt", "--purpose", "Read"])
        #expect(refused.status == 64 && refused.stderr.hasPrefix("error: 'badge prompt' does not take --verbose"), "\(refused.stderr)")
        let alone = try await s.run(["--store", store])
        #expect(alone.status == 64 && alone.stderr.contains("--store goes with a command"), "\(alone.stderr)")
        let typo = try await s.run(["--stroe", store, "show"])
        #expect(typo.status == 64 && typo.stderr.contains("did you mean '--store'?"), "\(typo.stderr)")
    }

    // MARK: - 2. Promises that look like options

    @Test func aPromiseThatLooksLikeAnOptionGetsTheDoubleDashHint() async throws {
        let s = try Sandbox()
        for promise in ["-5 kg by summer", "-10", "--more sleep, less phone"] {
            let result = try await s.run(["generate", "--size", "64", promise])
            #expect(result.status == 64, "\(result.stderr)")
            #expect(result.stderr.hasPrefix("error: unknown option '\(promise)'"), "\(result.stderr)")
            let quoted = promise.contains(" ") ? "\"\(promise)\"" : promise
            #expect(result.stderr.contains("badge generate --size 64 -- \(quoted)\n"), "\(result.stderr)")
            #expect(!result.stderr.contains("issing value"), "\(result.stderr)")
        }
        // The command the hint gives works.
        let fixed = try await s.run(["generate", "--size", "64", "--json", "--", "-5 kg by summer"])
        #expect(fixed.status == 0, "\(fixed.stderr)")
        #expect(try json(fixed.stdout)["promise"] as? String == "-5 kg by summer")
        // The value of an option is written with "=".
        let caption = try await s.run(["generate", "--size", "64", "--caption", "-5 kg", "Lose weight"])
        #expect(caption.status == 64 && caption.stderr.contains("--caption=\"-5 kg\""), "\(caption.stderr)")
        #expect(try await s.run(["generate", "--size", "64", "--caption=-5 kg", "Lose weight"]).status == 0)
    }

    /// A hint's command line as the shell reads it (bare words and "double quotes").
    static func shellWords(_ line: String) -> [String] {
        var words: [String] = [], word = "", quoted = false, started = false
        for character in line {
            if character == "\"" { quoted.toggle(); started = true } else if character == " " && !quoted {
                if started { words.append(word) }
                word = ""
                started = false
            } else {
                word.append(character)
                started = true
            }
        }
        if started { words.append(word) }
        return words
    }

    /// `import` takes a file and then a promise: the hint's `--` goes before
    /// the first of them, so neither changes place, and options stay before it.
    @Test func theDoubleDashHintKeepsAnImportsFileAndPromiseInPlace() async throws {
        let s = try Sandbox()
        let picture = s.tmp.appendingPathComponent("-my photo.png")
        try TestPNG.solid(width: 32, height: 32, rgb: (10, 120, 200)).write(to: picture)
        let inFolder = ["sh", "-c", "cd \"$1\" && shift && exec \"$@\"", "sh", s.tmp.path]
        try TestPNG.solid(width: 32, height: 32, rgb: (10, 120, 200)).write(to: s.tmp.appendingPathComponent("-a.png"))
        let cases: [([String], String)] = [
            (["import", "-my photo.png", "Walk daily", "--size", "64"], "badge import --size 64 -- \"-my photo.png\" \"Walk daily\""),
            // (The file is "Walk daily", as written: the hint moves nothing.)
            (["import", "--size", "64", "Walk daily", "-my photo.png"], "badge import --size 64 -- \"Walk daily\" \"-my photo.png\""),
            // Words that start with "-" and are no option of the command stay where they were.
            (["import", "-my photo.png", "-Walk daily", "--size", "64"], "badge import --size 64 -- \"-my photo.png\" \"-Walk daily\""),
            (["import", "-a.png", "-5 kg", "--size", "64"], "badge import --size 64 -- -a.png \"-5 kg\""),
            // A -- already there is kept once; a value that starts with "-" is joined with "=".
            (["import", "--size", "64", "-my photo.png", "--", "-Walk daily"], "badge import --size 64 -- \"-my photo.png\" \"-Walk daily\""),
            (["generate", "-5 kg", "--size", "64", "--caption", "-x y"], "badge generate --size 64 \"--caption=-x y\" -- \"-5 kg\""),
            // No command: the promise is generate's.
            (["-5 kg"], "badge generate -- \"-5 kg\""),
        ]
        for (arguments, hint) in cases {
            let result = try await s.run(arguments, prefix: inFolder)
            #expect(result.status == 64, "\(result.stderr)")
            #expect(result.stderr.contains("which ends the options: " + hint + "\n"), "\(arguments): \(result.stderr)")
            // The command the hint gives runs (but for the file that is not there).
            let fixed = try await s.run(Array(Self.shellWords(hint).dropFirst()), prefix: inFolder)
            if hint.contains("\"Walk daily\" \"-my photo.png\"") {
                #expect(fixed.status == 1 && fixed.stderr.contains("Walk daily: backend 'import': no such file"), "\(fixed.stderr)")
            } else {
                #expect(fixed.status == 0, "\(hint): \(fixed.stderr)")
            }
        }
        // The first hint's command imports the file as the promise "Walk daily".
        let fixed = try await s.run(["import", "--size", "64", "--json", "--", "-my photo.png", "Walk daily"], prefix: inFolder)
        #expect(fixed.status == 0, "\(fixed.stderr)")
        #expect(try json(fixed.stdout)["promise"] as? String == "Walk daily")
    }

    // MARK: - 3. Values are matched the way people type them

    @Test func valuesAreMatchedWithoutRegardToCase() async throws {
        let s = try Sandbox()
        let tile = try await s.run(["generate", "--size", "64", "--style", "Tile", "--json", "Walk daily"])
        #expect(tile.status == 0, "\(tile.stderr)")
        #expect(try json(tile.stdout)["style"] as? String == "tile")
        let backend = try await s.run(["generate", "--size", "64", "--backend", "PROCEDURAL", "--json", "Walk daily"])
        #expect(backend.status == 0, "\(backend.stderr)")
        #expect(try json(backend.stdout)["backend"] as? String == "procedural")
        let config = s.root.appendingPathComponent("config.json")
        try Data(#"{"backends": {"drawn": {"type": "Procedural"}}}"#.utf8).write(to: config)
        let typed = try await s.run(["generate", "--config", config.path, "--backend", "drawn", "--size", "64", "--json", "Walk daily"])
        #expect(typed.status == 0, "\(typed.stderr)")
        #expect(try json(typed.stdout)["backendType"] as? String == "procedural")
        let jobs = s.root.appendingPathComponent("jobs.json")
        try Data(#"[{"name": "walk", "prompt": "Walk daily", "size": 64}]"#.utf8).write(to: jobs)
        let out = s.root.appendingPathComponent("out")
        let batch = try await s.run(["batch", jobs.path, "--style", "Tile", "--backend", "Procedural", "--output", out.path])
        #expect(batch.status == 0, "\(batch.stderr)")
        #expect(try BadgeMetadata.read(from: out.appendingPathComponent("walk.png"))?.style == "tile")
        let flip = try await s.run(["card", "flip", "--direction", "Right", "--size", "32", "-o", s.root.appendingPathComponent("flip.gif").path])
        #expect(flip.status == 0, "\(flip.stderr)")
        let vibe = try await s.run(["prompt", "--purpose", "Walk daily", "--vibe", "CALM", "--style", "Flat"])
        #expect(vibe.status == 0 && vibe.stdout.hasPrefix("Walk daily, calm mood, flat style"), "\(vibe.stdout) \(vibe.stderr)")
    }

    @Test(arguments: [["generate"], ["generate", "--size", "7", "x"], ["show", "--nope"], ["card", "flip", "-o", "x.gif", "--direction", "up"]])
    func argumentParsersErrorsStartWithLowerCaseError(arguments: [String]) async throws {
        let result = try await Sandbox().run(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("error: "), "\(result.stderr)")
        #expect(!result.stderr.contains("Error:"), "\(result.stderr)")
    }

    // MARK: - 4. badge prompt

    @Test func coloursAreReadAsAList() async throws {
        let s = try Sandbox()
        for written in ["coral and teal", "coral, teal", "coral & teal"] {
            let flags = try await s.run(["prompt", "--purpose", "Learn Spanish", "--style", "flat", "--color", written])
            #expect(flags.status == 0, "\(written): \(flags.stderr)")
            #expect(flags.stdout.hasPrefix("Learn Spanish, flat style in coral and teal --ar 1:1"), "\(written): \(flags.stdout)")
            // purpose, vibe (Enter), metaphor (Enter: speech, from the words), style, colours
            let asked = try await s.run(["prompt", "--interactive"], stdin: Data("Learn Spanish\n\n\nflat\n\(written)\n".utf8))
            #expect(asked.status == 0, "\(written): \(asked.stderr)")
            #expect(!asked.stderr.contains("not a colour"), "\(written): \(asked.stderr)")
            #expect(asked.stdout.contains("flat style in coral and teal --ar 1:1"), "\(written): \(asked.stdout)")
        }
    }

    /// A word for a mood is written as the vibe that draws it, and said; a typo gets the nearest vibe.
    @Test func aWordForAMoodIsItsVibeAndATypoGetsASuggestion() async throws {
        let s = try Sandbox()
        for (word, meant) in [("sparkly", "bright"), ("chill", "calm"), ("happy", "joyful")] {
            let flag = try await s.run(["prompt", "--purpose", "Learn Spanish", "--vibe", word])
            #expect(flag.status == 0 && flag.stdout == "Learn Spanish, \(meant) mood --ar 1:1\n", "\(word): \(flag.stdout) \(flag.stderr)")
            #expect(flag.stderr.contains("\"\(word)\" is drawn as the \(meant) vibe"), "\(word): \(flag.stderr)")
        }
        let typo = try await s.run(["prompt", "--purpose", "Learn Spanish", "--vibe", "calmm"])
        #expect(typo.status == 64 && typo.stderr.contains("\"calmm\" is not a vibe the badge can draw") && typo.stderr.contains("did you mean \"calm\"?"),
                "\(typo.stderr)")
        let asked = try await s.run(["prompt", "--interactive"], stdin: Data("Learn Spanish\nsparkley\nsparkly\n\n\n\n\n".utf8))
        #expect(asked.status == 0, "\(asked.stderr)")
        #expect(asked.stderr.contains("\"sparkley\" is not a vibe the badge can draw"), "\(asked.stderr)")
        #expect(asked.stdout.hasPrefix("Learn Spanish, bright mood"), "\(asked.stdout)")
    }

    @Test func theStyleDrawnAndWhereItCameFromAreShown() async throws {
        let s = try Sandbox()
        let line = try await s.run(["prompt", "--purpose", "Learn Spanish", "--style", "flat", "--color", "coral and teal"])
        let prompt = line.stdout.trimmingCharacters(in: .newlines)
        let made = try await s.run(["generate", "--size", "64", "--seed", "2", prompt])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.range(of: #"\n  Style +flat \(from the prompt\)\n"#, options: .regularExpression) != nil, "\(made.stdout)")
        for arguments in [["show", "--json"], ["generate", "--json", "--size", "64", "--seed", "2", prompt]] {
            let object = try json(try await s.run(arguments).stdout)
            #expect(object["style"] as? String == "flat" && object["styleSource"] as? String == "prompt", "\(object)")
        }
        let asked = try json(try await s.run(["generate", "--json", "--size", "64", "--style", "sketch", "Read"]).stdout)
        #expect(asked["style"] as? String == "sketch" && asked["styleSource"] as? String == "request", "\(asked)")
        let plain = try await s.run(["generate", "--size", "64", "Read"])
        #expect(plain.stdout.range(of: #"\n  Style +medal \(the default\)\n"#, options: .regularExpression) != nil, "\(plain.stdout)")
    }

    // MARK: - 6. badge show draws nothing when piped

    @Test func showDrawsNothingWhenPiped() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "Read"]).status == 0)
        for arguments in [["show"], ["show", "--no-image"], ["show", "--json"]] {
            let shown = try await s.run(arguments)
            #expect(shown.status == 0, "\(shown.stderr)")
            #expect(!shown.stdout.contains("\u{1B}") && !shown.stdout.unicodeScalars.contains { (0x2580...0x259F).contains($0.value) },
                    "\(arguments): \(shown.stdout.debugDescription)")
        }
        #expect(try await s.run(["show", "--help"]).stdout.contains("--no-image"))
    }

    // MARK: - 8. Import

    @Test func anImportSaysImportCoverAndNoSeed() async throws {
        let s = try Sandbox()
        let picture = CommandTests.pngsuite.appendingPathComponent("basn6a08.png").path
        let made = try await s.run(["import", "--size", "64", picture, "My picture"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.range(of: #"\n  Backend +import \(cover\)\n"#, options: .regularExpression) != nil, "\(made.stdout)")
        #expect(!made.stdout.contains("Seed") && !made.stdout.contains("import (import"), "\(made.stdout)")
        let object = try json(try await s.run(["show", "--json"]).stdout)
        #expect(object["seed"] == nil && object["model"] as? String == "import (cover)", "\(object)")
    }

    @Test func aCardFromAPhotoSaysToImportItFirst() async throws {
        let s = try Sandbox()
        let photo = Sandbox.repository.appendingPathComponent("Tests/Data/exif/gps-rotated.jpg").path
        let back = try await s.run(["card", "back", "--badge", photo])
        #expect(back.status != 0)
        #expect(back.stderr.contains("not a PNG file") && back.stderr.contains("badge import --output gps-rotated-badge.png \(photo) \"your promise\""), "\(back.stderr)")
    }
}
