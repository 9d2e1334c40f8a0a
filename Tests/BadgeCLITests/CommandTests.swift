import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// Every command of the built binary, as a user runs it.
@Suite(.threadsOfTheirOwn)
struct CommandTests {
    static let pngsuite = Sandbox.repository.appendingPathComponent("Tests/Data/pngsuite")

    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    @Test func generateCommitsABadgeWithItsDateInside() async throws {
        let s = try Sandbox()
        let before = Date()
        let result = try await s.run(["generate", "A pair of dumbbells", "--size", "128", "--seed", "1"])
        let after = Date()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Committed your Promise Badge."))
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        #expect(metadata.prompt == "A pair of dumbbells")
        #expect(metadata.backend == "procedural")
        #expect(metadata.seed == 1)
        // Stamped while the command ran (to the second), however long a busy machine made that.
        #expect(metadata.commitmentDate >= before.addingTimeInterval(-1) && metadata.commitmentDate <= after.addingTimeInterval(1),
                "\(metadata.commitmentDate) is not between \(before) and \(after)")
        #expect(metadata.model == "art-engine 6")
    }

    /// A promise of only white space (any script's: no-break and ideographic spaces too) is a usage error, and nothing is committed.
    @Test(arguments: ["", "   ", " \n\t ", "\u{00A0}\u{3000}\u{2029}"])
    func aBlankPromiseIsRefused(prompt: String) async throws {
        let s = try Sandbox()
        let result = try await s.run(["generate", "--size", "64", prompt])
        #expect(result.status == 64)
        #expect(result.stderr.contains("the promise is empty; describe it in a few words"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.store.appendingPathComponent("badge.png").path))
    }

    @Test func generateJSONIsForScripts() async throws {
        let s = try Sandbox()
        let result = try await s.run(["generate", "--json", "--size", "64", "--seed", "9", "--date", "2027-01-01", "Read 20 books"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try json(result.stdout)
        #expect(object["prompt"] as? String == "Read 20 books")
        #expect(object["seed"] as? String == "9")
        #expect((object["commitmentDate"] as? String)?.hasPrefix("2027-01-01T00:00:00") == true)
        #expect(object["commitmentDateLong"] as? String == "January 1, 2027")
        #expect((object["path"] as? String)?.hasSuffix("/store/badge.png") == true)
    }

    /// A long promise keeps its start as the caption, and the summary and --json say it was shortened, and why.
    @Test func aShortenedCaptionIsSaidInTheSummaryAndTheJSON() async throws {
        let s = try Sandbox()
        let prompt = "Finish writing the fantasy novel I have been planning since university"
        let summary = try await s.run(["generate", "--size", "256", "--seed", "2", prompt])
        #expect(summary.status == 0, "\(summary.stderr)")
        #expect(summary.stdout.contains("Caption          FINISH WRITING THE FANTASY NOVEL (shortened: 5 of 11 words: the whole promise does not fit"),
                "\(summary.stdout)")
        let object = try json(try await s.run(["generate", "--json", "--size", "1024", "--seed", "2", prompt]).stdout)
        #expect(object["caption"] as? String == "FINISH WRITING THE FANTASY NOVEL")
        let extra = try #require(object["extra"] as? [String: String])
        #expect(extra["caption-shortened"]?.hasPrefix("5 of 11 words: the whole promise does not fit on two lines at the legible size") == true)
        #expect(extra["caption-shortened"]?.contains("--size") == false, "a larger badge holds no more words")
        // An image description: no caption, and the summary says why.
        let described = try await s.run(["generate", "--size", "128", "An illustration of a runner at dawn, 8k resolution --ar 1:1"])
        #expect(described.stdout.contains("Caption          none: the prompt describes a picture rather than a promise"), "\(described.stdout)")
    }

    @Test func outputWritesAPreviewAndLeavesTheStoreAlone() async throws {
        let s = try Sandbox()
        let preview = s.root.appendingPathComponent("preview.png")
        let result = try await s.run(["generate", "--output", preview.path, "--size", "64", "Drink more water"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try BadgeMetadata.read(from: preview)?.prompt == "Drink more water")
        #expect(s.badge == nil)
        #expect(result.stdout.contains("the current badge is unchanged"))
    }

    @Test func showPrintsTheLongDate() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--date", "2027-01-01", "--size", "64", "Run a 5k"]).status == 0)
        let shown = try await s.run(["show"])
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("January 1, 2027"), "\(shown.stdout)")
        #expect(shown.stdout.contains("Run a 5k"))
        let parsed = try json(try await s.run(["show", "--json"]).stdout)
        #expect(parsed["timeZone"] != nil && parsed["id"] != nil)
    }

    @Test func showWithNoBadgeSaysHowToMakeOne() async throws {
        let s = try Sandbox()
        let result = try await s.run(["show"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("there is no badge yet"))
        #expect(result.stderr.contains("badge generate"))
    }

    @Test func historyAndRestoreBringBackTheOldBadgeAsItWas() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--date", "2027-01-01", "--size", "64", "--seed", "1", "first promise"]).status == 0)
        let first = try #require(s.badge)
        let firstID = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png"))).id
        #expect(try await s.run(["generate", "--size", "64", "--seed", "2", "second promise"]).status == 0)
        #expect(try await s.run(["generate", "--size", "64", "--seed", "3", "third promise"]).status == 0)

        let history = try await s.run(["history"])
        let lines = history.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.contains("second promise") == true, "newest first: \(history.stdout)")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(try await s.run(["history", "--json"]).stdout.utf8)) as? [[String: Any]])
        #expect(entries.map { $0["prompt"] as? String } == ["second promise", "first promise"])

        let restored = try await s.run(["restore", String(firstID.prefix(6))])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(s.badge == first, "the restored badge is byte-identical")
        #expect(try await s.run(["show"]).stdout.contains("January 1, 2027"))
        #expect(try await s.run(["history"]).stdout.contains("third promise"))

        let unknown = try await s.run(["restore", "ffffffff"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no badge in the history has the id"))
    }

    @Test func backendsSayWhatCanRun() async throws {
        let s = try Sandbox()
        let text = try await s.run(["backends"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("procedural") && text.stdout.contains("import"))
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(try await s.run(["backends", "--json"]).stdout.utf8)) as? [[String: Any]])
        #expect(rows.contains { $0["name"] as? String == "procedural" && $0["available"] as? Bool == true })
        // A remote instance whose key is missing says so, without touching the network.
        let config = s.root.appendingPathComponent("c.json")
        try Data(#"{"backends": {"openai": {"type": "http", "api": "openai", "url": "https://api.openai.com/v1", "apiKeyEnv": "BADGE_E2E_MISSING_KEY"}}}"#.utf8).write(to: config)
        let missing = try await s.run(["backends", "--config", config.path])
        #expect(missing.stdout.contains("the environment variable BADGE_E2E_MISSING_KEY is not set"), "\(missing.stdout)")
    }

    @Test func configValidateNamesFileLineAndColumn() async throws {
        let s = try Sandbox()
        let good = s.root.appendingPathComponent("good.json")
        try Data(#"{"backends": {"tiles": {"type": "procedural", "caption": false}}, "defaults": {"backend": "tiles"}}"#.utf8).write(to: good)
        let ok = try await s.run(["config", "validate", good.path])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("valid") && ok.stdout.contains("tiles (procedural)"))

        let bad = s.root.appendingPathComponent("bad.json")
        try Data("{\n  \"historyLimit\": 5,\n}\n".utf8).write(to: bad)
        let refused = try await s.run(["config", "validate", bad.path])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("\(bad.path):3:1: trailing comma"), "\(refused.stderr)")
    }

    @Test func theExampleConfigurationIsValid() async throws {
        let s = try Sandbox()
        let example = Sandbox.repository.appendingPathComponent("config.example.json")
        let result = try await s.run(["config", "validate", example.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("openai (http)") && result.stdout.contains("a1111 (http)") && result.stdout.contains("comfyui (http)"))
        #expect(result.stdout.contains("hf (http)") && result.stdout.contains("studio-gpu (http)"), "\(result.stdout)")
        #expect(result.stdout.contains("pillow (exec)") && result.stdout.contains("my-model (exec)"))
    }

    /// A configuration's strings may hold what a terminal acts on (a C1 CSI, a
    /// right-to-left override): `config show` prints them escaped, as JSON
    /// that means the same.
    @Test func configShowEscapesWhatATerminalActsOn() async throws {
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("c.json")
        try Data(#"{"defaults": {"style": "x\u009b2J\u202ey\u007f"}}"#.utf8).write(to: config)
        let shown = try await s.run(["config", "show", "--config", config.path])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains(#""style": "x\u009b2J\u202ey\u007f""#), "\(shown.stdout)")
        #expect(!shown.stdout.unicodeScalars.contains { $0 == "\u{9B}" || $0 == "\u{202E}" || $0 == "\u{7F}" })
    }

    @Test func configShowNeverPrintsASecret() async throws {
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("c.json")
        try Data(#"{"backends": {"openai": {"type": "http", "api": "openai", "url": "https://api.openai.com/v1", "apiKeyEnv": "BADGE_E2E_KEY"}}}"#.utf8).write(to: config)
        let shown = try await s.run(["config", "show", "--config", config.path], extraEnvironment: ["BADGE_E2E_KEY": "sk-e2e-very-secret"])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("BADGE_E2E_KEY (set)"))
        #expect(!shown.stdout.contains("sk-e2e-very-secret"))
    }

    /// `--verbose` logs an http backend's requests, but never its key: not on a successful
    /// run, and not on a failing one whose server echoes the key back in its error.
    @Test func verboseHTTPRunsNeverPrintTheKey() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Sandbox.repository.appendingPathComponent("Tests/RemoteBackendTests/Fixtures/fake_image_server.py"))
        defer { server.stop() }
        let canary = "sk-e2e-canary-7f3a9c41d2"
        let config = s.root.appendingPathComponent("c.json")
        func backend(_ mode: String) -> String {
            #""\#(mode)": {"type": "http", "api": "openai", "url": "http://127.0.0.1:\#(server.port)/\#(mode)/v1", "apiKeyEnv": "BADGE_E2E_KEY", "retries": 0}"#
        }
        try Data("{\"backends\": {\(backend("ok")), \(backend("echo-key"))}}".utf8).write(to: config)
        let succeeded = try await s.run(["generate", "--verbose", "--backend", "ok", "--size", "64", "--config", config.path, "x"],
                                        extraEnvironment: ["BADGE_E2E_KEY": canary])
        #expect(succeeded.status == 0, "\(succeeded.stderr)")
        #expect(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png"))?.backend == "ok")
        let failed = try await s.run(["generate", "--verbose", "--backend", "echo-key", "--size", "64", "--config", config.path, "x"],
                                     extraEnvironment: ["BADGE_E2E_KEY": canary])
        #expect(failed.status == 1, "\(failed.stderr)")
        // The server got the key and said it back; the CLI printed it masked.
        #expect(failed.stderr.contains("HTTP 401") && failed.stderr.contains("********"), "\(failed.stderr)")
        for (name, result) in [("succeeded", succeeded), ("failed", failed)] {
            #expect(!result.stdout.contains(canary), "\(name): the key is on stdout")
            #expect(!result.stderr.contains(canary), "\(name): the key is on stderr")
        }

        // The requests made with a source picture: OpenAI's multipart edit, A1111's img2img,
        // and ComfyUI's upload, queue, polls and view.
        let comfy = try FixtureServer(script: Sandbox.repository.appendingPathComponent("Tests/RemoteBackendTests/Fixtures/fake_comfyui_server.py"))
        defer { comfy.stop() }
        let examples = Sandbox.repository.appendingPathComponent("Plugins/Examples/comfyui").path
        func comfyBackend(_ mode: String) -> String {
            #""comfy-\#(mode)": {"type": "http", "api": "comfyui", "url": "http://127.0.0.1:\#(comfy.port)/\#(mode)", "apiKeyEnv": "BADGE_E2E_KEY", "retries": 0, "workflow": "\#(examples)/txt2img-sd15.json", "inputs": {"prompt": "6.inputs.text"}, "img2imgWorkflow": "\#(examples)/img2img-sd15.json", "img2imgInputs": {"prompt": "6.inputs.text", "image": "10.inputs.image"}}"#
        }
        let a1111EchoKey = #""a1111-echo-key": {"type": "http", "api": "automatic1111", "url": "http://127.0.0.1:\#(server.port)/echo-key", "apiKeyEnv": "BADGE_E2E_KEY", "retries": 0}"#
        try Data("{\"backends\": {\(backend("ok")), \(backend("echo-key")), \(a1111EchoKey), \(comfyBackend("ok")), \(comfyBackend("echo-key"))}}".utf8).write(to: config)
        let photo = Sandbox.repository.appendingPathComponent("Tests/Data/exif/gps-rotated.jpg").path
        var withSource: [(String, Sandbox.Result)] = []
        for backend in ["ok", "echo-key", "a1111-echo-key", "comfy-ok", "comfy-echo-key"] {
            let result = try await s.run(["generate", "--verbose", "--backend", backend, "--source", photo, "--size", "64", "--config", config.path, "x"],
                                         extraEnvironment: ["BADGE_E2E_KEY": canary])
            #expect(result.status == (backend.hasSuffix("ok") ? 0 : 1), "\(backend): \(result.stderr)")
            if !backend.hasSuffix("ok") { #expect(result.stderr.contains("HTTP 401") && result.stderr.contains("********"), "\(result.stderr)") }
            withSource.append((backend, result))
        }
        for (name, result) in withSource {
            #expect(!result.stdout.contains(canary) && !result.stderr.contains(canary), "\(name) with a source: the key was printed")
        }
    }

    @Test func importMakesABadgeFromAPicture() async throws {
        let s = try Sandbox()
        let picture = Self.pngsuite.appendingPathComponent("basn6a08.png")
        let result = try await s.run(["import", picture.path, "My picture", "--size", "64"])
        #expect(result.status == 0, "\(result.stderr)")
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        #expect(metadata.backend == "import" && metadata.prompt == "My picture")
        let piped = try await s.run(["import", "-", "Piped", "--size", "64", "--output", s.root.appendingPathComponent("p.png").path],
                              stdin: try Data(contentsOf: picture))
        #expect(piped.status == 0, "\(piped.stderr)")
        let notAPicture = try await s.run(["import", Sandbox.repository.appendingPathComponent("README.md").path, "Read it"])
        #expect(notAPicture.status == 1)
        #expect(notAPicture.stderr.contains("README.md"))
    }

    /// The standard-input reader stops at the intake's cap. Its input never
    /// ends: 4 KB, past the 1 KB cap, and the pipe is never closed. `import -`
    /// fails with the cap's words as soon as it has read one byte more than the
    /// cap; a reader that read to the end before it compared would wait there
    /// for ever, and this test gives up on it after 60 s (a bound on a hang).
    @Test func importStopsReadingAStandardInputThatNeverEndsAtTheCap() async throws {
        let s = try Sandbox()
        let capped = s.root.appendingPathComponent("capped.json")
        try Data(#"{"intake": {"maxFileBytes": 1024}}"#.utf8).write(to: capped)
        let output = s.root.appendingPathComponent("q.png")
        let process = try s.start(["import", "-", "Capped", "--config", capped.path, "--size", "64", "--output", output.path])
        let input = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardError = errors
        // Written before the start, while this process holds the reading end too
        // (4 KB fits in the pipe); the writing end stays open until the test ends.
        try input.fileHandleForWriting.write(contentsOf: Data(count: 4096))
        defer { try? input.fileHandleForWriting.close() }
        try process.run()
        let exited = try await s.waitForExit(process, timeout: .seconds(60))
        if !exited {
            _ = process.signal(SIGKILL)
            process.waitUntilExit()
        }
        #expect(exited, "import - was still reading a standard input that never ends, past its cap, after 60 s")
        let reading = Sandbox.Unchecked(errors.fileHandleForReading)
        let stderr = try await onOwnThread { String(decoding: PipeReading.readAll(reading.value), as: UTF8.self) }
        guard exited else { return }
        #expect(process.terminationStatus == 1, "\(stderr)")
        #expect(stderr.contains("standard input holds more than 1024 bytes"), "\(stderr)")
        #expect(stderr.contains("raise intake.maxFileBytes in the configuration"), "\(stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    /// libgd and libcurl are opened when first called: `--help` and a
    /// procedural badge load neither, an import loads libgd, and each still
    /// works. The dynamic loader's own log (LD_DEBUG) says what was opened.
    @Test func heavyLibrariesAreLoadedOnlyByTheRunsThatNeedThem() async throws {
        let s = try Sandbox()
        func opened(_ arguments: [String]) async throws -> String {
            let result = try await s.run(arguments, extraEnvironment: ["LD_DEBUG": "files"])
            #expect(result.status == 0, "\(arguments): \(result.stderr.suffix(2000))")
            return result.stderr
        }
        let help = try await opened(["--help"])
        let procedural = try await opened(["generate", "--size", "256", "--seed", "1", "--output", s.root.appendingPathComponent("p.png").path,
                                           "A pair of dumbbells"])
        for log in [help, procedural] {
            #expect(!log.contains("libgd.so"))
            #expect(!log.contains("libcurl.so"))
        }
        #expect(procedural.contains("libfreetype.so"), "the caption is drawn by FreeType")
        let picture = Self.pngsuite.appendingPathComponent("basn6a08.png")
        let imported = try await opened(["import", picture.path, "My picture", "--size", "64", "--output", s.root.appendingPathComponent("i.png").path])
        #expect(imported.contains("libgd.so.3"))
        #expect(!imported.contains("libcurl.so"))
    }

    /// A libgd, libcurl or libcrypto the dynamic loader cannot use (here a file
    /// that is not a shared object, found first on LD_LIBRARY_PATH: dlopen fails
    /// as it does for a missing one) is an error that names the library and the
    /// Debian package to install. The run fails cleanly and the current badge
    /// stays as it was.
    @Test func aLibraryThatCannotBeLoadedNamesThePackageToInstall() async throws {
        let s = try Sandbox()
        let kept = try await s.run(["generate", "--size", "64", "--seed", "1", "Keep this badge"])
        #expect(kept.status == 0, "\(kept.stderr)")
        let before = try #require(s.badge)
        let broken = s.root.appendingPathComponent("broken-libraries")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        for name in ["libgd.so.3", "libcurl.so.4", "libcrypto.so.3"] {
            try Data("not a shared object\n".utf8).write(to: broken.appendingPathComponent(name))
        }
        let environment = ["LD_LIBRARY_PATH": broken.path, "BADGE_E2E_KEY": "sk-test-not-a-real-key"]

        let picture = Self.pngsuite.appendingPathComponent("basn6a08.png")
        let imported = try await s.run(["import", picture.path, "My picture", "--size", "64"], extraEnvironment: environment)
        #expect(imported.status == 1)
        #expect(imported.stderr.contains("badge cannot use libgd"), "\(imported.stderr)")
        #expect(imported.stderr.contains("libgd.so.3"), "the loader's reason names the file: \(imported.stderr)")
        #expect(imported.stderr.contains("apt-get install libgd3"), "\(imported.stderr)")

        let config = s.root.appendingPathComponent("remote.json")
        try Data(#"{"backends": {"remote": {"type": "http", "api": "openai", "url": "http://127.0.0.1:9/v1", "apiKeyEnv": "BADGE_E2E_KEY", "retries": 0}}}"#.utf8)
            .write(to: config)
        let remote = try await s.run(["generate", "--config", config.path, "--backend", "remote", "--size", "64", "A remote badge"],
                                     extraEnvironment: environment)
        #expect(remote.status == 1)
        #expect(remote.stderr.contains("badge cannot use libcurl"), "\(remote.stderr)")
        #expect(remote.stderr.contains("apt-get install libcurl4"), "\(remote.stderr)")
        // Nothing was sent (libcurl never loaded), so no key could come back here: that the
        // key is never printed is verboseHTTPRunsNeverPrintTheKey's, whose server echoes it.
        #expect(!remote.stderr.contains("HTTP "), "a request went out: \(remote.stderr)")
        #expect(s.badge == before, "the current badge changed")

        // A reproducible badge's id is a SHA-256 of its picture: libcrypto's.
        var reproducible = environment
        reproducible["SOURCE_DATE_EPOCH"] = "1700000000"
        let hashed = try await s.run(["generate", "--size", "64", "--seed", "3", "A reproducible badge"], extraEnvironment: reproducible)
        #expect(hashed.status == 1)
        #expect(hashed.stderr.contains("badge cannot compute SHA-256"), "\(hashed.stderr)")
        #expect(hashed.stderr.contains("libcrypto.so.3"), "the loader's reason names the file: \(hashed.stderr)")
        #expect(hashed.stderr.contains("apt-get install libssl3"), "\(hashed.stderr)")
        #expect(s.badge == before, "the current badge changed")

        // The procedural badge needs none of them, so it still works with all three broken.
        let procedural = try await s.run(["generate", "--size", "64", "--seed", "2", "--output", s.root.appendingPathComponent("p.png").path,
                                          "Still drawn"], extraEnvironment: environment)
        #expect(procedural.status == 0, "\(procedural.stderr)")
    }

    @Test(arguments: [
        (["generate", "--size", "5", "x"], "--size must be from 64 to 4096"),
        (["generate"], "error: missing expected argument"),
        (["generate", "--nope", "x"], "error: unknown option"),
        (["generate", "--backend", "procedrual", "x"], "did you mean \"procedural\""),
        (["generate", "--date", "2027-02-30", "x"], "not a date on the calendar"),
        (["generate", "--style", "watercolour", "x"], "choose one of: medal, tile"),
    ])
    func usageErrorsExit64(arguments: [String], message: String) async throws {
        let s = try Sandbox()
        let result = try await s.run(arguments)
        #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(s.badge == nil)
    }

    /// A style the prompt's words chose is not recorded as asked for; verify
    /// names the one drawn, and its JSON says it as `show --json` does.
    @Test func verifyNamesTheStyleThePromptChose() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "128", "--seed", "4", "Read more books, edge-to-edge"]).status == 0)
        let verified = try await s.run(["verify"])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(verified.stdout.contains("seed 4, tile (from the prompt), 128 px"), "\(verified.stdout)")
        let report = try json(try await s.run(["verify", "--json"]).stdout)
        let shown = try json(try await s.run(["show", "--json"]).stdout)
        #expect(report["style"] as? String == "tile" && report["styleSource"] as? String == "prompt", "\(report)")
        #expect(shown["style"] as? String == "tile" && shown["styleSource"] as? String == "prompt", "\(shown)")

        #expect(try await s.run(["generate", "--size", "128", "--seed", "4", "Read more books"]).status == 0)
        let medal = try json(try await s.run(["verify", "--json"]).stdout)
        #expect(medal["style"] as? String == "medal" && medal["styleSource"] as? String == "default", "\(medal)")
        #expect(try await s.run(["verify"]).stdout.contains("seed 4, medal (the default), 128 px"))
    }

    /// An empty path names no file: `--store ""` made the current folder the
    /// store (and made it 0700). And `link/..` is where the kernel says,
    /// beside the link's target, not beside the link.
    @Test func emptyPathsAreRefusedAndDotDotFollowsTheKernel() async throws {
        let s = try Sandbox()
        for arguments in [["--store", "", "generate", "x"], ["--config", "", "show"], ["generate", "--output", "", "x"],
                          ["batch", "jobs.csv", "--output", ""]] {
            let result = try await s.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("\"\" "), "\(arguments): \(result.stderr)")
        }
        let fm = FileManager.default
        let real = s.root.appendingPathComponent("real/inner"), links = s.root.appendingPathComponent("links")
        try fm.createDirectory(at: real, withIntermediateDirectories: true)
        try fm.createDirectory(at: links, withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: links.appendingPathComponent("L").path, withDestinationPath: real.path)
        let target = links.appendingPathComponent("L/../out.png").path
        #expect(try await s.run(["generate", "--size", "64", "--output", target, "x"]).status == 0)
        #expect(fm.fileExists(atPath: s.root.appendingPathComponent("real/out.png").path), "written beside the link's target")
        #expect(!fm.fileExists(atPath: links.appendingPathComponent("out.png").path), "written beside the link")
    }

    /// A promise of two lines goes on under its column in show's table: its
    /// second line cannot pass for a row (a forged commitment date).
    @Test func aPromiseOfTwoLinesCannotPassForARowOfShow() async throws {
        let s = try Sandbox()
        let forged = "Commitment Date  January 1, 1999"
        #expect(try await s.run(["generate", "--size", "64", "--seed", "1", "Run more\n" + forged]).status == 0)
        let lines = try await s.run(["show"]).stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.filter { $0.hasPrefix("  Commitment Date") }.count == 1, "\(lines)")
        let second = try #require(lines.first { $0.hasSuffix(forged) }, "\(lines)")
        let column = try #require(lines.first { $0.hasPrefix("  Promise") }.map { $0.count - "Run more".count })
        #expect(second.prefix(column).allSatisfy { $0 == " " } && second.dropFirst(column) == forged, "\(lines)")
    }

    /// The config's default style is a default: a promise whose words ask for
    /// a style is drawn in it, by `generate` and by a batch alike; a promise
    /// that asks for none gets the config's.
    @Test func theConfigsDefaultStyleGivesWayToThePromisesWords() async throws {
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("config.json")
        try Data(#"{"defaults": {"style": "flat", "size": 96}}"#.utf8).write(to: config)
        #expect(try await s.run(["generate", "--config", config.path, "--seed", "3", "A sketch of a cup of tea"]).status == 0)
        let sketch = try json(try await s.run(["show", "--json"]).stdout)
        #expect(sketch["style"] as? String == "sketch" && sketch["styleSource"] as? String == "prompt", "\(sketch)")
        #expect(try await s.run(["generate", "--config", config.path, "--seed", "3", "A cup of tea"]).status == 0)
        let flat = try json(try await s.run(["show", "--json"]).stdout)
        #expect(flat["style"] as? String == "flat" && flat["styleSource"] as? String == "request", "\(flat)")
        // --style still wins over the words.
        #expect(try await s.run(["generate", "--config", config.path, "--style", "tile", "--seed", "3", "A sketch of a cup of tea"]).status == 0)
        #expect(try json(try await s.run(["show", "--json"]).stdout)["style"] as? String == "tile")

        let jobs = s.root.appendingPathComponent("jobs.csv"), out = s.root.appendingPathComponent("out")
        try Data("name,prompt\nsketch,A sketch of a cup of tea\nplain,A cup of tea\n".utf8).write(to: jobs)
        let batch = try await s.run(["batch", "--config", config.path, jobs.path, "--output", out.path])
        #expect(batch.status == 0, "\(batch.stdout)\(batch.stderr)")
        for (name, style, source) in [("sketch", "sketch", "prompt"), ("plain", "flat", "request")] {
            let report = try json(try await s.run(["verify", "--json", out.appendingPathComponent("\(name).png").path]).stdout)
            #expect(report["matches"] as? Bool == true && report["style"] as? String == style
                        && report["styleSource"] as? String == source, "\(name): \(report)")
        }
    }

    @Test func verifyReRendersAProceduralBadgeAndCatchesATamperedOne() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "128", "--seed", "4", "--style", "tile", "Read more books"]).status == 0)
        let verified = try await s.run(["verify"])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(verified.stdout.hasPrefix("verified: every pixel matches"))
        // The same pixels under another prompt's metadata: the provenance no longer holds.
        var chunks = try PNG.chunks(in: try #require(s.badge))
        let index = try #require(chunks.firstIndex { PNG.textEntry($0)?.keyword == "badge:prompt" })
        chunks[index] = PNG.iTXt(keyword: "badge:prompt", text: "Read more bookz")
        let tampered = s.root.appendingPathComponent("tampered.png")
        try PNG.assemble(chunks).write(to: tampered)
        let refused = try await s.run(["verify", tampered.path, "--json"])
        #expect(refused.status == 1)
        #expect(try json(refused.stdout)["matches"] as? Bool == false)
    }

    /// The log's metadata is logfmt: a value with spaces is quoted, so each ends where it seems to.
    @Test func verboseSaysWhichWordsChoseTheMotifPaletteAndStyle() async throws {
        let s = try Sandbox()
        let preview = s.root.appendingPathComponent("verbose.png").path
        let result = try await s.run(["generate", "--verbose", "--size", "128", "--seed", "1", "--output", preview, "Run at sunrise, coral flat"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains(" motif=\"runner <- run\" "), "\(result.stderr)")
        #expect(result.stderr.contains(" palette=\"coral, "), "\(result.stderr)")
        #expect(result.stderr.contains(" style=\"flat (from the prompt)\""), "\(result.stderr)")
        #expect(result.stderr.contains(" caption-drawn=\"RUN AT SUNRISE\" "), "\(result.stderr)")
    }

    @Test func promptComposesALineThatGenerateDrawsStageByStage() async throws {
        let s = try Sandbox()
        let composed = try await s.run(["prompt", "--purpose", "Run a marathon", "--vibe", "joyful", "--metaphor", "path",
                                        "--style", "flat", "--color", "coral"], stdin: Data())
        #expect(composed.status == 0, "\(composed.stderr)")
        let line = composed.stdout.trimmingCharacters(in: .newlines)
        #expect(line == "Run a marathon, joyful mood, a path as its symbol, flat style in coral --ar 1:1")
        let generated = try await s.run(["generate", "--size", "128", "--seed", "2", "--json", line])
        #expect(generated.status == 0, "\(generated.stderr)")
        let extra = try #require(try json(generated.stdout)["extra"] as? [String: String])
        #expect(extra["motif"] == "path <- path")
        #expect(extra["style"] == "flat (from the prompt)")
        #expect(extra["palette"]?.contains("coral joyful") == true, "\(extra)")
    }

    @Test func promptAsksForEachStageAndAgainAfterAnAnswerItCannotUse() async throws {
        let s = try Sandbox()
        // "sereen" is no vibe, nor a word for one ("sleepy" would be drawn as night).
        let answers = "Swim across the lake\nsereen\nserene\n\nsketch\nteal\n"
        let result = try await s.run(["prompt", "--interactive"], stdin: Data(answers.utf8))
        #expect(result.status == 0, "\(result.stderr)")
        // Enter at the symbol takes the one the purpose's words suggest.
        #expect(result.stdout == "Swim across the lake, serene mood, a swimmer as its symbol, sketch style in teal --ar 1:1\n")
        // The question listed the vibes; the error says what is wrong and the vibe nearest in meaning (the list is printed once).
        #expect(result.stderr.contains("\"sereen\" is not a vibe the badge can draw; did you mean \"serene\"?"), "\(result.stderr)")
        #expect(result.stderr.contains("Enter: swimmer, from your words"))
    }

    @Test func promptWithoutATerminalNeedsItsPurposeAndSaysWhatIsWrong() async throws {
        let s = try Sandbox()
        let bare = try await s.run(["prompt"], stdin: Data())
        #expect(bare.status == 64 && bare.stderr.contains("--purpose is required when standard input is not a terminal"), "\(bare.stderr)")
        let ended = try await s.run(["prompt", "--interactive"], stdin: Data("Run\n".utf8))
        #expect(ended.status == 64 && ended.stderr.contains("standard input ended"), "\(ended.stderr)")
        let wrong = try await s.run(["prompt", "--purpose", "Run", "--metaphor", "dragon"], stdin: Data())
        #expect(wrong.status == 64 && wrong.stderr.contains("\"dragon\" is not a symbol") && wrong.stdout.isEmpty)
    }

    @Test func helpVersionAndCompletions() async throws {
        let s = try Sandbox()
        let help = try await s.run(["--help"])
        #expect(help.status == 0 && help.stdout.contains("generate") && help.stdout.contains("restore"))
        let version = try await s.run(["--version"])
        #expect(version.status == 0 && version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == BadgeMetadata.version)
        let completion = try await s.run(["--generate-completion-script", "bash"])
        #expect(completion.status == 0 && completion.stdout.contains("_badge"))
    }

    /// A picture given to a backend that draws from words alone is refused, never ignored:
    /// the badge that would have come out is not the one asked for.
    @Test func aSourceForABackendThatCannotUseItIsAUsageError() async throws {
        let s = try Sandbox()
        let picture = Self.pngsuite.appendingPathComponent("basn6a08.png").path
        let made = try await s.run(["generate", "--size", "64", "--seed", "1", "Keep this one"])
        #expect(made.status == 0, "\(made.stderr)")
        let before = try Data(contentsOf: s.store.appendingPathComponent("badge.png"))
        let config = s.root.appendingPathComponent("c.json")
        // A raw http body and the exec protocol have no place for a picture; the openai, automatic1111 and comfyui dialects have.
        try Data(#"{"backends": {"hf": {"type": "http", "api": "raw", "url": "https://127.0.0.1:9/models/x", "apiKeyEnv": "BADGE_E2E_KEY"}, "plug": {"type": "exec", "command": ["/bin/true"]}}}"#.utf8)
            .write(to: config)
        for backend in ["procedural", "hf", "plug"] {
            let refused = try await s.run(["generate", "--config", config.path, "--backend", backend, "--source", picture, "Make it a badge"])
            #expect(refused.status == 64, "\(backend): \(refused.stderr)")
            #expect(refused.stderr.contains("backend '\(backend)': it makes its picture from the words alone and cannot use a source picture (--source)"),
                    "\(refused.stderr)")
            #expect(refused.stderr.contains("badge import FILE") && refused.stderr.contains("openai, automatic1111 or comfyui"), "\(refused.stderr)")
        }
        #expect(try Data(contentsOf: s.store.appendingPathComponent("badge.png")) == before)
        // The backend that reads a picture still takes it.
        let imported = try await s.run(["generate", "--backend", "import", "--source", picture, "--size", "64", "Walk every day"])
        #expect(imported.status == 0, "\(imported.stderr)")
    }
}
