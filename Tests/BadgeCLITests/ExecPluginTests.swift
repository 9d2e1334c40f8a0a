import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The exec backend as a user meets it: the example plugins, configured as
/// config.example.json shows, run by the built binary.
@Suite(.threadsOfTheirOwn)
struct ExecPluginTests {
    static let example = Sandbox.repository.appendingPathComponent("config.example.json")
    static let fixtures = Sandbox.repository.appendingPathComponent("Tests/ExecBackendTests/Fixtures")

    @Test(arguments: [("pillow", "Pillow"), ("magick", "ImageMagick")])
    func theExamplePluginsDrawARealBadge(backend: String, engine: String) async throws {
        let s = try Sandbox()
        let result = try await s.run(["generate", "--config", Self.example.path, "--backend", backend, "--size", "256", "--seed", "42",
                                "Run a marathon before I turn forty"])
        #expect(result.status == 0, "\(result.stderr)")
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        #expect(metadata.backend == backend && metadata.backendType == "exec")
        #expect(metadata.model?.contains(engine) == true, "\(metadata.model ?? "no model")")
        #expect(metadata.seed == 42 && metadata.prompt == "Run a marathon before I turn forty")

        // A drawing, not a blank: a light face on a dark ground, white ink, many colours.
        let image = try GDImage.decodePNG(try #require(s.badge))
        #expect(image.width == 256 && image.height == 256)
        let corner = image.pixel(4, 4), face = image.pixel(70, 128)
        #expect(Int(face.r) + Int(face.g) + Int(face.b) > Int(corner.r) + Int(corner.g) + Int(corner.b) + 150, "face \(face), corner \(corner)")
        var colours = Set<RGBA>()
        for y in stride(from: 0, to: 256, by: 8) { for x in stride(from: 0, to: 256, by: 8) { colours.insert(image.pixel(x, y)) } }
        #expect(colours.count > 100, "only \(colours.count) colours")
        #expect(colours.contains { $0.r > 245 && $0.g > 245 && $0.b > 245 }, "no white ink")
    }

    /// Batch runs give jobs seeds anywhere up to 2^64-1, beyond shell arithmetic.
    @Test(arguments: ["pillow", "magick"])
    func theExamplePluginsTakeTheLargestSeed(backend: String) async throws {
        let s = try Sandbox()
        let output = s.root.appendingPathComponent("x.png")
        let result = try await s.run(["generate", "--config", Self.example.path, "--backend", backend, "--size", "64",
                                      "--seed", "\(UInt64.max)", "--output", output.path, "Swim"])
        #expect(result.status == 0, "\(result.stderr)")
        let metadata = try #require(try BadgeMetadata.read(from: output), "no badge at \(output.path)")
        #expect(metadata.backend == backend && metadata.backendType == "exec" && metadata.prompt == "Swim")
        // The seed each plugin says it drew with: Pillow takes it whole, the shell plugin its last nine digits.
        let drawnWith: UInt64 = backend == "pillow" ? UInt64.max : 709_551_615
        #expect(metadata.seed == drawnWith, "\(String(describing: metadata.seed))")
        let image = try GDImage.decodePNG(try Data(contentsOf: output))
        #expect(image.width == 64 && image.height == 64)
    }

    /// A token a plugin's `env` passes on (`"HF_TOKEN": "${HF_TOKEN}"`, as
    /// config.example.json shows) is a secret: a plugin that repeats it in its
    /// error and on standard error gets it masked, in the words and in the JSON.
    @Test func aTokenPassedToAPluginIsNeverRepeated() async throws {
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("plugins.json")
        try Data("""
            {"backends": {"careless": {"type": "exec", "command": ["\(Self.fixtures.path)/echo-token.sh"],
                                       "env": {"HF_TOKEN": "${HF_TOKEN}", "MODEL": "${MODEL_NAME}"}}}}
            """.utf8).write(to: config)
        let token = "hf_exampleTokenValue123456"
        let env = ["HF_TOKEN": token, "MODEL_NAME": "sdxl-turbo"]
        for extra in [[], ["--json"], ["--verbose"]] {
            let result = try await s.run(["generate", "--config", config.path, "--backend", "careless", "--size", "64"] + extra + ["Swim"],
                                         extraEnvironment: env)
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains("the hub refused token ********"), "\(extra): \(result.stderr)")
            #expect(!result.stdout.contains("exampleToken") && !result.stderr.contains("exampleToken"), "\(extra): \(result.stderr)")
        }
    }

    @Test func backendsAsksEachPluginAndShowsItsAnswer() async throws {
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("plugins.json")
        try Data("""
            {"backends": {
              "pillow": {"type": "exec", "command": ["/usr/bin/python3", "\(Sandbox.repository.path)/Plugins/Examples/python-pillow/badge_pillow.py"]},
              "gpu": {"type": "exec", "command": ["\(Self.fixtures.path)/unavailable.sh"]},
              "gone": {"type": "exec", "command": ["./not-here.sh"]}
            }}
            """.utf8).write(to: config)
        let result = try await s.run(["backends", "--config", config.path])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        #expect(lines.contains("pillow exec available"), "\(result.stdout)")
        #expect(lines.contains("gpu exec unavailable: no GPU found"), "\(result.stdout)")
        #expect(lines.contains("hint: plug one in"), "\(result.stdout)")
        #expect(lines.contains { $0.hasPrefix("gone exec") && $0.contains("\(s.root.path)/not-here.sh\" was not found") }, "\(result.stdout)")
    }

    /// A config whose backend "slow" runs a plugin that never finishes and
    /// starts a child, writing the child's pid to the returned file.
    static func hangingPlugin(in s: Sandbox, timeoutSeconds: Int, stopGraceSeconds: Int = 2) throws -> (config: URL, pidFile: URL) {
        let pidFile = s.root.appendingPathComponent("child.pid")
        let config = s.root.appendingPathComponent("hang.json")
        try Data("""
            {"backends": {"slow": {"type": "exec", "command": ["\(fixtures.path)/hang.sh"], "timeoutSeconds": \(timeoutSeconds),
                                   "stopGraceSeconds": \(stopGraceSeconds), "env": {"CHILD_PID_FILE": "\(pidFile.path)"}}}}
            """.utf8).write(to: config)
        return (config, pidFile)
    }

    @Test func aHangingPluginIsStoppedAndTheBadgeStays() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "--seed", "1", "The badge before"]).status == 0)
        let before = try #require(s.badge)
        let (config, pidFile) = try Self.hangingPlugin(in: s, timeoutSeconds: 1)
        let result = try await s.run(["generate", "--config", config.path, "--backend", "slow", "Never finishes"], timeout: 30)
        #expect(result.status == 1)
        #expect(result.stderr.contains("backend 'slow': the plugin did not finish within its time limit of 1 s; it was stopped"),
                "\(result.stderr)")
        #expect(result.stderr.contains("thinking very hard"))
        #expect(s.badge == before)
        #expect(s.leftoverWorkspaces.isEmpty)
        let pid = try #require(pid_t(try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(try await Self.dies(pid), "the plugin's child is still running")
    }

    @Test func ctrlCStopsARunningPluginAndItsChildren() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "--seed", "1", "The badge before"]).status == 0)
        let before = try #require(s.badge)
        let (config, pidFile) = try Self.hangingPlugin(in: s, timeoutSeconds: 600)
        let child = try s.start(["generate", "--config", config.path, "--backend", "slow", "Never finishes"])
        let err = Pipe()
        child.standardError = err
        child.standardOutput = FileHandle.nullDevice
        try child.run()
        try await waitUntil("the plugin to write its child's pid") { FileManager.default.fileExists(atPath: pidFile.path) || !child.isRunning }
        #expect(child.isRunning, "badge ended before the plugin started")
        child.interrupt()
        #expect(try await s.waitForExit(child), "badge did not stop within 60 s of SIGINT")
        let stderr = String(decoding: PipeReading.readAll(err.fileHandleForReading), as: UTF8.self)
        #expect(child.terminationReason == .exit && child.terminationStatus == 130, "\(stderr)")
        #expect(stderr.contains("badge: stopped (Ctrl-C); the current badge is unchanged"), "\(stderr)")
        #expect(!stderr.contains("error:"), "a stop is no error: \(stderr)")
        #expect(s.badge == before)
        #expect(s.leftoverWorkspaces.isEmpty, "\(s.leftoverWorkspaces)")
        let pid = try #require(pid_t(try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(try await Self.dies(pid), "the plugin's child is still running")
    }

    /// The first Ctrl-C asks the plugin to stop and gives it its `stopGraceSeconds` (60 here, so
    /// the test never races it); this one ignores SIGTERM. A second Ctrl-C meanwhile ends badge
    /// at once, by SIGINT as the shell expects, and takes the plugin's whole process group with it.
    @Test func aSecondCtrlCQuitsAtOnceAndTakesThePluginWithIt() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "--seed", "1", "The badge before"]).status == 0)
        let before = try #require(s.badge)
        let (config, pidFile) = try Self.hangingPlugin(in: s, timeoutSeconds: 600, stopGraceSeconds: 60)
        let child = try s.start(["generate", "--config", config.path, "--backend", "slow", "Never finishes"])
        child.standardError = FileHandle.nullDevice
        child.standardOutput = FileHandle.nullDevice
        try child.run()
        try await waitUntil("the plugin to write its child's pid") { FileManager.default.fileExists(atPath: pidFile.path) || !child.isRunning }
        #expect(child.isRunning, "badge ended before the plugin started")
        #expect(child.signal(SIGINT))
        // Two signals pending at once would be one: the second goes once the first was delivered.
        try await waitUntil("badge to take the first SIGINT") { !Self.hasPending(SIGINT, pid: child.processIdentifier) }
        #expect(child.signal(SIGINT), "badge ended on the first SIGINT, within the plugin's 60 s grace")
        #expect(try await s.waitForExit(child), "badge did not end on the second SIGINT")
        #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGINT,
                "\(child.terminationReason) \(child.terminationStatus)")
        #expect(s.badge == before)
        let pid = try #require(pid_t(try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(try await Self.dies(pid), "the plugin's child is still running")
    }

    /// Whether `signal` is pending for process `pid` as a whole (/proc's ShdPnd mask).
    static func hasPending(_ signal: Int32, pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("ShdPnd:") }),
              let mask = UInt64(line.dropFirst("ShdPnd:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << UInt64(signal - 1)) != 0
    }

    /// Whether `pid` (a `sleep` the plugin started) is gone within 30 s (SIGKILL lands a moment
    /// after kill(2); the bound is for a hang, not a speed check).
    static func dies(_ pid: pid_t) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            if !state.contains("(sleep)") || state.contains(") Z ") { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test func aFailingPluginHandsOverToItsFallback() async throws {
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("fallback.json")
        try Data("""
            {"backends": {"crashy": {"type": "exec", "command": ["\(Self.fixtures.path)/crash.sh"], "fallback": "procedural"}}}
            """.utf8).write(to: config)
        let result = try await s.run(["generate", "--config", config.path, "--backend", "crashy", "--size", "64", "Keep going"])
        #expect(result.status == 0, "\(result.stderr)")
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        #expect(metadata.backend == "procedural")
        #expect(metadata.extra["fallback-from"] == "crashy: the plugin crash.sh was killed by signal 11 (SIGSEGV)")
    }

    @Test func aConfigMistakeIsPointedAt() async throws {
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("bad.json")
        try Data("{\n  \"backends\": {\n    \"mine\": {\"type\": \"exec\", \"command\": [\"x\"],\n      \"timeoutSeconds\": -1}\n  }\n}\n".utf8)
            .write(to: config)
        let result = try await s.run(["config", "validate", config.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(config.path):4:25: backends.mine.timeoutSeconds: -1.0 is out of range"), "\(result.stderr)")
    }
}
