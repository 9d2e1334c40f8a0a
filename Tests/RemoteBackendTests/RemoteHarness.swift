import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import CurlTransport
import Foundation
@testable import RemoteBackend

/// A fake image server, a store holding a badge already, and a way to run one
/// remote backend instance through the whole pipeline against them.
final class RemoteHarness: @unchecked Sendable {
    static let key = "sk-test-secret-0123456789"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/fake_image_server.py")

    let server: FixtureServer
    let directory: URL
    let store: BadgeStore
    let previousBadge: Data
    let transport = CurlTransport()

    init() throws {
        server = try FixtureServer(script: Self.script)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-remote-\(UUID().uuidString)")
        store = BadgeStore(directory: directory.appendingPathComponent("store"))
        let metadata = BadgeMetadata(
            commitmentDate: Date(timeIntervalSince1970: 1_800_000_000), timeZone: "UTC", createdAt: Date(),
            prompt: "the old promise", backend: "procedural", backendType: "procedural", size: 64)
        previousBadge = try metadata.stamp(into: TestPNG.solid(width: 64, height: 64, rgb: (10, 120, 60)))
        try store.commit(.stamping(metadata, into: previousBadge))
    }

    func stop() {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The config object of one `http` instance, as a user would write it.
    /// `options` are JSON members added to (or replacing) the defaults, e.g. `["retries": "0"]`.
    func config(mode: String, api: String = "openai", options: [String: String] = [:]) throws -> BadgeConfig {
        let base: String
        switch api {
        case "openai": base = "http://127.0.0.1:\(server.port)/\(mode)/v1"
        case "raw": base = "http://127.0.0.1:\(server.port)/\(mode)/raw"
        case "jobs": base = "http://127.0.0.1:\(server.port)/\(mode)"
        default: base = "http://127.0.0.1:\(server.port)/\(mode)"
        }
        // A whole-run deadline far above what a run takes (under a second), so that a CI machine
        // busy with the other suites never fails a test about something else; the tests of the
        // deadline itself set their own.
        let defaults = [
            "type": "\"http\"", "api": "\"\(api)\"", "url": "\"\(base)\"", "model": "\"test-model\"",
            "apiKeyEnv": "\"BADGE_TEST_KEY\"", "retries": "2", "timeoutSeconds": "30", "idleTimeoutSeconds": "2",
        ]
        let members = defaults.merging(options) { $1 }.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }
        let text = "{\"backends\": {\"remote\": {" + members.joined(separator: ", ") + "}}}"
        return try BadgeConfig.parse(Data(text.utf8), file: "test-config.json")
    }

    func environment(variables: [String: String] = ["BADGE_TEST_KEY": RemoteHarness.key]) -> BadgeEnvironment {
        BadgeEnvironment(variables: variables, http: transport)
    }

    func backend(_ config: BadgeConfig, environment: BadgeEnvironment) throws -> BackendInstance {
        var registry = BackendRegistry()
        RemoteGenerator.register(in: &registry)
        return try registry.makeBackend(named: "remote", in: config, environment: environment)
    }

    /// Runs the pipeline into the store; returns the outcome or the error.
    func run(mode: String, api: String = "openai", options: [String: String] = [:], prompt: String = "A pair of dumbbells")
        async throws -> PipelineOutcome
    {
        let environment = environment()
        let instance = try backend(try config(mode: mode, api: api, options: options), environment: environment)
        return try await Pipeline(environment: environment).run(
            BadgeRequest(prompt: prompt, size: 512, seed: 42), backend: instance,
            commitment: .init(timeZone: TimeZone(identifier: "UTC")!), to: .store(store))
    }

    /// The requests the server received, as it recorded them.
    func received() async throws -> [[String: Any]] {
        let response = try await transport.send(HTTPRequest(url: server.url("/_requests")))
        return (try JSONSerialization.jsonObject(with: response.body) as? [[String: Any]]) ?? []
    }

    var currentBadge: Data { (try? Data(contentsOf: store.badgeURL)) ?? Data() }
}
