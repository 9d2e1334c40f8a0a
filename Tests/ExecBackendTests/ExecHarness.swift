import BadgeKit
import BadgeKitTesting
import ExecBackend
import Foundation
import Logging
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A temporary directory with a config file naming one fixture plugin, a
/// store holding a badge already, and the pipeline that runs the plugin into it.
final class ExecHarness: @unchecked Sendable {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let png = TestPNG.solid(width: 48, height: 48, rgb: (30, 120, 200))

    let root = FileManager.default.temporaryDirectory.appendingPathComponent("badge-exec-\(UUID().uuidString)")
    let log = CollectedLog()
    var store: BadgeStore { BadgeStore(directory: root.appendingPathComponent("store"), lockTimeout: .seconds(5)) }
    var pngSource: URL { root.appendingPathComponent("source.png") }
    var childPIDFile: URL { root.appendingPathComponent("child.pid") }
    var configFile: URL { root.appendingPathComponent("config.json") }
    /// badge's own environment, with a secret the plugins must never see.
    var variables: [String: String] {
        ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": root.path, "LANG": "C.UTF-8",
         "OPENAI_API_KEY": "sk-never-for-plugins", "MY_TOKEN": "tok-for-the-plugin"]
    }

    init() throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try Self.png.write(to: pngSource)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    var environment: BadgeEnvironment {
        BadgeEnvironment(variables: variables, logger: Logger(label: "test") { _ in self.log.handler() }, workingDirectory: root)
    }

    /// Writes a config with one exec backend named after `script` and builds it. The time
    /// limit is long unless a test is about it: on a loaded machine a test can wait long for a thread.
    func backend(_ script: String, timeout: Double = 600, env: [String: String] = [:], extra: String = "") throws -> BackendInstance {
        var environment = ["PNG_SOURCE": pngSource.path, "CHILD_PID_FILE": childPIDFile.path]
        environment.merge(env) { $1 }
        let envJSON = environment.keys.sorted().map { "\(JSONWriter.quote($0)): \(JSONWriter.quote(environment[$0]!))" }.joined(separator: ", ")
        let name = script.replacingOccurrences(of: ".sh", with: "")
        let text = """
            {
              "backends": {
                "\(name)": {
                  "type": "exec",
                  "command": [\(JSONWriter.quote(Self.fixtures.appendingPathComponent(script).path))],
                  "env": {\(envJSON)},
                  "timeoutSeconds": \(timeout)\(extra)
                }
              }
            }
            """
        try Data(text.utf8).write(to: configFile)
        let config = try BadgeConfig.load(from: configFile)
        return try Self.registry.makeBackend(named: name, in: config, environment: self.environment)
    }

    static var registry: BackendRegistry {
        var registry = BackendRegistry()
        ExecGenerator.register(in: &registry, limits: .default)
        return registry
    }

    /// Commits a first badge, so there is something to leave untouched; returns its bytes.
    func seedStore() throws -> Data {
        let metadata = BadgeMetadata(
            commitmentDate: Date(timeIntervalSince1970: 1_800_000_000), timeZone: "UTC", createdAt: Date(),
            prompt: "the badge before", backend: "procedural", backendType: "procedural", size: 16, seed: 1)
        try store.commit(.stamping(metadata, into: TestPNG.solid(width: 16, height: 16, rgb: (1, 2, 3))))
        return try Data(contentsOf: store.badgeURL)
    }

    func run(_ backend: BackendInstance, request: BadgeRequest = BadgeRequest(prompt: "Learn the cello", size: 64, seed: 5))
        async throws -> PipelineOutcome
    {
        try await Pipeline(environment: environment).run(
            request, backend: backend, commitment: .init(timeZone: TimeZone(identifier: "UTC")!), to: .store(store))
    }

    /// Runs `backend`, which must fail; checks that the store kept its badge byte for byte.
    func failure(_ backend: BackendInstance, sourceLocation: Testing.SourceLocation = #_sourceLocation) async throws -> BadgeError {
        let before = try seedStore()
        do {
            _ = try await run(backend)
        } catch let error as BadgeError {
            #expect(try Data(contentsOf: store.badgeURL) == before, "the store changed", sourceLocation: sourceLocation)
            #expect(try store.history().count == 0, "a badge went into the history", sourceLocation: sourceLocation)
            #expect(error.backend == backend.name, "the error does not name the plugin: \(error)", sourceLocation: sourceLocation)
            return error
        }
        Issue.record("the run did not fail", sourceLocation: sourceLocation)
        throw CancellationError()
    }

    /// Whether the child the plugin started (its pid in a file) dies: SIGKILL lands a
    /// moment after kill(2) returns, so this looks for up to 30 s (a bound on a hang,
    /// not a speed check).
    func childDies() async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if try childIsGone() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Whether the process `pid` (read from a file the plugin wrote) is gone.
    func childIsGone() throws -> Bool {
        let text = try String(contentsOf: childPIDFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let pid = try #require(pid_t(text))
        // A zombie would still answer kill(0): the child was reparented, so look at its state.
        if kill(pid, 0) != 0 { return errno == ESRCH }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        return stat.contains(") Z ") || !stat.contains("sleep")
    }
}

/// Every log line, for tests that check what reached the log.
final class CollectedLog: Sendable {
    private let lines = Mutex<[String]>([])

    var all: [String] { lines.withLock { $0 } }

    func handler() -> some LogHandler { Handler(log: self) }

    private struct Handler: LogHandler {
        let log: CollectedLog
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let text = "\(event.level): \(event.message)"
            log.lines.withLock { $0.append(text) }
        }
    }
}
