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

    /// A server that closes a kept-alive connection as a POST arrives acts on
    /// the POST and answers nothing. libcurl would send it again by itself,
    /// so the upload and the run would each happen twice; every POST goes on a
    /// connection of its own, and each is received once, as the first request
    /// of its connection. img2img: the upload comes first, then the run.
    @Test func aPostIsNeverSentAgainOnAReusedConnection() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: ComfyUITests.server)
        defer { server.stop() }
        let config = try ComfyUITests.config(s, server, modes: ["drop-on-reuse"])
        let result = try await ComfyUITests.run(s, config, "drop-on-reuse", ["--source", RemoteSourceTests.photo.path])
        #expect(result.status == 0, "\(result.stderr)")
        let requests = try ComfyUITests.received(server, mode: "drop-on-reuse")
        let posts = requests.filter { $0.method == "POST" }
        #expect(posts.map(\.path) == ["/upload/image", "/prompt"], "\(posts.map(\.path))")
        #expect(posts.allSatisfy { $0.connectionRequest == 1 }, "a POST went out on a reused connection: \(posts.map { "\($0.path) #\($0.connectionRequest)" })")
        #expect(requests.contains { $0.method == "GET" && $0.connectionRequest > 1 }, "GETs still reuse their connections")
        #expect(s.badge != nil, "the run's image was committed")
    }

    /// The same server, three candidates (`--choose 3 --pick 2`) and a batch of
    /// four jobs, each with a source picture: as many runs queued as were asked
    /// for, not one more.
    @Test func candidatesAndBatchJobsEachQueueOneRun() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: ComfyUITests.server)
        defer { server.stop() }
        let config = try ComfyUITests.config(s, server, modes: ["drop-on-reuse"])
        // img2img, as the review ran them: each run's upload comes first, on the same connection.
        let photo = RemoteSourceTests.photo.path
        let chosen = try await ComfyUITests.run(s, config, "drop-on-reuse", ["--choose", "3", "--pick", "2", "--source", photo])
        #expect(chosen.status == 0, "\(chosen.stderr)")
        var prompts = try ComfyUITests.received(server, mode: "drop-on-reuse").filter { $0.path == "/prompt" }
        #expect(prompts.count == 3, "--choose 3 queued \(prompts.count) runs")
        let list = s.root.appendingPathComponent("jobs.json")
        let jobs = ["Run", "Swim", "Read", "Cook"].map { #"{"name": "\#($0)", "prompt": "\#($0)", "backend": "drop-on-reuse", "size": 128, "source": "\#(photo)"}"# }
        try Data("[\(jobs.joined(separator: ", "))]".utf8).write(to: list)
        let out = s.root.appendingPathComponent("out")
        let batch = try await s.run(["batch", "--config", config.path, list.path, "--output", out.path], extraEnvironment: ["BADGE_E2E_KEY": ComfyUITests.key])
        #expect(batch.status == 0, "\(batch.stderr)")
        prompts = try ComfyUITests.received(server, mode: "drop-on-reuse").filter { $0.path == "/prompt" }
        #expect(prompts.count == 3 + 4, "the batch of 4 queued \(prompts.count - 3) runs")
        #expect(prompts.allSatisfy { $0.connectionRequest == 1 })
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasSuffix(".png") }.count == 4)
    }

    /// The OpenAI and AUTOMATIC1111 dialects against a server that answers
    /// nothing to a POST on a reused connection: a batch of three jobs each
    /// makes three images, each asked for once, each on a connection of its own.
    @Test func theOtherDialectsPostOnceToo() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: RemoteSourceTests.imageServer)
        defer { server.stop() }
        let config = try RemoteSourceTests.config(s, server, ["drop-on-reuse": #""api": "openai""#, "drop-on-reuse-a1111": #""api": "automatic1111""#])
        for backend in ["drop-on-reuse", "drop-on-reuse-a1111"] {
            let list = s.root.appendingPathComponent("\(backend).json")
            let jobs = ["Run", "Swim", "Read"].map { #"{"name": "\#($0)", "prompt": "\#($0)", "backend": "\#(backend)", "size": 64}"# }
            try Data("[\(jobs.joined(separator: ", "))]".utf8).write(to: list)
            let result = try await s.run(["batch", "--config", config.path, list.path, "--output", s.root.appendingPathComponent("out-\(backend)").path, "--concurrency", "1"],
                                         extraEnvironment: ["BADGE_E2E_KEY": RemoteSourceTests.key])
            #expect(result.status == 0, "\(backend): \(result.stdout) \(result.stderr)")
            let all = try #require(try JSONSerialization.jsonObject(with: try server.get("/_requests")) as? [[String: Any]])
            let posts = all.filter { $0["mode"] as? String == backend }
            #expect(posts.count == 3, "\(backend): \(posts.count) images asked for")
            #expect(posts.allSatisfy { $0["connection_request"] as? Int == 1 }, "\(backend): \(posts.map { $0["connection_request"] ?? "?" })")
        }
    }

    /// Ctrl-C while `--choose 3 --pick 2` waits on its runs is a stop, as it is
    /// for any command: 130, said plainly, each run abandoned, the badge kept.
    @Test func ctrlCDuringChooseAndPickIsAStop() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: ComfyUITests.server)
        defer { server.stop() }
        #expect(try await s.run(["generate", "--size", "64", "first"]).status == 0)
        let before = s.badge
        let config = try ComfyUITests.config(s, server, modes: ["hang"], extra: #", "timeoutSeconds": 600"#)
        let generate = try FirstTenMinutesTests.Watched(try s.start(
            ["generate", "--config", config.path, "--backend", "hang", "--size", "256", "--choose", "3", "--pick", "2", "x"],
            extraEnvironment: ["BADGE_E2E_KEY": ComfyUITests.key]))
        try await waitUntil("the three runs are polled", timeout: .seconds(60)) {
            Set(try ComfyUITests.received(server, mode: "hang").filter { $0.path.hasPrefix("/history/") }.map(\.path)).count == 3
        }
        generate.process.interrupt()
        #expect(generate.finish() == 130, "\(generate.stderr)")
        #expect(generate.stderr.hasSuffix("badge: stopped (Ctrl-C); the current badge is unchanged\n"), "\(generate.stderr)")
        #expect(!generate.stderr.contains("error:"), "\(generate.stderr)")
        let deleted = try ComfyUITests.received(server, mode: "hang").filter { $0.path == "/queue" && $0.method == "POST" }
            .flatMap { $0.body["delete"] as? [String] ?? [] }
        #expect(Set(deleted).count >= 3, "every run is removed: \(deleted)")
        #expect(s.badge == before)
    }

    /// A run that takes 2.6 s, with timeoutSeconds 3: the polls back off to a
    /// second apart, and the one that would come after the deadline is made at
    /// the deadline instead. The run is fetched, never interrupted or deleted.
    @Test func aRunThatFinishesBeforeTheDeadlineIsFetched() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: ComfyUITests.server)
        defer { server.stop() }
        let config = try ComfyUITests.config(s, server, modes: ["slow-run"], extra: #", "timeoutSeconds": 3"#)
        let result = try await ComfyUITests.run(s, config, "slow-run")
        #expect(result.status == 0, "\(result.stderr)")
        let requests = try ComfyUITests.received(server, mode: "slow-run")
        #expect(requests.contains { $0.path == "/view" }, "the image was fetched")
        #expect(!requests.contains { $0.path == "/interrupt" || $0.path == "/queue" }, "\(requests.map(\.path))")
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
