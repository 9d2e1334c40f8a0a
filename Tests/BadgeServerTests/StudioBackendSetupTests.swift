import BadgeKit
@testable import BadgeServer
import BadgeTestSupport
import Foundation
import Synchronization
import Testing

/// The studio sets each configured backend up once for the server's life:
/// a ComfyUI workflow is read, and an exec plugin's availability remembered,
/// once, not for every request. A backend that could not be set up is tried
/// again, and says why again.
@Suite(.threadsOfTheirOwn)
struct StudioBackendSetupTests {
    /// Counts how often the registry's factory ran; refuses while `failing` is set.
    final class Setups: Sendable {
        let count = Mutex(0)
        let failing = Mutex(false)
    }

    struct CountedGenerator: BadgeGenerator {
        var styles: [String]? { [] }
        func availability() async -> Availability { .available }
        func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
            throw BadgeError(.generationFailed, "not asked to draw here")
        }
    }

    static func studio(_ setups: Setups, in directory: URL) throws -> Studio {
        var registry = BackendRegistry()
        registry.register("counted", summary: "counts its set-ups") { _, _ in
            setups.count.withLock { $0 += 1 }
            if setups.failing.withLock({ $0 }) { throw BadgeError(.config, "the workflow file is missing") }
            return CountedGenerator()
        }
        let config = try BadgeConfig.parse(Data(#"{"backends": {"c": {"type": "counted"}}, "defaults": {"backend": "c", "size": 64}}"#.utf8),
                                           file: "config.json")
        let store = BadgeStore(directory: directory.appendingPathComponent("store"))
        return Studio(context: ServeContext(config: config, environment: BadgeEnvironment(), registry: registry, store: store), maxJobs: 4)
    }

    @Test func aBackendIsSetUpOnceForAllRequests() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-studio-setup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let setups = Setups()
        let studio = try Self.studio(setups, in: directory)
        for _ in 0..<3 {
            let views = await studio.backends()
            #expect(views.first { $0.name == "c" }?.available == true, "\(views)")
        }
        #expect(setups.count.withLock { $0 } == 1)
    }

    @Test func aBackendThatCouldNotBeSetUpIsTriedAgain() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-studio-setup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let setups = Setups()
        setups.failing.withLock { $0 = true }
        let studio = try Self.studio(setups, in: directory)
        let refused = await studio.backends().first { $0.name == "c" }
        #expect(refused?.available == false && refused?.reason == "the workflow file is missing", "\(String(describing: refused))")
        setups.failing.withLock { $0 = false }
        let fixed = await studio.backends().first { $0.name == "c" }
        #expect(fixed?.available == true, "\(String(describing: fixed))")
        _ = await studio.backends()
        #expect(setups.count.withLock { $0 } == 2)
    }
}
