import BadgeKit
import BadgeTestSupport
@testable import ExecBackend
import Foundation
import Logging
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The time limit of one plugin run (`PluginProcess`): a program still running
/// when it passes is stopped and reported; one that has exited by then is not
/// timed out, whatever is left of its run. These runs hold their standard
/// error in the log until a state is reached, so the limit passes while the
/// run is still ending.
@Suite(.threadsOfTheirOwn)
struct TimeLimitTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    let root = FileManager.default.temporaryDirectory.appendingPathComponent("badge-limit-\(UUID().uuidString)")

    init() throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    func process(_ script: String, timeout: Duration, grace: Duration = .seconds(120), environment: [String: String] = [:],
                 log: HeldLog) -> PluginProcess {
        PluginProcess(
            backend: "limited", executable: Self.fixtures.appendingPathComponent(script).path, arguments: [],
            environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }, workingDirectory: root,
            timeout: timeout, grace: grace, logger: log.logger)
    }

    /// The program exits at once, but its run is held (its "answered" line in the log) until
    /// the limit has passed and the run has seen that the program exited: a success.
    @Test func aPluginThatExitedByItsLimitIsNotTimedOut() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let log = HeldLog(holding: "plugin: answered", until: "exited by its time limit")
        let finished = try await process("answers.sh", timeout: .seconds(2), log: log).run(request: Data("{}".utf8))
        #expect(log.held == .released, "the run did not wait for the program's end: \(log.lines)")
        #expect(finished.status.isSuccess)
        #expect(finished.standardOutput == Data("{\"ok\": true}\n".utf8))
        #expect(finished.standardError == ["answered"])
    }

    /// The program's leader exits, but the child it left holds its standard output and error
    /// open past the limit: the child is killed, the streams end, and the run is a success.
    @Test func aLeftoverHoldingTheOutputOpenPastTheLimitIsKilled() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let childFile = root.appendingPathComponent("child.pid")
        let log = HeldLog(holding: "plugin: answered") {
            guard let text = try? String(contentsOf: childFile, encoding: .utf8), let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
            else { return false }
            return Self.isGone(pid)
        }
        let finished = try await process("answers.sh", timeout: .seconds(2), environment: ["CHILD_PID_FILE": childFile.path], log: log)
            .run(request: Data("{}".utf8))
        #expect(log.held == .released, "the leftover child was not killed while the run was held: \(log.lines)")
        #expect(finished.status.isSuccess)
        #expect(finished.standardOutput == Data("{\"ok\": true}\n".utf8))
    }

    /// A program still running at its limit (ignoring SIGTERM, with a child that does too) is
    /// stopped with its group and reported as a timeout.
    @Test func aPluginStillRunningAtItsLimitIsStoppedAndReported() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let childFile = root.appendingPathComponent("child.pid")
        let log = HeldLog()
        let error = await #expect(throws: BadgeError.self) {
            try await process("hang.sh", timeout: .seconds(1), grace: .milliseconds(200), environment: ["CHILD_PID_FILE": childFile.path], log: log)
                .run(request: Data("{}".utf8))
        }
        #expect(error?.code == .timeout)
        #expect(error?.message == "the plugin did not finish within its time limit of 1 s; it was stopped")
        #expect(error?.hint == "raise timeoutSeconds for this backend if it needs longer")
        #expect(error?.backend == "limited")
        #expect(error?.cause?.contains("thinking very hard") == true)
        let pid = try #require(pid_t(try String(contentsOf: childFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        try await waitUntil("the hanging plugin's child to be killed with its group", timeout: .seconds(30)) { Self.isGone(pid) }
    }

    /// Whether `pid` has exited: gone, or a zombie (the child was reparented, so nobody here reaps it).
    static func isGone(_ pid: pid_t) -> Bool {
        if kill(pid, 0) != 0 { return errno == ESRCH }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")")
        else { return true }
        return stat[close...].dropFirst(2).first == "Z"
    }
}

/// A log that blocks the thread logging `holding` until a line containing
/// `until` is logged, or `condition` holds (bounded, for a hang), and keeps every line.
final class HeldLog: Sendable {
    enum Held: Sendable, Equatable {
        case never, holding, released, gaveUp
    }

    private let state = Mutex<(lines: [String], held: Held)>(([], .never))
    private let release = Gate()
    private let holding: String?
    private let until: String?
    private let condition: (@Sendable () -> Bool)?

    init(holding: String? = nil, until: String? = nil, _ condition: (@Sendable () -> Bool)? = nil) {
        self.holding = holding
        self.until = until
        self.condition = condition
    }

    var lines: [String] { state.withLock { $0.lines } }
    var held: Held { state.withLock { $0.held } }

    var logger: Logger {
        Logger(label: "test") { _ in Handler(log: self) }
    }

    fileprivate func record(_ line: String) {
        state.withLock { $0.lines.append(line) }
        if let until, line.contains(until) { release.arrive() }
        guard let holding, line.contains(holding) else { return }
        state.withLock { $0.held = .holding }
        let released: Bool
        if let condition {
            released = pollUntil(timeout: .seconds(60), condition)
        } else {
            released = release.wait(limit: .seconds(60))
        }
        state.withLock { $0.held = released ? .released : .gaveUp }
    }

    private struct Handler: LogHandler {
        let log: HeldLog
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            log.record("\(event.message)")
        }
    }
}
