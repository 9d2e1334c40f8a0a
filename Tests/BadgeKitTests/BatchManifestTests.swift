@testable import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

@Suite(.threadsOfTheirOwn)
struct BatchManifestTests {
    static let base = URL(fileURLWithPath: "/data/batch", isDirectory: true)

    private func parse(_ text: String, _ format: BatchManifest.Format, file: String = "jobs") throws -> [BatchJob] {
        try BatchManifest.parse(Data(text.utf8), file: file, format: format, baseDirectory: Self.base).jobs
    }

    private func error(_ text: String, _ format: BatchManifest.Format) -> BadgeError? {
        do {
            _ = try parse(text, format)
            return nil
        } catch {
            return error as? BadgeError
        }
    }

    @Test func theThreeFormatsSayTheSameThing() throws {
        let json = """
            [{"name": "alice", "prompt": "Run a marathon, slowly", "style": "tile", "size": 256, "variants": 3,
              "source": "photos/a.jpg", "options": {"caption": "off"}},
             {"prompt": "Drink more water", "seed": 7}]
            """
        let wrapped = "{\"jobs\": \(json)}"
        let lines = """
            {"name": "alice", "prompt": "Run a marathon, slowly", "style": "tile", "size": 256, "variants": 3, "source": "photos/a.jpg", "options": {"caption": "off"}}

            {"prompt": "Drink more water", "seed": 7}
            """
        let csv = """
            name,prompt,style,size,variants,source,seed,option:caption\r
            alice,"Run a marathon, slowly",tile,256,3,photos/a.jpg,,off\r
            ,Drink more water,,,,,7,\r
            """
        let expected = try parse(json, .json)
        #expect(expected.count == 2)
        #expect(expected[0].name == "alice" && expected[0].prompt == "Run a marathon, slowly")
        #expect(expected[0].style == "tile" && expected[0].size == 256 && expected[0].variants == 3)
        #expect(expected[0].source == "/data/batch/photos/a.jpg")
        #expect(expected[0].options == ["caption": "off"])
        #expect(expected[1].name == "drink-more-water" && expected[1].seed == 7 && expected[1].variants == 1)
        for (text, format) in [(wrapped, BatchManifest.Format.json), (lines, .jsonLines), (csv, .csv)] {
            let jobs = try parse(text, format)
            #expect(jobs.map(\.name) == expected.map(\.name), "\(format)")
            #expect(jobs.map(\.prompt) == expected.map(\.prompt), "\(format)")
            #expect(jobs.map(\.variants) == expected.map(\.variants), "\(format)")
            #expect(jobs.map(\.source) == expected.map(\.source), "\(format)")
            #expect(jobs.map(\.options) == expected.map(\.options), "\(format)")
            #expect(jobs.map(\.seed) == expected.map(\.seed), "\(format)")
        }
        #expect(BatchManifest.sniff(Data(json.utf8)) == .json)
        #expect(BatchManifest.sniff(Data(wrapped.utf8)) == .json)
        #expect(BatchManifest.sniff(Data(lines.utf8)) == .jsonLines)
        #expect(BatchManifest.sniff(Data(csv.utf8)) == .csv)
        // With a byte order mark, as some editors save: read the same.
        let bom = Data([0xEF, 0xBB, 0xBF])
        #expect(BatchManifest.sniff(bom + Data(json.utf8)) == .json)
        #expect(BatchManifest.sniff(bom + Data(lines.utf8)) == .jsonLines)
        #expect(BatchManifest.sniff(bom + Data(csv.utf8)) == .csv)
        #expect(try parse("\u{FEFF}" + lines, .jsonLines).map(\.name) == expected.map(\.name))
    }

    @Test func aCSVCellMayHoldQuotesAndLineBreaks() throws {
        let jobs = try parse("name,prompt\nq,\"Say \"\"hello\"\"\nevery day\"\n", .csv)
        #expect(jobs.count == 1)
        #expect(jobs[0].prompt == "Say \"hello\"\nevery day")
    }

    @Test func errorsSayWhereAndWhat() throws {
        let unknown = try #require(error("[{\"prompt\": \"a\", \"varients\": 2}]", .json))
        #expect(unknown.location?.line == 1 && unknown.message.contains("varients"))
        #expect(unknown.hint?.contains("did you mean \"variants\"") == true)

        let line3 = try #require(error("{\"prompt\": \"a\"}\n{\"prompt\": \"b\"}\n{\"prompt\": \"c\",}\n", .jsonLines))
        #expect(line3.location?.line == 3)

        let noPrompt = try #require(error("{\"prompt\": \"a\"}\n\n{\"name\": \"b\"}\n", .jsonLines))
        #expect(noPrompt.location?.line == 3 && noPrompt.message.contains("prompt"))

        // Positions inside a message are the file's too, not the line's.
        let text = "{\"prompt\": \"a\"}\n\n{\"prompt\": \"b\", \"prompt\": \"c\"}\n"
        let twice = try #require(error(text, .jsonLines))
        // The second key: 16 + 1 bytes of lines before it, 16 bytes into its own line.
        #expect(twice.location?.line == 3 && twice.location?.column == 17 && twice.location?.offset == 33, "\(twice)")
        #expect(twice.message.contains("(first defined at line 3, column 2)"), "\(twice)")
        let open = try #require(error("{\"prompt\": \"a\"}\n{\"prompt\": [1,\n", .jsonLines))
        #expect(open.message.contains("the array opened at line 2, column 12"), "\(open)")
        var bytes = Data("{\"prompt\": \"a\"}\n{\"prompt\": \"".utf8)
        let bad = bytes.count
        bytes.append(contentsOf: [0xFF] + Array("\"}\n".utf8))
        #expect { try BatchManifest.parse(bytes, file: "jobs", format: .jsonLines, baseDirectory: Self.base) } throws: { error in
            let error = error as? BadgeError
            return error?.location?.line == 2 && error?.location?.offset == bad && error?.message.contains("at byte offset \(bad)") == true
        }

        let cells = try #require(error("name,prompt\na,b\nc,d,e\n", .csv))
        #expect(cells.location?.line == 3 && cells.message.contains("3 cells"))

        let column = try #require(error("name,promt\na,b\n", .csv))
        #expect(column.message.contains("promt") && column.hint?.contains("\"prompt\"") == true)

        let size = try #require(error("name,prompt,size\na,b,big\n", .csv))
        #expect(size.location?.line == 2 && size.location?.column == 5)

        let range = try #require(error("[{\"prompt\": \"a\", \"variants\": 0}]", .json))
        #expect(range.message.contains("out of range"))

        let quote = try #require(error("name,prompt\na,\"unclosed\n", .csv))
        #expect(quote.message.contains("never closed") && quote.location?.line == 2)
    }

    /// One run names every wrong job: the first in full, and in its hint how
    /// many more there are and where the first five of them are.
    /// Mistakes about the whole batch (a default every job takes) come first,
    /// and the hint counts them apart from the jobs' own.
    @Test func mistakesAboutTheWholeBatchAreCountedApart() throws {
        func thrown(_ mistakes: BatchManifest.Mistakes) -> BadgeError? {
            do { try mistakes.check() } catch let error as BadgeError { return error } catch { return nil }
            return nil
        }
        var mistakes = BatchManifest.Mistakes()
        mistakes.note(BadgeError(.usage, "job \"a\": size: 10 is out of range"), at: 40)
        mistakes.note(BadgeError(.usage, "--style \"Baroque\": backend 'procedural' has no such style"), at: -1)
        let one = try #require(thrown(mistakes))
        #expect(one.message == "--style \"Baroque\": backend 'procedural' has no such style")
        #expect(one.hint == "1 job is wrong too: job \"a\": size: 10 is out of range", "\(one)")

        mistakes.note(BadgeError(.usage, "--style \"Baroque\": backend 'pictures' has no such style"), at: -1)
        mistakes.note(BadgeError(.usage, "job \"b\": size: 9 is out of range"), at: 80)
        let all = try #require(thrown(mistakes))
        #expect(all.hint == """
            1 more mistake for the whole batch, and 2 jobs are wrong too: --style "Baroque": backend 'pictures' has no such style; \
            job "a": size: 10 is out of range; job "b": size: 9 is out of range
            """, "\(all)")

        var jobsOnly = BatchManifest.Mistakes()
        jobsOnly.note(BadgeError(.usage, "job \"b\": size: 9 is out of range"), at: 80)
        jobsOnly.note(BadgeError(.usage, "job \"a\": size: 10 is out of range"), at: 40)
        let first = try #require(thrown(jobsOnly))
        #expect(first.message == "job \"a\": size: 10 is out of range" && first.hint == "1 more job is wrong: job \"b\": size: 9 is out of range", "\(first)")
    }

    @Test func everyWrongJobIsNamedInOneRun() throws {
        let lines = """
            {"prompt": "a", "size": 128}
            {"prompt": 5}
            {"prompt": "b"}
            {"prompt": "c", "size": 12}
            not json
            """
        let first = try #require(error(lines, .jsonLines))
        #expect(first.location?.line == 2 && first.keyPath == "prompt" && first.message == "expected a string, found a number", "\(first)")
        #expect(first.hint == "2 more jobs are wrong: line 4, column 25: job \"c\": size: 12 is out of range; line 5, column 1: unexpected 'not' where a value was expected",
                "\(first)")

        let csv = try #require(error("name,prompt,size\na,Run,12\nb,Read,big\nc,Write,128\n", .csv))
        #expect(csv.location?.line == 2 && csv.location?.column == 7, "\(csv)")
        #expect(csv.description == """
            jobs:2:7: job "a": size: 12 is out of range
              hint: use a value from 64 to 4096
              1 more job is wrong: line 3, column 8: job "b": size must be a whole number, not "big"
            """, "\(csv)")

        let many = "[" + (0..<9).map { "{\"prompt\": \"p\($0)\", \"size\": 5}" }.joined(separator: ",\n") + "]"
        let most = try #require(error(many, .json))
        // Named by the job, not by its place in the list ("[0].size").
        #expect(most.location?.line == 1 && most.keyPath == nil && most.message == "job \"p0\": size: 5 is out of range", "\(most)")
        let hint = try #require(most.hint)
        #expect(hint.hasPrefix("use a value from 64 to 4096\n8 more jobs are wrong: line 2, column 26: job \"p1\": size: 5 is out of range; "), "\(hint)")
        #expect(hint.components(separatedBy: "is out of range").count == 6 && hint.hasSuffix("line 6, column 26: job \"p5\": size: 5 is out of range; …"),
                "\(hint)")

        let one = try #require(error("{\"prompt\": \"a\"}\n{\"prompt\": \"b\", \"size\": 12}\n", .jsonLines))
        #expect(one.hint == "use a value from 64 to 4096", "\(one)")
    }

    @Test func hostileNamesAreRefusedBeforeAnythingRuns() throws {
        for name in ["../x", "/abs", "a/b", "x\u{0}y", ".hidden", "-rf", "", "é", "a b", String(repeating: "a", count: 101)] {
            let text = "[{\"name\": \(JSONWriter.quote(name)), \"prompt\": \"x\"}]"
            let refused = try #require(error(text, .json), "\(name.debugDescription) must be refused")
            #expect(refused.code == .config && refused.location?.line == 1)
        }
        for name in ["alice", "Team_A.v2", "2027-goals", "_draft"] {
            #expect(BatchJob.nameProblem(name) == nil, "\(name)")
        }
        #expect(BatchJob.slug("Run a 5k! 🏃") == "run-a-5k")
        #expect(BatchJob.nameProblem(BatchJob.slug("学中文")) == nil)
    }
}

@Suite(.threadsOfTheirOwn)
struct BatchPlanTests {
    static let config = BadgeConfig.builtIn
    static let defaults = BatchPlan.Defaults(backend: "procedural", style: nil, size: 256)

    static func manifest(_ count: Int, variants: Int = 1) -> BatchManifest {
        BatchManifest(jobs: (0..<count).map { BatchJob(name: "job\($0)", prompt: "Promise number \($0)", variants: variants) },
                      source: "test")
    }

    @Test func shardsTogetherCoverEveryItemExactlyOnce() throws {
        let manifest = Self.manifest(150, variants: 2)
        let all = try BatchPlan.make(manifest, config: Self.config, defaults: Self.defaults).items.map(\.key)
        #expect(all.count == 300 && Set(all).count == 300)
        for count in [1, 2, 3, 7, 16] {
            var seen: [String: Int] = [:]
            for index in 0..<count {
                let plan = try BatchPlan.make(manifest, config: Self.config, defaults: Self.defaults,
                                              shard: BatchShard(index: index, count: count))
                #expect(plan.allItems.count == 300)
                for item in plan.items { seen[item.key, default: 0] += 1 }
                if count <= 3 { #expect(plan.items.count > 300 / count / 2, "shard \(index)/\(count) is far too small") }
            }
            #expect(Set(seen.keys) == Set(all), "N=\(count)")
            #expect(seen.values.allSatisfy { $0 == 1 }, "N=\(count)")
        }
    }

    @Test func shardsAreReadStrictly() throws {
        #expect(try BatchShard(parsing: "2/8") == BatchShard(index: 2, count: 8))
        let unreadable = "write it as K/N with K from 0 to N-1"
        let missing = "K runs from 0 to N-1, and N from 1 to 100000"
        for (bad, message, hint) in [
            ("8/8", "the shard 8/8 does not exist", missing), ("-1/4", "the shard -1/4 does not exist", missing),
            ("1/0", "the shard 1/0 does not exist", missing), ("1", #"cannot read the shard "1""#, unreadable),
            ("a/b", #"cannot read the shard "a/b""#, unreadable), ("1/2/3", #"cannot read the shard "1/2/3""#, unreadable),
        ] {
            let error = #expect(throws: BadgeError.self, "\(bad)") { try BatchShard(parsing: bad) }
            #expect(error?.code == .usage, "\(bad)")
            #expect(error?.message == message, "\(bad)")
            #expect(error?.hint?.hasPrefix(hint) == true, "\(bad): \(String(describing: error?.hint))")
        }
    }

    @Test func variantsGetTheirOwnSeedsAndNames() throws {
        let plan = try BatchPlan.make(
            BatchManifest(jobs: [BatchJob(name: "logo", prompt: "Learn the guitar", seed: 40, variants: 12)], source: "t"),
            config: Self.config, defaults: Self.defaults)
        #expect(plan.items.map(\.key) == (1...12).map { String(format: "logo-%02d", $0) })
        #expect(plan.items.map(\.request.seed) == Array(40..<52))
        #expect(Set(plan.items.map(\.requestHash)).count == 12)
    }

    @Test func theRequestHashFollowsWhatDecidesTheImage() throws {
        func hash(_ job: BatchJob, style: String? = nil) throws -> String {
            try BatchPlan.make(BatchManifest(jobs: [job], source: "t"), config: Self.config,
                               defaults: .init(backend: "procedural", style: style, size: 256)).items[0].requestHash
        }
        let job = BatchJob(name: "a", prompt: "Read more", seed: 1)
        let same = try hash(job)
        #expect(try hash(job) == same)
        var other = job
        other.prompt = "Read less"
        #expect(try hash(other) != same)
        other = job
        other.options = ["caption": "off"]
        #expect(try hash(other) != same)
        #expect(try hash(job, style: "tile") != same)
        // A job without a seed gets one from its name, so a rerun asks for the same picture.
        let unseeded = BatchJob(name: "b", prompt: "Read more")
        #expect(try hash(unseeded) == hash(unseeded))
    }

    /// A job's picture is hashed into its request hash from a checked
    /// descriptor: a FIFO is not waited on, /dev/zero is not read without
    /// end, and a file past the intake's limit is not read at all. Each
    /// hashes as a missing file does; a readable picture by its bytes.
    @Test func aSourceThatIsNoPictureFileIsNotReadToPlan() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("badge-plan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("fifo.png").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let large = dir.appendingPathComponent("large.png"), small = dir.appendingPathComponent("small.png")
        try Data(count: 4096).write(to: large)
        try Data(count: 512).write(to: small)
        var config = Self.config
        config.intake.maxFileBytes = 1024
        func hash(_ source: String) throws -> String {
            try BatchPlan.make(BatchManifest(jobs: [BatchJob(name: "a", prompt: "Read more", seed: 1, source: source)], source: "t"),
                               config: config, defaults: Self.defaults).items[0].requestHash
        }
        let missing = try hash(dir.appendingPathComponent("missing.png").path)
        for source in [fifo, "/dev/zero", large.path, dir.path] {
            #expect(try hash(source) == missing, "\(source)")
        }
        #expect(try hash(small.path) != missing)
    }

    /// A few kilobytes of manifest can ask for millions of badges (1,000
    /// variants a job): the total is refused before any item is planned.
    @Test func aBatchPastItsBadgeLimitIsRefusedBeforePlanning() throws {
        let jobs = (0...BatchPlan.maxItems / 1000).map { BatchJob(name: "job\($0)", prompt: "Promise \($0)", variants: 1000) }
        do {
            _ = try BatchPlan.make(BatchManifest(jobs: jobs, source: "jobs.csv"), config: Self.config, defaults: Self.defaults)
            Issue.record("a batch of \(jobs.count * 1000) badges must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .usage && error.path == "jobs.csv")
            #expect(error.message == "the batch asks for 1001000 badges (its jobs' variants added up); one batch makes at most 1000000")
            #expect(error.hint == "split the manifest into smaller ones")
        }
    }

    @Test func twoJobsCannotWriteOneFile() throws {
        let manifest = BatchManifest(jobs: [
            BatchJob(name: "team", prompt: "x", variants: 2),
            BatchJob(name: "team-02", prompt: "y"),
        ], source: "t")
        let error = #expect(throws: BadgeError.self) { try BatchPlan.make(manifest, config: Self.config, defaults: Self.defaults) }
        #expect(error?.message.hasPrefix("job \"team-02\" writes team-02.png, which job \"team\"") == true, "\(String(describing: error))")
        #expect(error?.hint == "give one of them another name")
    }

    @Test func anUnknownBackendIsNamedWithASuggestion() throws {
        let manifest = BatchManifest(jobs: [BatchJob(name: "a", prompt: "x", backend: "procedurall")], source: "t")
        do {
            _ = try BatchPlan.make(manifest, config: Self.config, defaults: Self.defaults)
            Issue.record("must fail")
        } catch let error as BadgeError {
            #expect(error.message.contains("procedurall") && error.hint?.contains("did you mean \"procedural\"") == true)
        }
    }
}

/// Issue #31: manifests are read under a budget of cells and values, stopping at the first excess.
/// The million-value parses run on threads of their own (`onOwnThread`).
@Suite(.threadsOfTheirOwn)
struct ManifestBudgetTests {
    static let base = URL(fileURLWithPath: "/tmp")

    @Test func aCSVPastItsCellBudgetStopsThere() async throws {
        let error = try await onOwnThread { () -> BadgeError? in
            let data = Data("name,prompt\n".utf8) + Data(repeating: UInt8(ascii: ","), count: CSVTable.maxCells + 10)
            do {
                _ = try BatchManifest.parse(data, file: "jobs.csv", format: .csv, baseDirectory: Self.base)
                return nil
            } catch {
                return error as? BadgeError
            }
        }
        #expect(error?.message == "the CSV file holds more than 1000000 cells; badge reads no more", "\(String(describing: error))")
        #expect(error?.location?.line == 2 && error?.location?.column == CSVTable.maxCells - 1 && error?.path == "jobs.csv",
                "\(String(describing: error?.location))")
    }

    @Test func aJSONManifestPastItsValueBudgetStopsThere() async throws {
        let errors = try await onOwnThread { () -> [BadgeError?] in
            let array = Data("[".utf8) + Data(String(repeating: "0,", count: JSONParser.maxNodes + 5).utf8) + Data("0]".utf8)
            let line = Data(String(repeating: "0,", count: JSONParser.maxNodes + 5).utf8)
            let oneLine = Data("{\"prompt\": [".utf8) + line + Data("0]}\n".utf8)
            // The reading stops there: the lines after it are not read, right or wrong.
            let andMore = oneLine + Data("{\"prompt\": \"a\"}\n{\"prompt\": 5}\n".utf8)
            return [(array, BatchManifest.Format.json, "jobs.json"), (oneLine, .jsonLines, "jobs.jsonl"), (andMore, .jsonLines, "jobs.jsonl")]
                .map { data, format, file in
                do {
                    _ = try BatchManifest.parse(data, file: file, format: format, baseDirectory: Self.base)
                    return nil
                } catch {
                    return error as? BadgeError
                }
            }
        }
        for error in errors {
            #expect(error?.message == "the file holds more than 1000000 JSON values; badge reads no more", "\(String(describing: error))")
            #expect(error?.location?.line == 1)
            #expect(error?.hint == "split it (a batch manifest can also run in shards: --shard K/N)", "\(String(describing: error))")
        }
    }

    /// JSON Lines share one budget across their lines: each parse adds what it read.
    @Test func oneBudgetIsSharedAcrossDocuments() throws {
        var used = 0
        _ = try JSONParser.parse(Data("[1,2,3]".utf8), file: "a.jsonl", maxNodes: 6, used: &used)
        #expect(used == 4)
        #expect { try JSONParser.parse(Data("[1,2]".utf8), file: "a.jsonl", maxNodes: 6, used: &used) } throws: { error in
            (error as? BadgeError)?.message.hasPrefix("the file holds more than") == true
        }
    }
}
