import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// How many calls run at once across several generators, counted at one moment.
final class SharedOccupancy: @unchecked Sendable {
    private let lock = NSLock()
    private var _running = 0
    private var _maxRunning = 0

    var running: Int { lock.withLock { _running } }
    var maxRunning: Int { lock.withLock { _maxRunning } }

    func enter() { lock.withLock { _running += 1; _maxRunning = max(_maxRunning, _running) } }
    func leave() { lock.withLock { _running -= 1 } }
}

/// Counts calls and how many run at once; each call takes `delay`.
final class ProbeGenerator: BadgeGenerator, @unchecked Sendable {
    private let lock = NSLock()
    private(set) var calls = 0
    private(set) var running = 0
    private(set) var maxRunning = 0
    let delay: Duration
    let png: Data
    /// Also counted here, with the other generators that share it.
    let shared: SharedOccupancy?

    init(delay: Duration = .milliseconds(20), png: Data = TestPNG.solid(width: 64, height: 64, rgb: (1, 2, 3)),
         shared: SharedOccupancy? = nil) {
        self.delay = delay
        self.png = png
        self.shared = shared
    }

    func availability() async -> Availability { .available }

    func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
        lock.withLock {
            calls += 1
            running += 1
            maxRunning = max(maxRunning, running)
        }
        shared?.enter()
        defer {
            shared?.leave()
            lock.withLock { running -= 1 }
        }
        try await Task.sleep(for: delay)
        let file = try workspace.write(png, to: "probe.png")
        return GeneratedImage(file: file, model: "probe", seed: request.seed)
    }
}

/// A backend whose calls wait inside it until the test releases them, so a
/// test can look at how many run at once while they all still run. Counts
/// like `ProbeGenerator`; once released, calls pass straight through.
final class HeldGenerator: BadgeGenerator, @unchecked Sendable {
    private let lock = NSLock()
    private var released = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var _running = 0
    private var _maxRunning = 0
    let png = TestPNG.solid(width: 64, height: 64, rgb: (1, 2, 3))
    /// Also counted here, with the other generators that share it.
    let shared: SharedOccupancy

    init(shared: SharedOccupancy) { self.shared = shared }

    var running: Int { lock.withLock { _running } }
    var maxRunning: Int { lock.withLock { _maxRunning } }

    /// Lets every call that waits, and every later one, go on.
    func release() {
        let held = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            released = true
            defer { waiting = [] }
            return waiting
        }
        for continuation in held { continuation.resume() }
    }

    func availability() async -> Availability { .available }

    func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
        shared.enter()
        lock.withLock {
            _running += 1
            _maxRunning = max(_maxRunning, _running)
        }
        defer {
            lock.withLock { _running -= 1 }
            shared.leave()
        }
        await withCheckedContinuation { continuation in
            let go = lock.withLock { () -> Bool in
                if !released { waiting.append(continuation) }
                return released
            }
            if go { continuation.resume() }
        }
        let file = try workspace.write(png, to: "held.png")
        return GeneratedImage(file: file, model: "held", seed: request.seed)
    }
}

/// A backend that never finishes: it counts the jobs that reached it, then
/// waits to be cancelled.
final class StuckGenerator: BadgeGenerator {
    let started = Gate()

    func availability() async -> Availability { .available }

    func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
        started.arrive()
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}

/// A class so that each test's directory is removed when the test ends.
@Suite(.threadsOfTheirOwn)
final class BatchRunnerTests: @unchecked Sendable {
    let directory: URL
    let config: BadgeConfig

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-batch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        config = try BadgeConfig.parse(Data("""
            {"backends": {"good": {"type": "fake"}, "bad": {"type": "fake"}, "slow": {"type": "fake"}, "other": {"type": "fake"}}}
            """.utf8), file: "test.json")
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    var output: URL { directory.appendingPathComponent("out") }

    func plan(_ jobs: [BatchJob]) throws -> BatchPlan {
        try BatchPlan.make(BatchManifest(jobs: jobs, source: "test"), config: config,
                           defaults: .init(backend: "good", style: nil, size: 64))
    }

    func runner(_ chains: [String: BatchRunner.Chain], concurrency: Int = 4, force: Bool = false, failFast: Bool = false)
        -> BatchRunner
    {
        let environment = BadgeEnvironment(now: { Date(timeIntervalSince1970: 1_790_000_000) }, variables: [:])
        return BatchRunner(pipeline: Pipeline(environment: environment), chains: chains, concurrency: concurrency,
                           force: force, failFast: failFast, commitment: .init(timeZone: TimeZone(identifier: "UTC")!))
    }

    static func chain(_ name: String, _ generator: any BadgeGenerator, limit: Int = 8) -> BatchRunner.Chain {
        .init(backend: BackendInstance(name: name, type: "fake", generator: generator), limit: limit)
    }

    var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: output.path)) ?? []).sorted()
    }

    @Test func aFailureStopsOnlyItsOwnJob() async throws {
        let good = ProbeGenerator()
        let plan = try plan([
            BatchJob(name: "a", prompt: "one"), BatchJob(name: "b", prompt: "two", backend: "bad"),
            BatchJob(name: "c", prompt: "three", variants: 2),
        ])
        let chains = [
            "good": Self.chain("good", good),
            "bad": Self.chain("bad", FakeGenerator(.fails(BadgeError(.generationFailed, "the model fell over")))),
        ]
        let results = await runner(chains).run(plan.items, into: try BatchOutputDirectory(url: output))
        #expect(results.map(\.item.key) == ["a", "b", "c-01", "c-02"])
        #expect(results.map(\.status) == [.made, .failed, .made, .made])
        #expect(results[1].error?.message == "the model fell over" && results[1].error?.backend == "bad")
        #expect(files == ["a.png", "c-01.png", "c-02.png"])
        // Each output is a complete badge carrying its metadata and its request hash.
        for result in results where result.status == .made {
            let url = output.appendingPathComponent(result.item.fileName)
            let metadata = try #require(try BadgeMetadata.read(from: url))
            #expect(metadata.prompt == result.item.request.prompt && metadata.seed == result.item.request.seed)
            #expect(metadata.extra[BatchRunner.requestHashKey] == result.item.requestHash)
            #expect(try result.sha256 == BatchHash.sha256(try Data(contentsOf: url)))
        }
    }

    /// The slow jobs would take a minute each: only the failure's cancelling
    /// them ends them, so every one of them is cancelled, none made.
    @Test func failFastStopsTheRest() async throws {
        let plan = try plan([BatchJob(name: "bad1", prompt: "x", backend: "bad")]
            + (1...6).map { BatchJob(name: "ok\($0)", prompt: "y\($0)", backend: "slow") })
        let chains = [
            "bad": Self.chain("bad", FakeGenerator(.fails(BadgeError(.generationFailed, "broken")))),
            "slow": Self.chain("slow", ProbeGenerator(delay: .seconds(60)), limit: 1),
        ]
        let results = await runner(chains, concurrency: 2, failFast: true).run(plan.items, into: try BatchOutputDirectory(url: output))
        #expect(results[0].status == .failed)
        #expect(results.filter { $0.status == .cancelled }.count == 6, "\(results.map(\.status))")
        #expect(results.filter { $0.status == .cancelled }.allSatisfy { $0.error?.code == .cancelled })
        #expect(files.allSatisfy { !$0.hasPrefix(".") }, "no temporary is left: \(files)")
    }

    @Test func limitsHoldGloballyAndPerBackend() async throws {
        let all = SharedOccupancy()
        let limited = HeldGenerator(shared: all)
        let free = HeldGenerator(shared: all)
        let plan = try plan((0..<12).map { BatchJob(name: "l\($0)", prompt: "x\($0)", backend: "slow") }
            + (0..<12).map { BatchJob(name: "f\($0)", prompt: "y\($0)", backend: "other") })
        let chains = ["slow": Self.chain("slow", limited, limit: 2), "other": Self.chain("other", free, limit: 8)]
        let runner = runner(chains, concurrency: 5)
        let directory = try BatchOutputDirectory(url: output)
        let task = Task { await runner.run(plan.items, into: directory) }
        do {
            // Held inside their backends until the global limit is taken; which backends hold it is checked below.
            try await waitUntil("5 jobs running at once (\(limited.running) slow and \(free.running) other)") {
                all.running >= 5
            }
        } catch {
            limited.release()
            free.release()
            _ = await task.value
            throw error
        }
        #expect(all.running == 5 && all.maxRunning == 5, "the global limit is reached and not exceeded: \(all.maxRunning) ran at once")
        #expect(limited.maxRunning == 2, "the per-backend limit is reached and not exceeded: \(limited.maxRunning)")
        #expect(free.maxRunning == 3, "the other backend fills the rest of the global limit: \(free.maxRunning)")
        limited.release()
        free.release()
        let results = await task.value
        #expect(results.count == 24 && results.allSatisfy { $0.status == .made }, "\(results.map(\.status))")
        #expect(limited.maxRunning == 2, "the per-backend limit is never exceeded: \(limited.maxRunning)")
        #expect(all.maxRunning <= 5, "the global limit is never exceeded: \(all.maxRunning) ran at once")
        #expect(free.maxRunning >= 3 && free.maxRunning <= 5, "the other backend fills the global limit: \(free.maxRunning)")
    }

    @Test func aRerunSkipsWhatIsUpToDateAndRedoesWhatChanged() async throws {
        let probe = ProbeGenerator(delay: .zero)
        let chains = ["good": Self.chain("good", probe)]
        var jobs = [BatchJob(name: "a", prompt: "one"), BatchJob(name: "b", prompt: "two"), BatchJob(name: "c", prompt: "three")]
        _ = await runner(chains).run(try plan(jobs).items, into: try BatchOutputDirectory(url: output))
        #expect(probe.calls == 3)
        let firstA = try Data(contentsOf: output.appendingPathComponent("a.png"))

        let again = await runner(chains).run(try plan(jobs).items, into: try BatchOutputDirectory(url: output))
        #expect(again.map(\.status) == [.upToDate, .upToDate, .upToDate])
        #expect(probe.calls == 3, "nothing was drawn again")
        #expect(try again[0].sha256 == BatchHash.sha256(firstA) && again[0].metadata?.prompt == "one")

        jobs[1].prompt = "two, changed"
        // A damaged output is redone too: every CRC is checked.
        var damaged = try Data(contentsOf: output.appendingPathComponent("c.png"))
        damaged[damaged.count - 20] ^= 0xFF
        try damaged.write(to: output.appendingPathComponent("c.png"))
        let third = await runner(chains).run(try plan(jobs).items, into: try BatchOutputDirectory(url: output))
        #expect(third.map(\.status) == [.upToDate, .made, .made])
        #expect(probe.calls == 5)

        let forced = await runner(chains, force: true).run(try plan(jobs).items, into: try BatchOutputDirectory(url: output))
        #expect(forced.map(\.status) == [.made, .made, .made])
        #expect(probe.calls == 8)
    }

    @Test func cancellingKeepsFinishedFilesAndLeavesNoPartialOne() async throws {
        let stuck = StuckGenerator()
        let plan = try plan((0..<4).map { BatchJob(name: "quick\($0)", prompt: "q\($0)") }
            + (0..<4).map { BatchJob(name: "stuck\($0)", prompt: "s\($0)", backend: "slow") })
        let chains = [
            "good": Self.chain("good", ProbeGenerator(delay: .zero)),
            "slow": Self.chain("slow", stuck, limit: 2),
        ]
        let directory = try BatchOutputDirectory(url: output)
        let runner = runner(chains, concurrency: 3)
        let task = Task { await runner.run(plan.items, into: directory) }
        do {
            try await waitUntil("the four quick jobs' files (have \(files))") { files.filter { $0.hasPrefix("quick") }.count == 4 }
            // Cancelled while two stuck jobs are inside their backend (its limit is 2).
            try await waitUntil("two stuck jobs to start (\(stuck.started.arrivals) did)") { stuck.started.arrivals == 2 }
        } catch {
            task.cancel()
            throw error
        }
        task.cancel()
        let results = await task.value
        #expect(results.filter { $0.status == .made }.map(\.item.key) == ["quick0", "quick1", "quick2", "quick3"])
        #expect(results.filter { $0.item.key.hasPrefix("stuck") }.allSatisfy { $0.status == .cancelled })
        #expect(files == ["quick0.png", "quick1.png", "quick2.png", "quick3.png"])
    }

    @Test func plantedSymlinksAreReplacedNeverFollowed() async throws {
        let outside = directory.appendingPathComponent("precious.txt")
        try Data("do not touch".utf8).write(to: outside)
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: output.appendingPathComponent("a.png").path, withDestinationPath: outside.path)
        let results = await runner(["good": Self.chain("good", ProbeGenerator(delay: .zero))])
            .run(try plan([BatchJob(name: "a", prompt: "one")]).items, into: try BatchOutputDirectory(url: output))
        #expect(results[0].status == .made, "a symlink is not taken for an up-to-date output")
        #expect(try String(contentsOf: outside, encoding: .utf8) == "do not touch")
        let attributes = try FileManager.default.attributesOfItem(atPath: output.appendingPathComponent("a.png").path)
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
        // Refused by the name check itself, before any file is made: the
        // parent folder exists, so without the check the write would escape.
        for name in ["../escape.png", ".hidden", "sub/inner.png"] {
            let error = #expect(throws: BadgeError.self, "\(name)") { try BatchOutputDirectory(url: output).write(Data("x".utf8), as: name) }
            #expect(error?.code == .usage && error?.message == "\"\(name)\" is not a plain file name", "\(name): \(String(describing: error))")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("escape.png").path))
        let written = try FileManager.default.contentsOfDirectory(atPath: output.path)
        #expect(written == ["a.png"], "\(written)")
    }

    /// A drawn badge that cannot be written fails as the output's fault, not
    /// the backend's; the other jobs are written and no temporary is left.
    @Test func aWriteFailureIsTheOutputsNotTheBackends() async throws {
        try FileManager.default.createDirectory(at: output.appendingPathComponent("a.png/inside"), withIntermediateDirectories: true)
        let results = await runner(["good": Self.chain("good", ProbeGenerator(delay: .zero))])
            .run(try plan([BatchJob(name: "a", prompt: "one"), BatchJob(name: "b", prompt: "two")]).items,
                 into: try BatchOutputDirectory(url: output))
        #expect(results.map(\.status) == [.failed, .made])
        let error = try #require(results[0].error)
        #expect(error.backend == nil, "\(error)")
        #expect(error.path?.hasSuffix("a.png") == true, "\(error)")
        #expect(files == ["a.png", "b.png"])
    }

    @Test func temporariesOfKilledRunsAreSwept() async throws {
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        // A pid that cannot be alive (above pid_max), on this host and on another.
        let mine = ".a.png.\(BatchOutputDirectory.host).99999999.0badf00d.tmp"
        let theirs = ".a.png.some-other-pod.99999999.0badf00d.tmp"
        for name in [mine, theirs] { try Data([1, 2, 3]).write(to: output.appendingPathComponent(name)) }
        _ = await runner(["good": Self.chain("good", ProbeGenerator(delay: .zero))])
            .run(try plan([BatchJob(name: "b", prompt: "one")]).items, into: try BatchOutputDirectory(url: output))
        #expect(!files.contains(mine), "a dead run of this host is swept")
        #expect(files.contains(theirs), "another machine's temporary is left alone")
    }
}
