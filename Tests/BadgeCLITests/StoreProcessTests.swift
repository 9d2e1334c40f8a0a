import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import ProceduralBackend
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The store under hostile conditions, with real processes: a file-size limit,
/// a store that is not a directory, writers racing each other and a reader,
/// and Ctrl-C in the middle of a run (its badge drawn, not yet committed).
@Suite(.threadsOfTheirOwn, .serialized)
struct StoreProcessTests {
    @Test func aFileSizeLimitFailsTheWriteAndKeepsTheOldBadge() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "256", "--seed", "1", "the old promise"]).status == 0)
        let before = try #require(s.badge)
        // 64 blocks of 512 bytes: far smaller than a 1024 px badge.
        let result = try await s.run(["generate", "--size", "1024", "the new promise"], prefix: ["prlimit", "--fsize=32768"])
        #expect(!result.signalled, "killed by SIGXFSZ instead of failing cleanly")
        #expect(result.status == 1, "\(result.stderr)")
        // The limit stops the first large write, the image in the private workspace.
        #expect(result.stderr.contains(s.tmp.path), "the error names the file: \(result.stderr)")
        #expect(result.stderr.contains("File too large"), "\(result.stderr)")
        #expect(result.stderr.contains("unchanged"), "\(result.stderr)")
        #expect(s.badge == before)
        #expect(s.storeObject.temporaryFiles().isEmpty)
    }

    /// Standard output on a full disk: the badge is committed all the same,
    /// and badge says once that what it printed is lost (FileHandle's write
    /// killed it with SIGILL after the commit).
    @Test func aFullStandardOutputIsSaidOnceAndTheCommitStands() async throws {
        let s = try Sandbox()
        let result = try await s.run(["generate", "--size", "64", "--seed", "2", "Written to a full disk"],
                                     prefix: ["sh", "-c", "exec \"$@\" > /dev/full", "sh"])
        #expect(!result.signalled && result.status == 0, "\(result.status) \(result.stderr)")
        let said = result.stderr.components(separatedBy: "badge: cannot write to standard output: No space left on device").count - 1
        #expect(said == 1, "\(result.stderr)")
        #expect(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png"))?.prompt == "Written to a full disk")
    }

    /// A command whose only work is what it prints fails when standard output
    /// does (as `cat` does); one that committed a badge still succeeds.
    @Test func aReportToAFullStandardOutputFails() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "--seed", "2", "kept"]).status == 0)
        for arguments in [["show"], ["history", "--json"], ["backends"], ["--help"], ["generate", "--help"], ["--version"]] {
            let result = try await s.run(arguments, prefix: ["sh", "-c", "exec \"$@\" > /dev/full", "sh"])
            #expect(!result.signalled && result.status == 1, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("badge: cannot write to standard output: No space left on device"), "\(arguments): \(result.stderr)")
            let printed = try await s.run(arguments)
            #expect(printed.status == 0 && !printed.stdout.isEmpty, "\(arguments) to a pipe: \(printed.status) \(printed.stderr)")
        }
        #expect(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png"))?.prompt == "kept")
    }

    /// A reader that went away (`| head -1`) ends no work half-way and is no
    /// error to speak of: a commit and a whole batch finish and succeed, a
    /// report exits 1, and none of them is killed by SIGPIPE or says a word.
    @Test func aReaderThatWentAwayEndsNothingHalfWay() async throws {
        let s = try Sandbox()
        let generated = try await s.run(["generate", "--size", "64", "--seed", "3", "Piped away"], readerGone: true)
        #expect(!generated.signalled && generated.status == 0, "\(generated.status) \(generated.stderr)")
        #expect(generated.stderr.isEmpty, "\(generated.stderr)")
        #expect(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png"))?.prompt == "Piped away")

        let jobs = s.root.appendingPathComponent("jobs.csv")
        try Data(("name,prompt,size\n" + (1...6).map { "j\($0),Promise \($0),64\n" }.joined()).utf8).write(to: jobs)
        let out = s.root.appendingPathComponent("out")
        for arguments in [["batch", jobs.path, "--output", out.path, "--concurrency", "1"], ["batch", jobs.path, "--output", out.path, "--json", "--force"]] {
            let batch = try await s.run(arguments, readerGone: true)
            #expect(!batch.signalled && batch.status == 0, "\(arguments): \(batch.status) \(batch.stderr)")
            let made = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasSuffix(".png") }
            #expect(made.count == 6, "\(arguments): \(made)")
        }

        let shown = try await s.run(["show"], readerGone: true)
        #expect(!shown.signalled && shown.status == 1 && shown.stderr.isEmpty, "\(shown.status) \(shown.stderr)")
    }

    /// A batch's lines and its --json to a full disk: said once, the batch made.
    @Test func aBatchToAFullStandardOutputStillMakesItsBadges() async throws {
        let s = try Sandbox()
        let jobs = s.root.appendingPathComponent("jobs.csv")
        try Data("name,prompt,size\na,One,64\nb,Two,64\n".utf8).write(to: jobs)
        let out = s.root.appendingPathComponent("out")
        for arguments in [["batch", jobs.path, "--output", out.path], ["batch", jobs.path, "--output", out.path, "--json", "--force"]] {
            let result = try await s.run(arguments, prefix: ["sh", "-c", "exec \"$@\" > /dev/full", "sh"])
            #expect(!result.signalled && result.status == 0, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.components(separatedBy: "cannot write to standard output: No space left on device").count == 2, "\(result.stderr)")
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("b.png").path))
        }
    }

    @Test func aStoreThatIsAFileIsRefusedClearly() async throws {
        let s = try Sandbox()
        try Data("not a directory".utf8).write(to: s.store)
        let result = try await s.run(["generate", "--size", "64", "x"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("not a directory"), "\(result.stderr)")
        #expect(result.stderr.contains(s.store.path))
        #expect(try String(contentsOf: s.store, encoding: .utf8) == "not a directory")

        // A store inside that file: the error names the file on the way, for
        // generate (which would create the store) and show (which would not).
        let inside = s.store.appendingPathComponent("badges/mine").path
        for arguments in [["--store", inside, "generate", "--size", "64", "x"], ["--store", inside, "show"]] {
            let refused = try await s.run(arguments)
            #expect(refused.status == 1, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains("the store cannot be there: \(s.store.path) is a file, not a folder"), "\(refused.stderr)")
            #expect(refused.stderr.contains("hint: choose another store with --store"), "\(refused.stderr)")
        }
    }

    @Test func concurrentWritersNeverMixABadgeAndReadersNeverSeeAHalfOne() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "96", "--seed", "0", "writer 0"]).status == 0)
        // A thread of its own: the test's blocking waits must not starve the reader.
        let reader = Reader(url: s.store.appendingPathComponent("badge.png"))
        let thread = Thread { reader.loop() }
        thread.start()
        for round in 0..<4 {
            let children = try (1...4).map { w -> ChildProcess in
                let k = round * 4 + w
                let child = try s.start(["generate", "--size", "96", "--seed", "\(k)", "writer \(k)"])
                child.standardOutput = FileHandle.nullDevice
                child.standardError = FileHandle.nullDevice
                try child.run()
                return child
            }
            for child in children {
                #expect(try await s.waitForExit(child), "a writer did not finish")
                #expect(child.terminationStatus == 0)
            }
        }
        let (reads, problems) = reader.stop()
        #expect(reads > 10, "the reader hardly ran (\(reads) reads)")
        #expect(problems.isEmpty, "a reader saw a broken badge: \(problems.prefix(3))")
        let history = try s.storeObject.history()
        #expect(history.count == 16, "every replaced badge is in the history (got \(history.count))")
        #expect(s.storeObject.temporaryFiles().isEmpty)
        // The badge's pixels are its own generation's.
        let metadata = try #require(try s.storeObject.current()?.metadata)
        let (_, expected, _) = try await GeneratorConformanceShim.render(prompt: metadata.prompt, seed: metadata.seed!, size: 96)
        #expect(try KillLoopTests.idat(try #require(s.badge)) == (try KillLoopTests.idat(expected)))
    }

    /// Ctrl-C while the commit is under way (its file written and flushed,
    /// not yet renamed): the commit runs to its end, and badge says it did,
    /// rather than "cancelled; the current badge is unchanged" over a new badge.
    @Test(.needsTestSeams) func ctrlCDuringTheCommitLetsItFinishAndSaysSo() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "--seed", "1", "the old promise"]).status == 0)
        let held = try await s.startHeld(["generate", "--size", "64", "--seed", "2", "the new promise"], at: "commit-after-fsync")
        let child = held.process
        child.interrupt()
        // Released only once the interrupt is heard, so it lands while the commit waits.
        let heard = try await onOwnThread { [errors = Sandbox.Unchecked(held.errors)] in
            PipeReading.readLine(errors.value.fileHandleForReading)
        }
        #expect(heard == "badge: stopping (again to end at once)")
        held.release()
        try await s.waitForExit(child)
        let stderr = try await held.stderrAfter()
        #expect(child.terminationReason == .exit && child.terminationStatus == 0, "\(child.terminationStatus) \(stderr)")
        #expect(!stderr.contains("unchanged"), "\(stderr)")
        #expect(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png"))?.prompt == "the new promise")
        #expect(s.storeObject.temporaryFiles().isEmpty)
    }

    @Test(.needsTestSeams) func ctrlCCancelsCleanly() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "128", "--seed", "1", "the old promise"]).status == 0)
        let before = try #require(s.badge)
        // The run is held by the test seam with its badge drawn and not yet committed, so
        // Ctrl-C lands at that moment every time, however loaded the machine.
        let held = try await s.startHeld(["generate", "--size", "1024", "--seed", "2", "a big badge"], at: "before-commit")
        let child = held.process
        child.interrupt()
        if !(try await s.waitForExit(child)) {
            // Released, it commits: the checks below then say what went wrong.
            held.release()
            try await s.waitForExit(child)
            Issue.record("SIGINT did not end the run within 60 s")
        }
        let stderr = try await held.stderrAfter()
        #expect(child.terminationReason == .exit)
        #expect(child.terminationStatus == 130, "\(stderr)")
        #expect(stderr.contains("badge: stopped (Ctrl-C); the current badge is unchanged"), "\(stderr)")
        #expect(s.badge == before)
        #expect(s.storeObject.temporaryFiles().isEmpty)
        #expect(s.leftoverWorkspaces.isEmpty, "\(s.leftoverWorkspaces)")
    }
}

/// Reads badge.png over and over, noting any read that is not a whole badge.
final class Reader: @unchecked Sendable {
    let url: URL
    private let lock = NSLock()
    private var running = true
    private var reads = 0
    private var problems: [String] = []
    private let done = DispatchSemaphore(value: 0)

    init(url: URL) { self.url = url }

    func loop() {
        while lock.withLock({ running }) {
            var problem: String?
            guard let data = try? Data(contentsOf: url) else {
                // The store replaces badge.png in one rename: it is never missing, not even mid-commit.
                lock.withLock {
                    reads += 1
                    problems.append("badge.png is missing")
                }
                continue
            }
            do {
                let chunks = try PNG.chunks(in: data)
                if let m = BadgeMetadata(entries: chunks.compactMap(PNG.textEntry)) {
                    if m.prompt != "writer \(m.seed ?? 999)" { problem = "prompt \(m.prompt) with seed \(String(describing: m.seed))" }
                } else {
                    problem = "no metadata"
                }
            } catch {
                problem = "\(error)"
            }
            lock.withLock {
                reads += 1
                if let problem { problems.append(problem) }
            }
        }
        done.signal()
    }

    func stop() -> (Int, [String]) {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { (reads, problems) }
    }
}

enum GeneratorConformanceShim {
    static func render(prompt: String, seed: UInt64, size: Int) async throws -> (GeneratedImage, Data, [String]) {
        try await GeneratorConformance.generateOnce(ProceduralGenerator(), BadgeRequest(prompt: prompt, size: size, seed: seed))
    }
}
