import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// Issue #31, section 4: ComfyUI as a real server behaves. A run is never
/// queued twice, a 200 with node_errors leaves nothing queued, and one
/// picture uploaded at two sizes is two files, each job loading its own.
@Suite(.threadsOfTheirOwn)
struct ComfyUIQueueTests {
    /// The connection drops after the server queued the run: badge looks its own
    /// prompt_id up instead of sending the workflow again, and exactly one job runs.
    @Test func aLostAnswerToPostPromptIsLookedUpNotSentAgain() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: ComfyUITests.server)
        defer { server.stop() }
        let config = try ComfyUITests.config(s, server, modes: ["drop-after-queue"])
        let result = try await ComfyUITests.run(s, config, "drop-after-queue")
        #expect(result.status == 0, "\(result.stderr)")
        let requests = try ComfyUITests.received(server, mode: "drop-after-queue")
        let posts = requests.filter { $0.method == "POST" && $0.path == "/prompt" }
        #expect(posts.count == 1, "the workflow was queued \(posts.count) times")
        let promptID = try #require(posts.first?.body["prompt_id"] as? String, "badge names the run itself")
        #expect(posts.first?.body["client_id"] as? String != nil)
        #expect(requests.contains { $0.method == "GET" && $0.path == "/history/\(promptID)" })
        #expect(result.stderr.contains("the answer to POST /prompt was lost, but the run is queued"), "\(result.stderr)")
    }

    /// A 200 whose node_errors is not empty queued the valid outputs anyway: badge deletes that run, then reports the errors.
    @Test func aQueuedRunWithNodeErrorsIsDeletedThenReported() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: ComfyUITests.server)
        defer { server.stop() }
        let before = try await s.run(["generate", "--size", "64", "first"])
        #expect(before.status == 0)
        let config = try ComfyUITests.config(s, server, modes: ["node-errors-200"])
        let result = try await ComfyUITests.run(s, config, "node-errors-200")
        #expect(result.status == 1)
        #expect(result.stderr.contains("Value not in list") || result.stderr.contains("upscale_model"), "\(result.stderr)")
        let requests = try ComfyUITests.received(server, mode: "node-errors-200")
        let promptID = try #require(requests.first { $0.path == "/prompt" }?.body["prompt_id"] as? String)
        let deletes = requests.filter { $0.method == "POST" && $0.path == "/queue" }
        #expect(deletes.contains { ($0.body["delete"] as? [String])?.contains(promptID) == true }, "the queued run was not deleted: \(deletes.map(\.body))")
        #expect(!requests.contains { $0.path.hasPrefix("/history/") }, "a run with node errors is not followed")
    }

    /// One picture at two sizes: two uploads under names of their bytes, never
    /// overwriting, and each job loads the name the server answered for its own.
    @Test func onePictureAtTwoSizesIsTwoUploadsEachJobLoadingItsOwn() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: ComfyUITests.server)
        defer { server.stop() }
        let config = try ComfyUITests.config(s, server, modes: ["upload-rename"])
        let photo = RemoteSourceTests.photo
        for size in ["256", "128"] {
            let result = try await s.run(["generate", "--config", config.path, "--backend", "upload-rename", "--size", size, "--seed", "1",
                                          "--source", photo.path, "Make it a badge"], extraEnvironment: ["BADGE_E2E_KEY": ComfyUITests.key])
            #expect(result.status == 0, "\(result.stderr)")
        }
        let requests = try ComfyUITests.received(server, mode: "upload-rename")
        let uploads = requests.filter { $0.path == "/upload/image" }
        let names = uploads.compactMap { ($0.body["image"] as? [String: Any])?["filename"] as? String }
        #expect(names.count == 2 && Set(names).count == 2, "two sizes, two names: \(names)")
        #expect(uploads.allSatisfy { $0.body["overwrite"] == nil })
        let loaded = requests.filter { $0.path == "/prompt" }.compactMap {
            (($0.body["prompt"] as? [String: [String: Any]])?["10"]?["inputs"] as? [String: Any])?["image"] as? String
        }
        #expect(loaded == names.map { "server-" + $0 }, "each job loads the server's name for its own upload: \(loaded) vs \(names)")
    }
}

extension ComfyUIQueueTests {
    /// On cancel (here the deadline), every queue item that carries this run's
    /// client_id goes, a copy queued earlier included; another client's stays.
    @Test func everyQueueItemOfThisRunsClientIsRemoved() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: ComfyUITests.server)
        defer { server.stop() }
        let config = try ComfyUITests.config(s, server, modes: ["pending-copies"], extra: #", "timeoutSeconds": 1, "retries": 0"#)
        let result = try await ComfyUITests.run(s, config, "pending-copies")
        #expect(result.status == 1 && result.stderr.contains("did not finish within"), "\(result.stderr)")
        let requests = try ComfyUITests.received(server, mode: "pending-copies")
        let id = try #require(requests.first { $0.path == "/prompt" }?.body["prompt_id"] as? String)
        let deleted = requests.filter { $0.method == "POST" && $0.path == "/queue" }.flatMap { $0.body["delete"] as? [String] ?? [] }
        #expect(Set(deleted) == [id, "copy-" + id], "\(deleted)")
    }

    /// A class the server lacks: its 400 names the node in `details`, which the error carries.
    @Test func aMissingClassIsReportedWithItsNode() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: ComfyUITests.server)
        defer { server.stop() }
        let config = try ComfyUITests.config(s, server, modes: ["missing-class"], extra: #", "retries": 0"#)
        let result = try await ComfyUITests.run(s, config, "missing-class")
        #expect(result.status == 1)
        #expect(result.stderr.contains("HTTP 400: Node 'KSampler' not found. The custom node may not be installed. (Node ID '#3')"), "\(result.stderr)")
    }
}
