import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `badge` binary as a child process, in a sandbox of its own:
/// its own store, TMPDIR, HOME and XDG_CONFIG_HOME, so a test never touches
/// the user's real badge.
final class Sandbox: @unchecked Sendable {
    let root: URL
    var store: URL { root.appendingPathComponent("store") }
    var tmp: URL { root.appendingPathComponent("tmp") }
    var home: URL { root.appendingPathComponent("home") }

    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["BADGE_BIN"] { return URL(fileURLWithPath: path) }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return exe.deletingLastPathComponent().appendingPathComponent("badge")
    }

    /// Whether the binary under test has the debug-only seams (`TestHold`,
    /// read from BADGE_TEST_HOLD). A release build compiles them out, and with
    /// them the line a held run prints ("badge: held at STAGE"): the binary's
    /// bytes hold that line exactly when they hold the seams.
    static let hasTestSeams: Bool = {
        guard let bytes = try? Data(contentsOf: binary, options: .alwaysMapped) else { return false }
        let marker = Array("badge: held at ".utf8)
        return bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Bool in
            guard let base = raw.baseAddress, raw.count >= marker.count else { return false }
            var offset = 0
            while offset <= raw.count - marker.count {
                // The next byte that can start the marker, found by memchr.
                guard let found = memchr(base + offset, Int32(marker[0]), raw.count - marker.count + 1 - offset) else { return false }
                offset = base.distance(to: UnsafeRawPointer(found))
                if memcmp(base + offset, marker, marker.count) == 0 { return true }
                offset += 1
            }
            return false
        }
    }()

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("badge-e2e-\(UUID().uuidString)")
        for dir in [tmp, home, home.appendingPathComponent(".config")] {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        }
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["BADGE_STORE"] = store.path
        env["TMPDIR"] = tmp.path
        env["HOME"] = home.path
        env["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        // The font cache too: the runner's own (~/.cache/badge) is neither read nor written.
        env["XDG_CACHE_HOME"] = home.appendingPathComponent(".cache").path
        env["LANG"] = "en_US.UTF-8"
        env["NO_COLOR"] = "1"
        env.removeValue(forKey: "BADGE_CONFIG")
        env.removeValue(forKey: "XDG_DATA_HOME")
        return env
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// True when the child ended by a signal rather than an exit.
        var signalled: Bool
    }

    /// Starts a child and returns it without waiting.
    func start(_ arguments: [String], extraEnvironment: [String: String] = [:], prefix: [String] = []) throws -> ChildProcess {
        let process = ChildProcess()
        if prefix.isEmpty {
            process.executableURL = Self.binary
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = prefix + [Self.binary.path] + arguments
        }
        process.environment = environment.merging(extraEnvironment) { $1 }
        return process
    }

    /// Runs to completion (or kills it after `timeout` and says so). The wait
    /// happens on a thread of its own: a test blocking one of Swift's few
    /// cooperative threads would stall the async tests running beside it.
    @discardableResult
    /// With `readerGone`, standard output is a pipe whose reading end is
    /// already closed, as after `| head -1` has read its line.
    func run(_ arguments: [String], extraEnvironment: [String: String] = [:], prefix: [String] = [],
             stdin: Data? = nil, timeout: TimeInterval = 60, readerGone: Bool = false) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Swift.Result {
                    try self.runBlocking(arguments, extraEnvironment: extraEnvironment, prefix: prefix, stdin: stdin, timeout: timeout,
                                         readerGone: readerGone)
                })
            }.start()
        }
    }

    func runBlocking(_ arguments: [String], extraEnvironment: [String: String] = [:], prefix: [String] = [],
                     stdin: Data? = nil, timeout: TimeInterval = 60, readerGone: Bool = false) throws -> Result {
        let process = try start(arguments, extraEnvironment: extraEnvironment, prefix: prefix)
        let out = Pipe(), err = Pipe()
        if readerGone { try out.fileHandleForReading.close() }
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        if stdin != nil { process.standardInput = input }
        try process.run()
        let group = DispatchGroup()
        if let stdin {
            // On a thread of its own, which blocks SIGPIPE: a child that exits before reading
            // all of its input makes the write fail with EPIPE rather than kill the test runner
            // (the signal stays pending on this thread and ends with it).
            group.enter()
            Thread {
                var pipeSignal = sigset_t()
                sigemptyset(&pipeSignal)
                sigaddset(&pipeSignal, SIGPIPE)
                pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
                try? input.fileHandleForWriting.write(contentsOf: stdin)
                try? input.fileHandleForWriting.close()
                group.leave()
            }.start()
        }
        // Read both pipes concurrently so a chatty child never blocks on a full pipe.
        // Threads of their own: blocking reads would starve Dispatch's small global pool.
        let outData = Collected(), errData = Collected()
        for (pipe, sink) in readerGone ? [(err, errData)] : [(out, outData), (err, errData)] {
            group.enter()
            Thread {
                sink.data = PipeReading.readAll(pipe.fileHandleForReading)
                group.leave()
            }.start()
        }
        if !process.waitUntilExit(timeout: .seconds(timeout)) && process.signal(SIGKILL) {
            process.waitUntilExit()
            group.wait()
            throw TimedOut(arguments: arguments, stderr: String(decoding: errData.data, as: UTF8.self))
        }
        process.waitUntilExit()
        group.wait()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData.data, as: UTF8.self),
                      stderr: String(decoding: errData.data, as: UTF8.self), signalled: process.terminationReason == .uncaughtSignal)
    }

    /// Waits for `process` to end, suspended (holding no thread). Returns false if it is
    /// still running after `timeout`, a bound on a hang, not a speed check.
    @discardableResult
    func waitForExit(_ process: ChildProcess, timeout: Duration = .seconds(60)) async throws -> Bool {
        await process.waitForExit(limit: timeout)
    }

    /// A child stopped by the `BADGE_TEST_HOLD` seam at a stage it has reached: it waits
    /// there until its standard input closes (`release()`) or it is cancelled (SIGINT).
    final class HeldRun: @unchecked Sendable {
        let process: ChildProcess
        let input: Pipe
        let errors: Pipe
        /// What it printed on standard error before it was held.
        let stderrBefore: String

        init(process: ChildProcess, input: Pipe, errors: Pipe, stderrBefore: String) {
            self.process = process
            self.input = input
            self.errors = errors
            self.stderrBefore = stderrBefore
        }

        func release() { try? input.fileHandleForWriting.close() }

        /// Standard error after the hold, to its end (call once the child has exited).
        func stderrAfter() async throws -> String {
            let errors = Unchecked(errors)
            return try await onOwnThread {
                String(decoding: PipeReading.readAll(errors.value.fileHandleForReading), as: UTF8.self)
            }
        }
    }

    struct NotHeld: Error, CustomStringConvertible {
        var arguments: [String]
        var stage: String
        var stderr: String
        var description: String { "badge \(arguments.joined(separator: " ")) never reached \(stage); stderr: \(stderr)" }
    }

    /// Starts `badge arguments` with `BADGE_TEST_HOLD=stage` and returns once it says it is
    /// held there. A child that ends first, or is not held within `timeout`, is an error.
    func startHeld(_ arguments: [String], at stage: String, timeout: TimeInterval = 120) async throws -> HeldRun {
        let process = try start(arguments, extraEnvironment: ["BADGE_TEST_HOLD": stage])
        let input = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardError = errors
        try process.run()
        let stderr = Unchecked(errors)
        // A bound on a hang: a child not held by then is killed, which ends the read below.
        let watchdog = KillTimer(process, after: timeout)
        let (held, before) = try await onOwnThread { () -> (Bool, String) in
            var lines: [String] = []
            while let line = PipeReading.readLine(stderr.value.fileHandleForReading) {
                if line == "badge: held at \(stage)" { return (true, lines.joined(separator: "\n")) }
                lines.append(line)
            }
            return (false, lines.joined(separator: "\n"))
        }
        watchdog.cancel()
        guard held else {
            process.signal(SIGKILL)
            try await waitForExit(process)
            throw NotHeld(arguments: arguments, stage: stage, stderr: before)
        }
        return HeldRun(process: process, input: input, errors: errors, stderrBefore: before)
    }

    /// Carries a value that is not Sendable to a thread that alone uses it meanwhile.
    struct Unchecked<T>: @unchecked Sendable {
        let value: T
        init(_ value: T) { self.value = value }
    }

    /// Written by one reader thread, read after `group.wait()`.
    final class Collected: @unchecked Sendable {
        var data = Data()
    }

    struct TimedOut: Error, CustomStringConvertible {
        var arguments: [String]
        var stderr: String
        var description: String { "badge \(arguments.joined(separator: " ")) did not finish in time; stderr: \(stderr)" }
    }

    var badge: Data? { try? Data(contentsOf: store.appendingPathComponent("badge.png")) }

    var storeObject: BadgeStore { BadgeStore(directory: store) }

    /// Workspaces a run left in its TMPDIR: in this user's `badge-<uid>` there, or in TMPDIR itself.
    var leftoverWorkspaces: [String] {
        [tmp.path, tmp.appendingPathComponent("badge-\(geteuid())").path].flatMap { directory in
            ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("badge-work-") }
        }
    }
}

extension Trait where Self == ConditionTrait {
    /// A test whose work a debug build takes minutes of CPU for (4096 px in
    /// every style): it runs against the release binary (BADGE_BIN, as
    /// `make test-release` and CI run the end-to-end suite), saying so elsewhere.
    static var needsTheReleaseBinary: Self {
        .disabled(if: Sandbox.hasTestSeams,
                  "draws what a debug build takes minutes of CPU for: runs against the release binary (make test-release)")
    }

    /// A test that holds a run at a stage through the debug-only seams
    /// (BADGE_TEST_HOLD): it runs against a debug build, and against a release
    /// build (BADGE_BIN) it is skipped, saying why.
    static var needsTestSeams: Self {
        .enabled(if: Sandbox.hasTestSeams,
                 "needs the debug-only seams (BADGE_TEST_HOLD), which \(Sandbox.binary.path) does not have: a release build")
    }
}
