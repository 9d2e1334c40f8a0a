import BadgeKit
import BadgeKitTesting
import Foundation
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
    func start(_ arguments: [String], extraEnvironment: [String: String] = [:], prefix: [String] = []) throws -> Process {
        let process = Process()
        if prefix.isEmpty {
            process.executableURL = Self.binary
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = prefix + [Self.binary.path] + arguments
        }
        process.environment = environment.merging(extraEnvironment) { $1 }
        process.standardInput = FileHandle.nullDevice
        return process
    }

    /// Runs to completion (or kills it after `timeout` and says so). The wait
    /// happens on a thread of its own: a test blocking one of Swift's few
    /// cooperative threads would stall the async tests running beside it.
    @discardableResult
    func run(_ arguments: [String], extraEnvironment: [String: String] = [:], prefix: [String] = [],
             stdin: Data? = nil, timeout: TimeInterval = 60) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Swift.Result {
                    try self.runBlocking(arguments, extraEnvironment: extraEnvironment, prefix: prefix, stdin: stdin, timeout: timeout)
                })
            }.start()
        }
    }

    func runBlocking(_ arguments: [String], extraEnvironment: [String: String] = [:], prefix: [String] = [],
                     stdin: Data? = nil, timeout: TimeInterval = 60) throws -> Result {
        let process = try start(arguments, extraEnvironment: extraEnvironment, prefix: prefix)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        if stdin != nil { process.standardInput = input }
        try process.run()
        if let stdin {
            input.fileHandleForWriting.write(stdin)
            try input.fileHandleForWriting.close()
        }
        // Read both pipes concurrently so a chatty child never blocks on a full pipe.
        // Threads of their own: blocking reads would starve Dispatch's small global pool.
        let group = DispatchGroup()
        let outData = Collected(), errData = Collected()
        for (pipe, sink) in [(out, outData), (err, errData)] {
            group.enter()
            Thread {
                sink.data = PipeReading.readAll(pipe.fileHandleForReading)
                group.leave()
            }.start()
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(2_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            group.wait()
            throw TimedOut(arguments: arguments, stderr: String(decoding: errData.data, as: UTF8.self))
        }
        process.waitUntilExit()
        group.wait()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData.data, as: UTF8.self),
                      stderr: String(decoding: errData.data, as: UTF8.self), signalled: process.terminationReason == .uncaughtSignal)
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

    /// Workspaces a run left in its TMPDIR.
    var leftoverWorkspaces: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? []).filter { $0.hasPrefix("badge-work-") }
    }
}
