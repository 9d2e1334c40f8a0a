import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `badge batch` end to end: the built binary, the fake image server, real files.
@Suite(.threadsOfTheirOwn, .serialized)
struct BatchCommandTests {
    static let imageServer = Sandbox.repository.appendingPathComponent("Tests/RemoteBackendTests/Fixtures/fake_image_server.py")
    static let picture = CommandTests.pngsuite.appendingPathComponent("basn6a08.png")

    private func manifest(_ s: Sandbox) throws -> [String: Any] {
        let data = try Data(contentsOf: s.root.appendingPathComponent("out/manifest.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func statuses(_ manifest: [String: Any]) -> [String: String] {
        let results = (manifest["results"] as? [[String: Any]]) ?? []
        return Dictionary(uniqueKeysWithValues: results.map { ($0["key"] as! String, $0["status"] as! String) })
    }

    @Test func aMixedBatchRunsEveryBackendAndReportsItsFailures() async throws {
        let server = try FixtureServer(script: Self.imageServer)
        defer { server.stop() }
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("config.json")
        try Data("""
            {"backends": {
              "remote": {"type": "http", "api": "openai", "url": "http://127.0.0.1:\(server.port)/ok/v1",
                         "apiKeyEnv": "BADGE_TEST_KEY", "retries": 0, "concurrency": 2},
              "broken": {"type": "http", "api": "openai", "url": "http://127.0.0.1:\(server.port)/echo-key/v1",
                         "apiKeyEnv": "BADGE_TEST_KEY", "retries": 0}
            }}
            """.utf8).write(to: config)
        try Data("""
            name,prompt,backend,source,variants,size
            dumbbells,A pair of dumbbells,procedural,,2,128
            remote-a,A lighthouse at dawn,remote,,,
            remote-b,A quiet forest,remote,,,
            failing,Anything at all,broken,,,
            photo,My own picture,import,\(Self.picture.path),,128
            missing,A picture that is not there,import,does-not-exist.jpg,,128
            """.utf8).write(to: s.root.appendingPathComponent("jobs.csv"))
        let env = ["BADGE_TEST_KEY": "sk-batch-test-key-123456"]
        let arguments = ["batch", "--config", config.path, s.root.appendingPathComponent("jobs.csv").path,
                         "--output", s.root.appendingPathComponent("out").path]
        let first = try await s.run(arguments, extraEnvironment: env)
        #expect(first.status == 1, "a failed job makes the exit code 1: \(first.stderr)")
        #expect(first.stdout.contains("Made 5 badges") && first.stdout.contains("2 failed"), "\(first.stdout)")
        #expect(first.stdout.contains("failing: ") && first.stdout.contains("401"), "the summary says why: \(first.stdout)")
        #expect(first.stdout.contains("missing: ") && first.stdout.contains("does-not-exist.jpg"), "\(first.stdout)")
        // The failing backend's server echoes the key in its error message ("Incorrect API key
        // provided: sk-..."): badge must not repeat it anywhere.
        #expect(!first.stdout.contains("sk-batch-test-key") && !first.stderr.contains("sk-batch-test-key"))
        let manifestText = try String(contentsOf: s.root.appendingPathComponent("out/manifest.json"), encoding: .utf8)
        #expect(!manifestText.contains("sk-batch-test-key"), "the manifest repeats the key")
        #expect(manifestText.contains("Incorrect API key provided"), "the server's own words, less the key, are in the manifest")

        let report = try manifest(s)
        #expect(statuses(report) == [
            "dumbbells-01": "ok", "dumbbells-02": "ok", "remote-a": "ok", "remote-b": "ok",
            "failing": "failed", "photo": "ok", "missing": "failed",
        ])
        let files = try FileManager.default.contentsOfDirectory(atPath: s.root.appendingPathComponent("out").path).sorted()
        #expect(files == ["dumbbells-01.png", "dumbbells-02.png", "manifest.json", "photo.png", "remote-a.png", "remote-b.png"])
        for (key, backend) in [("dumbbells-01", "procedural"), ("remote-a", "remote"), ("photo", "import")] {
            let url = s.root.appendingPathComponent("out/\(key).png")
            let metadata = try #require(try BadgeMetadata.read(from: url), "\(key) carries the badge's metadata")
            #expect(metadata.backend == backend)
            let entry = try #require((report["results"] as? [[String: Any]])?.first { $0["key"] as? String == key })
            #expect(try entry["sha256"] as? String == BatchHash.sha256(try Data(contentsOf: url)))
            #expect(entry["requestHash"] as? String == metadata.extra["batch-request"])
        }
        #expect(s.badge == nil, "a batch never touches the store unless asked to commit")

        // The rerun redoes only what failed.
        let second = try await s.run(arguments, extraEnvironment: env)
        #expect(second.status == 1)
        #expect(second.stdout.contains("Made 0 badges") && second.stdout.contains("5 already up to date"), "\(second.stdout)")
    }

    @Test func anInterruptedRunResumesWhereItStopped() async throws {
        let s = try Sandbox()
        let jobs = (0..<40).map { "{\"name\": \"b\($0)\", \"prompt\": \"Promise \($0)\", \"size\": 512}" }
        let list = s.root.appendingPathComponent("jobs.jsonl")
        try Data(jobs.joined(separator: "\n").utf8).write(to: list)
        let out = s.root.appendingPathComponent("out")
        let arguments = ["batch", list.path, "--output", out.path, "--concurrency", "1"]
        let child = try s.start(arguments)
        let stdout = Pipe()
        child.standardOutput = stdout
        child.standardError = FileHandle.nullDevice
        try child.run()
        func finished() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []).filter { !$0.hasPrefix(".") && $0.hasSuffix(".png") }
        }
        try await waitUntil("three badges of the batch (\(finished().count) so far)") { finished().count >= 3 || !child.isRunning }
        #expect(child.isRunning, "the batch finished before it could be interrupted")
        child.interrupt()
        #expect(try await s.waitForExit(child), "the batch did not stop within 60 s of SIGINT")
        let output = String(decoding: PipeReading.readAll(stdout.fileHandleForReading), as: UTF8.self)
        #expect(child.terminationStatus == 130, "\(output)")
        let done = finished()
        #expect(done.count >= 3 && done.count < 40, "\(done.count) finished")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "no partial file: \(leftovers)")
        for name in done {
            let data = try Data(contentsOf: out.appendingPathComponent(name))
            #expect((try? PNG.chunks(in: data))?.last?.type == "IEND", "\(name) is complete")
        }
        let interrupted = statuses(try manifest(s))
        #expect(interrupted.values.filter { $0 == "ok" }.count == done.count)
        #expect(interrupted.values.contains("cancelled"))

        // Up to 37 badges of 512 px from a debug build: about 25 s alone, and past the
        // default 60 s bound on a hang beside the other suites on 2 loaded cores.
        let rerun = try await s.run(arguments + ["--concurrency", "2"], timeout: 300)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(rerun.stdout.contains("\(done.count) already up to date"), "\(rerun.stdout)")
        #expect(rerun.stdout.contains("Made \(40 - done.count) badges"), "\(rerun.stdout)")
        #expect(finished().count == 40)
    }

    /// Each shard makes its own share, the jobs whose `fnv1a(name) mod N` is K
    /// (docs/BATCH.md), and nothing else: after shard K the output holds the
    /// badges of shards 0 to K only, and the shards together make every job once.
    @Test func shardsSplitOneManifestAcrossMachines() async throws {
        let s = try Sandbox()
        let names = (0..<12).map { "s\($0)" }
        let jobs = names.map { "{\"name\": \"\($0)\", \"prompt\": \"Promise \($0.dropFirst())\", \"size\": 64}" }
        let list = s.root.appendingPathComponent("jobs.json")
        try Data(("[" + jobs.joined(separator: ",\n") + "]").utf8).write(to: list)
        let out = s.root.appendingPathComponent("out")
        // FNV-1a, 64-bit, of the name's UTF-8, written out here as the documentation gives it.
        func fnv1a(_ text: String) -> UInt64 {
            text.utf8.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
        }
        let shares = (0..<3).map { k in Set(names.filter { fnv1a($0) % 3 == UInt64(k) }) }
        // Every share has jobs, so a shard that takes another's is seen.
        #expect(shares.allSatisfy { !$0.isEmpty } && shares.map(\.count).reduce(0, +) == 12, "\(shares)")
        func badges() -> Set<String> {
            Set(((try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? [])
                .filter { $0.hasSuffix(".png") && !$0.hasPrefix(".") }.map { String($0.dropLast(4)) })
        }
        var made: [String] = []
        var expected = Set<String>()
        for k in 0..<3 {
            let result = try await s.run(["batch", list.path, "--output", out.path, "--shard", "\(k)/3", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            #expect(report["shard"] as? String == "\(k)/3")
            let mine = ((report["results"] as? [[String: Any]]) ?? []).compactMap { $0["key"] as? String }
            #expect(mine.sorted() == shares[k].sorted(), "shard \(k)/3 made \(mine.sorted()), not its share \(shares[k].sorted())")
            made += mine
            expected.formUnion(shares[k])
            #expect(badges() == expected, "after shard \(k)/3 the output holds \(badges().sorted()), not \(expected.sorted())")
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("manifest-\(k)-of-3.json").path))
        }
        #expect(made.sorted() == names.sorted(), "every job exactly once: \(made.sorted())")
    }

    @Test func hostileNamesCreateNothingAnywhere() async throws {
        let s = try Sandbox()
        let out = s.root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let outside = s.root.appendingPathComponent("precious.png")
        try Data("keep me".utf8).write(to: outside)
        try FileManager.default.createSymbolicLink(atPath: out.appendingPathComponent("ok.png").path, withDestinationPath: outside.path)
        // Everything but the user's cache, where the first run keeps fontconfig's answer.
        func listing() throws -> [String] {
            try FileManager.default.subpathsOfDirectory(atPath: s.root.path).filter { !$0.hasPrefix("home/.cache") }.sorted()
        }
        for name in ["../x", "/abs/x", "a\\u0000b", ".hidden", "sub/../../x"] {
            let list = s.root.appendingPathComponent("evil.json")
            try Data("[{\"name\": \"ok\", \"prompt\": \"x\", \"size\": 64}, {\"name\": \"\(name)\", \"prompt\": \"y\"}]".utf8).write(to: list)
            let before = try listing()
            let result = try await s.run(["batch", list.path, "--output", out.path])
            #expect(result.status == 1, "\(name)")
            #expect(result.stderr.contains("evil.json:1:") && result.stderr.contains("job name"), "\(name): \(result.stderr)")
            #expect(try listing() == before, "\(name) created something")
        }
        // A planted symlink is replaced by the badge, and what it pointed to is untouched.
        let list = s.root.appendingPathComponent("good.json")
        try Data("[{\"name\": \"ok\", \"prompt\": \"x\", \"size\": 64}]".utf8).write(to: list)
        #expect(try await s.run(["batch", list.path, "--output", out.path]).status == 0)
        #expect(try String(contentsOf: outside, encoding: .utf8) == "keep me")
        #expect((try FileManager.default.attributesOfItem(atPath: out.appendingPathComponent("ok.png").path))[.type] as? FileAttributeType == .typeRegular)
    }

    /// What a job's backend would refuse (a prompt past 4000 bytes, a source
    /// for a backend that reads none, an option it does not read, a style it
    /// has not, an unknown backend) is found before any job runs, every wrong
    /// job named at its field, with the jobs whose fields are wrong.
    @Test func everyJobIsCheckedBeforeAnyRuns() async throws {
        let s = try Sandbox()
        let list = s.root.appendingPathComponent("jobs.jsonl")
        let lines = [
            #"{"name": "fine", "prompt": "Walk daily", "size": 64}"#,
            #"{"name": "long", "prompt": "\#(String(repeating: "x", count: 4001))"}"#,
            #"{"name": "photo", "prompt": "Swim", "source": "swim.png"}"#,
            #"{"name": "opt", "prompt": "Run", "options": {"bogus": "1"}}"#,
            #"{"name": "look", "prompt": "Read", "style": "baroque"}"#,
            #"{"name": "where", "prompt": "Cook", "backend": "nowhere"}"#,
            #"{"name": "small", "prompt": "Cook", "size": 10}"#,
        ]
        try Data(lines.joined(separator: "\n").utf8).write(to: list)
        let out = s.root.appendingPathComponent("out")
        let result = try await s.run(["batch", list.path, "--output", out.path])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("jobs.jsonl:2:28: job \"long\": the prompt is 4001 bytes long"), "\(result.stderr)")
        for said in ["5 more jobs are wrong", "line 3, column 47: job \"photo\": backend 'procedural': it makes its picture from the words alone and cannot use a source picture (the job's \"source\")",
                     "line 4, column 55: job \"opt\": backend 'procedural': unknown options key \"bogus\"",
                     "line 5, column 45: job \"look\": backend 'procedural': it has no style \"baroque\"",
                     "line 6, column 48: job \"where\": no backend is named \"nowhere\"",
                     "line 7, column 45: job \"small\": size: 10 is out of range"] {
            #expect(result.stderr.contains(said), "\(said): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: out.path), "a wrong job runs nothing, the fine one included")

        // A style for a backend without styles would be ignored; two jobs writing one
        // file are named with the others, not instead of them.
        let picture = s.root.appendingPathComponent("swim.png")
        try TestPNG.solid(width: 32, height: 32, rgb: (1, 2, 3)).write(to: picture)
        try Data([
            #"{"name": "pic", "prompt": "Swim", "backend": "import", "source": "swim.png", "style": "medal", "size": 64}"#,
            #"{"name": "c", "prompt": "Run", "variants": 2, "size": 64}"#,
            #"{"name": "c-02", "prompt": "Run more", "size": 64}"#,
            #"{"name": "fitted", "prompt": "Swim", "backend": "import", "source": "swim.png", "options": {"fit": "fitt"}, "size": 64}"#,
        ].joined(separator: "\n").utf8).write(to: list)
        let more = try await s.run(["batch", list.path, "--output", out.path])
        #expect(more.status == 1, "\(more.stderr)")
        #expect(more.stderr.contains("jobs.jsonl:1:87: job \"pic\": backend 'import': it has no styles; the job's style would be ignored"), "\(more.stderr)")
        #expect(more.stderr.contains("2 more jobs are wrong: line 3, column 1: job \"c-02\" writes c-02.png, which job \"c\""), "\(more.stderr)")
        // An option's value the backend cannot take, too.
        #expect(more.stderr.contains("line 4, column 100: job \"fitted\": backend 'import': options.fit \"fitt\": expected one of cover, contain"), "\(more.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    @Test func aMissingManifestOrNoJobsIsAUsageError() async throws {
        let s = try Sandbox()
        let missing = try await s.run(["batch", s.root.appendingPathComponent("nope.csv").path])
        #expect(missing.status == 64 && missing.stderr.contains("nope.csv") && missing.stderr.contains("no such file"), "\(missing.stderr)")
        let none = try await s.run(["batch"])
        #expect(none.status == 64 && none.stderr.contains("no jobs"), "\(none.stderr)")
        let empty = s.root.appendingPathComponent("empty.json")
        try Data("[]".utf8).write(to: empty)
        let nothing = try await s.run(["batch", empty.path])
        #expect(nothing.status == 64 && nothing.stderr.contains("no jobs"), "\(nothing.stderr)")
    }

    @Test func commitMakesOneResultTheCurrentBadge() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "the old promise"]).status == 0)
        let list = s.root.appendingPathComponent("jobs.json")
        try Data("{\"jobs\": [{\"name\": \"logo\", \"prompt\": \"Learn the guitar\", \"size\": 64, \"variants\": 3}]}".utf8).write(to: list)
        let out = s.root.appendingPathComponent("out").path
        let typo = try await s.run(["batch", list.path, "--output", out, "--commit", "logo"])
        #expect(typo.status == 64 && typo.stderr.contains("logo-01"), "a job with variants needs one named: \(typo.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out), "a usage error runs nothing")
        let result = try await s.run(["batch", list.path, "--output", out, "--commit", "logo-02", "--date", "2027-01-01"])
        #expect(result.status == 0, "\(result.stderr)")
        let current = try #require(try s.storeObject.current())
        #expect(current.metadata.prompt == "Learn the guitar" && current.metadata.commitmentDateString.hasPrefix("2027-01-01"))
        let variant = try #require(try BadgeMetadata.read(from: URL(fileURLWithPath: out + "/logo-02.png")))
        #expect(current.metadata.seed == variant.seed && current.metadata.id != variant.id)
        #expect(try s.storeObject.history().map(\.metadata.prompt) == ["the old promise"])
    }

    /// A manifest's style is matched the way people type it, as `--style` is: "Tile" draws a tile.
    @Test func aManifestStyleIsMatchedWithoutRegardToCase() async throws {
        let s = try Sandbox()
        try Data(#"[{"name": "a", "prompt": "Run daily", "style": "Tile", "size": 64}, {"name": "b", "prompt": "Run daily", "style": "SKETCH", "size": 64}]"#
            .utf8).write(to: s.root.appendingPathComponent("jobs.json"))
        let out = s.root.appendingPathComponent("out")
        let result = try await s.run(["batch", s.root.appendingPathComponent("jobs.json").path, "--output", out.path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let a = try #require(try BadgeMetadata.read(from: out.appendingPathComponent("a.png")))
        let b = try #require(try BadgeMetadata.read(from: out.appendingPathComponent("b.png")))
        #expect(a.style == "tile" && b.style == "sketch", "\(String(describing: a.style)), \(String(describing: b.style))")
        // Recorded and hashed as the backend spells it: "Tile" and "tile" are one request, and
        // `--style MEDAL` is "medal" for a job that names none.
        try Data(#"[{"name": "d", "prompt": "Run daily", "style": "Tile", "seed": 5, "size": 64}, {"name": "e", "prompt": "Run daily", "style": "tile", "seed": 5, "size": 64}, {"name": "f", "prompt": "Run daily", "size": 64}]"#
            .utf8).write(to: s.root.appendingPathComponent("cases.json"))
        let cases = s.root.appendingPathComponent("cases")
        let spelt = try await s.run(["batch", s.root.appendingPathComponent("cases.json").path, "--output", cases.path, "--style", "MEDAL"])
        #expect(spelt.status == 0, "\(spelt.stdout)\(spelt.stderr)")
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: cases.appendingPathComponent("manifest.json"))) as? [String: Any])
        let results = try #require(manifest["results"] as? [[String: Any]])
        func entry(_ job: String) -> [String: Any]? { results.first { $0["job"] as? String == job } }
        let styles = ["d", "e", "f"].map { (entry($0)?["request"] as? [String: Any])?["style"] as? String }
        #expect(styles == ["tile", "tile", "medal"], "\(styles)")
        #expect(entry("d")?["requestHash"] as? String != nil && entry("d")?["requestHash"] as? String == entry("e")?["requestHash"] as? String)
        // An unknown style is still refused, with the choices, before anything runs.
        try Data(#"[{"name": "c", "prompt": "Run daily", "style": "Tiles", "size": 64}]"#.utf8).write(to: s.root.appendingPathComponent("bad.json"))
        let bad = try await s.run(["batch", s.root.appendingPathComponent("bad.json").path, "--output", s.root.appendingPathComponent("bad").path])
        #expect(bad.status == 1 && bad.stderr.contains("bad.json:1:48: job \"c\": backend 'procedural': it has no style \"Tiles\"")
                && bad.stderr.contains("medal, tile, flat, sketch"), "\(bad.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.root.appendingPathComponent("bad").path))
    }

    /// A CSV row's mistake is at its cell, and an option is named by its column.
    @Test func aCSVMistakeIsAtItsCell() async throws {
        let s = try Sandbox()
        let list = s.root.appendingPathComponent("jobs.csv")
        try Data("name,prompt,backend,source,option:fit\nalice,Run,import,a.png,zoom\nbob,Read,,,cover\n".utf8).write(to: list)
        let result = try await s.run(["batch", list.path, "--output", s.root.appendingPathComponent("out").path])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("""
            jobs.csv:2:24: job "alice": backend 'import': option:fit "zoom": expected one of cover, contain
              hint: cover fills the square, contain shows the whole picture
              1 more job is wrong: line 3, column 12: job "bob": backend 'procedural': unknown column "option:fit"
            """), "\(result.stderr)")
    }

    /// A wrong `--style`, or config `defaults.style`, is named once, at the
    /// option or the config key, not once for each job that takes it.
    @Test func aWrongDefaultStyleIsNamedOnce() async throws {
        let s = try Sandbox()
        let list = s.root.appendingPathComponent("jobs.json")
        try Data(#"[{"name": "a", "prompt": "Run daily", "size": 64}, {"name": "b", "prompt": "Run more", "size": 64}]"#.utf8).write(to: list)
        let out = s.root.appendingPathComponent("out")
        let option = try await s.run(["batch", list.path, "--output", out.path, "--style", "Baroque"])
        #expect(option.status == 64, "\(option.stderr)")
        #expect(option.stderr == """
            error: --style "Baroque": backend 'procedural' has no such style
              hint: choose one of: medal, tile, flat, sketch; --style is the style of every job that names none

            """, "\(option.stderr)")
        let config = s.root.appendingPathComponent("config.json")
        try Data("{\n  \"defaults\": {\"style\": \"baroque\"}\n}\n".utf8).write(to: config)
        let key = try await s.run(["batch", list.path, "--output", out.path, "--config", config.path])
        #expect(key.status == 1, "\(key.stderr)")
        #expect(key.stderr == """
            error: \(config.path):2:25: defaults.style: backend 'procedural' has no style "baroque"
              hint: choose one of: medal, tile, flat, sketch; it is the style of every batch job that names none

            """, "\(key.stderr)")
        // Named first, before the jobs' own mistakes, in the same run.
        let jobs = s.root.appendingPathComponent("more.json")
        try Data(#"[{"name": "a", "prompt": "Run daily", "size": 10}, {"name": "b", "prompt": "Run", "style": "Tiles"}, {"name": "c", "prompt": "Walk"}]"#
            .utf8).write(to: jobs)
        let both = try await s.run(["batch", jobs.path, "--output", out.path, "--style", "Baroque"])
        #expect(both.stderr == """
            error: --style "Baroque": backend 'procedural' has no such style
              hint: choose one of: medal, tile, flat, sketch; --style is the style of every job that names none
              2 jobs are wrong too: line 1, column 47: job "a": size: 10 is out of range; line 1, column 92: job "b": backend 'procedural': it has no style "Tiles"

            """, "\(both.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    /// A fallback takes a job when its backend fails: what the fallback would
    /// refuse of it is named before anything runs.
    @Test func aFallbackIsCheckedBeforeAnyJobRuns() async throws {
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("config.json")
        try Data(#"{"backends": {"pics": {"type": "import", "fallback": "procedural"}}}"#.utf8).write(to: config)
        try TestPNG.solid(width: 32, height: 32, rgb: (1, 2, 3)).write(to: s.root.appendingPathComponent("a.png"))
        let list = s.root.appendingPathComponent("jobs.json")
        try Data(#"[{"name": "a", "prompt": "Swim", "backend": "pics", "source": "a.png", "options": {"fit": "contain"}, "size": 64}]"#
            .utf8).write(to: list)
        let out = s.root.appendingPathComponent("out")
        let result = try await s.run(["batch", list.path, "--output", out.path, "--config", config.path])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("""
            jobs.json:1:91: job "a": backend 'procedural' (the fallback of 'pics'): unknown options key "fit"
              hint: this backend reads no options
            """), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }
}
