import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A large batch killed half-way (SIGKILL: no chance to write its manifest)
/// leaves finished badges and a journal of them, and the same command then
/// makes only the rest.
@Suite(.threadsOfTheirOwn, .serialized)
struct BatchResumeTests {
    /// 100,000 by hand: BADGE_RESUME_JOBS=100000 swift test --skip-build --filter BatchResumeTests
    static let jobs = Int(ProcessInfo.processInfo.environment["BADGE_RESUME_JOBS"] ?? "") ?? 600

    @Test func aRunKilledHalfWayResumesWithTheRest() async throws {
        let s = try Sandbox()
        let count = Self.jobs
        let list = s.root.appendingPathComponent("jobs.jsonl")
        try Data((0..<count).map { "{\"name\": \"p\($0)\", \"prompt\": \"Promise number \($0)\", \"size\": 64}\n" }.joined().utf8)
            .write(to: list)
        let out = s.root.appendingPathComponent("out")
        let arguments = ["batch", list.path, "--output", out.path, "--checkpoint", "1"]
        @Sendable func badges() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []).filter { !$0.hasPrefix(".") && $0.hasSuffix(".png") }
        }
        let child = try s.start(arguments)
        // A line on standard output for every finished badge: the count on disk is
        // looked at again at each, until half are there or the output ends.
        let said = Pipe()
        child.standardOutput = said
        child.standardError = FileHandle.nullDevice
        try child.run()
        let output = Sandbox.Unchecked(said)
        _ = try? await onThreadOfItsOwn("half the badges", limit: .seconds(max(120, count / 50))) {
            while PipeReading.readLine(output.value.fileHandleForReading) != nil {
                if badges().count >= count / 2 { return }
            }
        }
        #expect(child.signal(SIGKILL), "the batch ended before it could be killed")
        child.waitUntilExit()
        #expect(child.terminationReason == .uncaughtSignal)

        let done = Set(badges())
        #expect(done.count >= count / 2 && done.count < count, "\(done.count) of \(count) finished")
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("manifest.json").path))
        // Every line of the journal is a finished badge on disk, with its sha256.
        let journal = try Data(contentsOf: out.appendingPathComponent("manifest.partial.jsonl"))
        let lines = journal.split(separator: UInt8(ascii: "\n"))
        #expect(!lines.isEmpty && journal.last == UInt8(ascii: "\n"), "the journal holds whole lines")
        for line in lines {
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            let file = try #require(entry["file"] as? String)
            #expect(entry["status"] as? String == "ok" && done.contains(file), "\(file)")
            #expect(try entry["sha256"] as? String == BatchHash.sha256(try Data(contentsOf: out.appendingPathComponent(file))))
        }

        let rerun = try await s.run(arguments, timeout: Double(max(300, count / 20)))
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(rerun.stdout.contains("Made \(count - done.count) badges") && rerun.stdout.contains("\(done.count) already up to date"),
                "\(rerun.stdout.suffix(400))")
        #expect(badges().count == count)
        let data = try Data(contentsOf: out.appendingPathComponent("manifest.json"))
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let results = try #require(manifest["results"] as? [[String: Any]])
        #expect(results.map { $0["key"] as? String } == (0..<count).map { "p\($0)" })
        #expect(results.filter { $0["status"] as? String == "up-to-date" }.count == done.count)
        let left = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { !$0.hasSuffix(".png") }
        #expect(left == ["manifest.json"], "no journal or temporary is left: \(left.prefix(5))")
    }

    @Test func aCheckpointOutOfRangeIsAUsageError() async throws {
        let s = try Sandbox()
        let list = s.root.appendingPathComponent("jobs.jsonl")
        try Data("{\"name\": \"a\", \"prompt\": \"x\", \"size\": 64}\n".utf8).write(to: list)
        let out = s.root.appendingPathComponent("out")
        for value in ["0", "3601"] {
            let result = try await s.run(["batch", list.path, "--output", out.path, "--checkpoint", value])
            #expect(result.status == 64 && result.stderr.contains("--checkpoint must be from 1 to 3600 seconds, not \(value)"),
                    "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: out.path), "a usage error runs nothing")
    }
}
