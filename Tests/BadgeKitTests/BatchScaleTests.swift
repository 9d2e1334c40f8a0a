import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// A batch's cost per job stays the same however many jobs it has: the
/// scheduler's work is counted, not timed, and the manifest is streamed.
@Suite(.threadsOfTheirOwn)
final class BatchScaleTests: @unchecked Sendable {
    let directory: URL
    let config: BadgeConfig

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-batch-scale-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        config = try BadgeConfig.parse(Data("""
            {"backends": {"good": {"type": "fake"}, "bad": {"type": "fake"}, "other": {"type": "fake"}}}
            """.utf8), file: "test.json")
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func plan(_ jobs: [BatchJob]) throws -> BatchPlan {
        try BatchPlan.make(BatchManifest(jobs: jobs, source: "test"), config: config,
                           defaults: .init(backend: "good", style: nil, size: 64))
    }

    func runner(concurrency: Int) -> BatchRunner {
        let environment = BadgeEnvironment(now: { Date(timeIntervalSince1970: 1_790_000_000) }, variables: [:])
        func chain(_ name: String, _ generator: any BadgeGenerator) -> BatchRunner.Chain {
            .init(backend: BackendInstance(name: name, type: "fake", generator: generator), limit: 2)
        }
        // Unavailable backends fail before the pipeline makes a workspace: the cheapest failure there is.
        return BatchRunner(
            pipeline: Pipeline(environment: environment),
            chains: ["good": chain("good", ProbeGenerator(delay: .zero)), "bad": chain("bad", FakeGenerator(.unavailable("switched off"))),
                     "other": chain("other", FakeGenerator(.unavailable("switched off")))],
            concurrency: concurrency, commitment: .init(timeZone: TimeZone(identifier: "UTC")!))
    }

    /// Runs `count` jobs over three backends, each full at 2 while 4 run at
    /// once: every 20th is drawn and written, the others fail at once (the
    /// scheduler's work is the same for both). Returns the scheduler's steps.
    func steps(_ count: Int) async throws -> Int {
        let jobs = (0..<count).map { k in
            BatchJob(name: "j\(k)", prompt: "promise \(k)", backend: k % 20 == 0 ? "good" : k % 2 == 0 ? "bad" : "other")
        }
        let items = try plan(jobs).items
        var statuses: [BatchResult.Status?] = Array(repeating: nil, count: count)
        let output = try BatchOutputDirectory(url: directory.appendingPathComponent("out-\(count)"))
        let steps = await runner(concurrency: 4).stream(items, into: output) { index, result in
            #expect(statuses[index] == nil, "item \(index) is recorded once")
            statuses[index] = result.status
        }
        #expect(statuses.allSatisfy { $0 != nil }, "every item has a result")
        #expect(statuses.filter { $0 == .made }.count == count / 20)
        #expect(statuses.filter { $0 == .failed }.count == count - count / 20)
        #expect(steps >= count, "the counter counts each item's work: \(steps)")
        return steps
    }

    @Test func schedulingWorkGrowsLinearlyWithTheJobs() async throws {
        let small = try await steps(1000)
        let large = try await steps(4000)
        let ratio = Double(large) / Double(small)
        #expect(ratio <= 4.5, "4x the jobs cost \(ratio)x the scheduler's steps (\(small) -> \(large)): work per job grows with the batch")
    }

    func result(_ item: BatchItem, _ status: BatchResult.Status) -> BatchResult {
        switch status {
        case .made: BatchResult(item: item, status: .made, sha256: String(repeating: "ab", count: 32), bytes: 100, duration: .milliseconds(12))
        case .failed: BatchResult(item: item, status: .failed, error: BadgeError(.generationFailed, "the model fell over"))
        default: BatchResult(item: item, status: status)
        }
    }

    @Test func theManifestIsAssembledInManifestOrderFromACheckpointedJournal() throws {
        let output = directory.appendingPathComponent("out")
        let folder = try BatchOutputDirectory(url: output)
        let items = try plan((0..<6).map { BatchJob(name: "j\($0)", prompt: "promise \($0)") }).items
        let statuses: [BatchResult.Status] = [.made, .failed, .made, .upToDate, .cancelled, .made]
        let writer = try BatchReportWriter(directory: folder, shard: nil, count: items.count, checkpointInterval: .seconds(3600))
        let order = [3, 0, 5, 1, 4, 2]
        for index in order.prefix(3) { writer.record(index, result(items[index], statuses[index])) }
        writer.checkpoint()
        // What a run killed now would leave: the journal of what finished, in the order it finished.
        let journal = try String(contentsOf: output.appendingPathComponent("manifest.partial.jsonl"), encoding: .utf8)
        let lines = journal.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.map { $0?["key"] as? String } == ["j3", "j0", "j5"])
        #expect(lines.map { $0?["status"] as? String } == ["up-to-date", "ok", "ok"])

        for index in order.dropFirst(3) { writer.record(index, result(items[index], statuses[index])) }
        #expect(writer.summary == BatchReport.Summary(zip(items, statuses).map { result($0, $1) }))
        #expect(writer.failures.map(\.item.key) == ["j1"])
        try writer.finish(source: "jobs.jsonl", output: output, shard: nil, startedAt: Date(timeIntervalSince1970: 0),
                          duration: .milliseconds(1500))
        let data = try Data(contentsOf: output.appendingPathComponent("manifest.json"))
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let results = try #require(manifest["results"] as? [[String: Any]])
        #expect(results.map { $0["key"] as? String } == items.map(\.key), "manifest order, not finishing order")
        #expect(results.map { $0["status"] as? String } == statuses.map(\.rawValue))
        #expect(results[0]["file"] as? String == "j0.png" && results[0]["sha256"] as? String == String(repeating: "ab", count: 32))
        #expect((results[1]["error"] as? [String: Any])?["message"] as? String == "the model fell over")
        #expect(manifest["source"] as? String == "jobs.jsonl" && manifest["durationSeconds"] as? Double == 1.5)
        let summary = try #require(manifest["summary"] as? [String: Int])
        #expect(summary == ["total": 6, "made": 3, "upToDate": 1, "failed": 1, "cancelled": 1])
        let files = try FileManager.default.contentsOfDirectory(atPath: output.path)
        #expect(files == ["manifest.json"], "the journal is gone once the manifest is written: \(files)")
    }

    /// A backend's words in the manifest (an error, a prompt, a source) may
    /// hold what a terminal acts on; `batch --json` prints the file as it is,
    /// so the file has them escaped, and still reads as the same text.
    @Test func theManifestHasWhatATerminalActsOnEscaped() throws {
        let output = directory.appendingPathComponent("out")
        let items = try plan([BatchJob(name: "a", prompt: "one \u{202E}two")]).items
        let writer = try BatchReportWriter(directory: try BatchOutputDirectory(url: output), shard: nil, count: 1)
        let words = "the model said \u{9B}2J and \u{2066}this\u{2069}\u{7F}"
        writer.record(0, BatchResult(item: items[0], status: .failed, error: BadgeError(.generationFailed, words)))
        try writer.finish(source: "jobs \u{202E}.csv", output: output, shard: nil, startedAt: Date(), duration: .zero)
        let data = try Data(contentsOf: output.appendingPathComponent("manifest.json"))
        let text = String(decoding: data, as: UTF8.self)
        #expect(!text.unicodeScalars.contains { [0x9B, 0x7F, 0x202E, 0x2066, 0x2069].contains($0.value) }, "\(text)")
        #expect(text.contains(#"\u009b2J"#) && text.contains(#"\u202e"#), "\(text)")
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let results = try #require(manifest["results"] as? [[String: Any]])
        #expect((results[0]["error"] as? [String: Any])?["message"] as? String == words)
        #expect(manifest["source"] as? String == "jobs \u{202E}.csv")
    }

    @Test func aPlantedJournalIsReplacedNeverFollowed() throws {
        let output = directory.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let outside = directory.appendingPathComponent("precious.txt")
        try Data("do not touch".utf8).write(to: outside)
        try FileManager.default.createSymbolicLink(atPath: output.appendingPathComponent("manifest.partial.jsonl").path,
                                                   withDestinationPath: outside.path)
        let items = try plan([BatchJob(name: "a", prompt: "one")]).items
        let writer = try BatchReportWriter(directory: try BatchOutputDirectory(url: output), shard: nil, count: 1)
        writer.record(0, result(items[0], .made))
        writer.checkpoint()
        #expect(try String(contentsOf: outside, encoding: .utf8) == "do not touch")
        let journal = try FileManager.default.attributesOfItem(atPath: output.appendingPathComponent("manifest.partial.jsonl").path)
        #expect(journal[.type] as? FileAttributeType == .typeRegular)
        try writer.finish(source: "test", output: output, shard: nil, startedAt: Date(), duration: .zero)
        #expect(try FileManager.default.contentsOfDirectory(atPath: output.path) == ["manifest.json"])
    }
}
