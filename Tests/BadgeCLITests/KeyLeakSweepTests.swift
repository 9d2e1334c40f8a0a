import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// Issue #31: a server echoes the key whole, split by a line break, with a
/// zero-width joiner and as `sk-...abcd`, and hands back a job id that is the
/// key. No 8-character piece of the key is in anything badge leaves: standard
/// output and error, `--json`, `-v` logs, a batch's manifest.json and
/// journal, and the stored PNGs.
@Suite(.threadsOfTheirOwn)
struct KeyLeakSweepTests {
    static let imageServer = Sandbox.repository.appendingPathComponent("Tests/RemoteBackendTests/Fixtures/fake_image_server.py")
    static let key = "sk-e2e-Secret0123456789abcdWXYZ"

    static func pieces() -> [String] {
        let chars = Array(key)
        return (0...(chars.count - 8)).map { String(chars[$0..<($0 + 8)]) }
    }

    /// Each run is bounded by `Sandbox.run`'s own limit.
    @Test func noPieceOfTheKeyLeavesBadge() async throws {
        let server = try FixtureServer(script: Self.imageServer)
        defer { server.stop() }
        let s = try Sandbox()
        let base = "http://127.0.0.1:\(server.port)"
        let config = s.root.appendingPathComponent("config.json")
        try Data("""
            {"backends": {
              "echo": {"type": "http", "api": "openai", "url": "\(base)/echo-key-split/v1", "apiKeyEnv": "BADGE_TEST_KEY", "retries": 0},
              "jobs": {"type": "http", "api": "jobs", "url": "\(base)/jobs-echo-key", "apiKeyEnv": "BADGE_TEST_KEY", "retries": 0,
                       "bodyTemplate": {"input": {"prompt": "{prompt}"}}, "pollIntervalSeconds": 0.1, "timeoutSeconds": 1}
            }}
            """.utf8).write(to: config)
        let manifest = s.root.appendingPathComponent("jobs.json")
        try Data(#"""
            [{"name": "echo", "prompt": "a calm sea", "backend": "echo", "size": 64},
             {"name": "jobs", "prompt": "a calm lake", "backend": "jobs", "size": 64},
             {"name": "fine", "prompt": "a calm river", "size": 64}]
            """#.utf8).write(to: manifest)
        let environment = ["BADGE_TEST_KEY": Self.key]
        #expect(try await s.run(["generate", "--size", "64", "first"]).status == 0)
        let runs: [[String]] = [
            ["generate", "--config", config.path, "--backend", "echo", "-v", "a calm sea"],
            ["generate", "--config", config.path, "--backend", "echo", "--json", "a calm sea"],
            ["generate", "--config", config.path, "--backend", "jobs", "-v", "a calm lake"],
            ["generate", "--config", config.path, "--backend", "jobs", "--json", "a calm lake"],
            ["batch", manifest.path, "--config", config.path, "--output", s.root.appendingPathComponent("out").path, "-v"],
            ["batch", manifest.path, "--config", config.path, "--output", s.root.appendingPathComponent("out-json").path, "--json"],
        ]
        var outputs: [(String, Data)] = []
        for arguments in runs {
            let result = try await s.run(arguments, extraEnvironment: environment)
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            outputs.append(("stdout of \(arguments)", Data(result.stdout.utf8)))
            outputs.append(("stderr of \(arguments)", Data(result.stderr.utf8)))
        }
        // The runs reached the server's echoes: the errors say the key was masked.
        #expect(outputs.contains { String(decoding: $0.1, as: UTF8.self).contains("Incorrect API key provided: ********") },
                "\(outputs.map { String(decoding: $0.1, as: UTF8.self) })")
        #expect(outputs.contains { String(decoding: $0.1, as: UTF8.self).contains("job ******** did not finish") },
                "\(outputs.map { String(decoding: $0.1, as: UTF8.self) })")
        // Every file the runs left: the store's PNGs, the batch folders' manifest, journal and badges.
        for folder in [s.store, s.root.appendingPathComponent("out"), s.root.appendingPathComponent("out-json")] {
            let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
            #expect(!files.isEmpty, "\(folder.path) holds files")
            for file in files where (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                outputs.append((file.path, try Data(contentsOf: file)))
            }
        }
        #expect(outputs.contains { $0.0.hasSuffix("manifest.json") })
        for (what, data) in outputs {
            for piece in Self.pieces() where data.range(of: Data(piece.utf8)) != nil {
                Issue.record("\(what) holds \"\(piece)\", a piece of the key")
            }
        }
    }
}
