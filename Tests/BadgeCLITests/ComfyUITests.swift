import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// The comfyui dialect through the built binary against a fake ComfyUI
/// (Tests/RemoteBackendTests/Fixtures/fake_comfyui_server.py), with the
/// example workflows of Plugins/Examples/comfyui.
@Suite(.threadsOfTheirOwn)
struct ComfyUITests {
    static let server = Sandbox.repository.appendingPathComponent("Tests/RemoteBackendTests/Fixtures/fake_comfyui_server.py")
    static let examples = Sandbox.repository.appendingPathComponent("Plugins/Examples/comfyui")
    static let key = "sk-e2e-comfy-canary-93a1d"

    struct Received {
        var method: String
        var path: String
        var query: String
        var body: [String: Any]
        var violations: [String]
        /// Which request of its connection it was: 1 for the first.
        var connectionRequest: Int
    }

    static func received(_ server: FixtureServer, mode: String) throws -> [Received] {
        let all = try #require(try JSONSerialization.jsonObject(with: try server.get("/_requests")) as? [[String: Any]])
        return all.filter { $0["mode"] as? String == mode }.map {
            Received(method: $0["method"] as? String ?? "", path: $0["path"] as? String ?? "", query: $0["query"] as? String ?? "",
                     body: $0["body"] as? [String: Any] ?? [:], violations: $0["violations"] as? [String] ?? ["no violations list"],
                     connectionRequest: $0["connection_request"] as? Int ?? 0)
        }
    }

    /// A config with one comfyui backend per mode, as config.example.json has it.
    static func config(_ s: Sandbox, _ server: FixtureServer, modes: [String], extra: String = "") throws -> URL {
        let backends = modes.map { mode in
            #"""
            "\#(mode)": {"type": "http", "api": "comfyui", "url": "http://127.0.0.1:\#(server.port)/\#(mode)", "apiKeyEnv": "BADGE_E2E_KEY",
              "workflow": "\#(examples.path)/txt2img-sd15.json",
              "inputs": {"prompt": "6.inputs.text", "negativePrompt": "7.inputs.text", "seed": "3.inputs.seed", "width": "5.inputs.width", "height": "5.inputs.height"},
              "img2imgWorkflow": "\#(examples.path)/img2img-sd15.json",
              "img2imgInputs": {"prompt": "6.inputs.text", "seed": "3.inputs.seed", "image": "10.inputs.image", "denoise": "3.inputs.denoise"},
              "negativePrompt": "blurry, text"\#(extra.contains("retries") ? "" : #", "retries": 2"#)\#(extra)}
            """#
        }
        let url = s.root.appendingPathComponent("comfy.json")
        try Data("{\"backends\": {\(backends.joined(separator: ",\n"))}}".utf8).write(to: url)
        return url
    }

    static func run(_ s: Sandbox, _ config: URL, _ mode: String, _ more: [String] = [], prompt: String = "Make it a badge") async throws -> Sandbox.Result {
        try await s.run(["generate", "--config", config.path, "--backend", mode, "--size", "256", "--seed", "42", "--verbose"] + more + [prompt],
                        extraEnvironment: ["BADGE_E2E_KEY": key])
    }

    @Test func aWorkflowIsFilledQueuedFollowedAndItsImageFetched() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.server)
        defer { server.stop() }
        let config = try Self.config(s, server, modes: ["ok"])
        let result = try await Self.run(s, config, "ok")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains(Self.key) && !result.stdout.contains(Self.key))
        let requests = try Self.received(server, mode: "ok")
        #expect(requests.map { "\($0.method) \($0.path)" }.first == "POST /prompt")
        #expect(requests.filter { $0.path.hasPrefix("/history/") }.count == 3)
        #expect(requests.last.map { "\($0.method) \($0.path)" } == "GET /view")
        #expect(requests.last?.query == "filename=badge_00001_.png&subfolder=&type=output")
        // Not abandoned: nothing interrupted or deleted.
        #expect(!requests.contains { $0.path == "/interrupt" || ($0.method == "POST" && $0.path == "/queue") })
        let queued = try #require(requests.first)
        #expect(queued.violations.isEmpty, "\(queued.violations)")
        let workflow = try #require(queued.body["prompt"] as? [String: [String: Any]])
        func input(_ node: String, _ name: String) -> Any? { (workflow[node]?["inputs"] as? [String: Any])?[name] }
        #expect(input("6", "text") as? String == "Make it a badge")
        #expect(input("7", "text") as? String == "blurry, text")
        #expect(input("3", "seed") as? Int == 42)
        #expect(input("5", "width") as? Int == 256 && input("5", "height") as? Int == 256)
        #expect(input("3", "denoise") as? Int == 1, "the workflow's own value stays")
        #expect((queued.body["client_id"] as? String)?.isEmpty == false)
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        #expect(metadata.backend == "ok" && metadata.model == "v1-5-pruned-emaonly.safetensors" && metadata.seed == 42)
        #expect(metadata.extra["api"] == "comfyui" && metadata.extra["source-sha256"] == nil)
    }

    @Test func aSourcePictureIsUploadedFirstAndTheImg2ImgWorkflowUsed() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.server)
        defer { server.stop() }
        let config = try Self.config(s, server, modes: ["ok"])
        let photo = RemoteSourceTests.photo
        let result = try await Self.run(s, config, "ok", ["--source", photo.path, "--option", "denoising_strength=0.35"])
        #expect(result.status == 0, "\(result.stderr)")
        let requests = try Self.received(server, mode: "ok")
        let upload = try #require(requests.first)
        #expect(upload.method == "POST" && upload.path == "/upload/image" && upload.violations.isEmpty)
        #expect(upload.body["type"] as? String == "input" && upload.body["overwrite"] == nil, "an upload never overwrites")
        let image = try #require(upload.body["image"] as? [String: Any])
        #expect(image["content_type"] as? String == "image/png")
        try RemoteSourceTests.checkUpload(try #require(Data(base64Encoded: image["b64"] as? String ?? "")), side: 256)
        let queued = try #require(requests.dropFirst().first)
        #expect(queued.path == "/prompt" && queued.violations.isEmpty, "\(queued.violations)")
        let workflow = try #require(queued.body["prompt"] as? [String: [String: Any]])
        #expect((workflow["10"]?["inputs"] as? [String: Any])?["image"] as? String == image["filename"] as? String)
        #expect((workflow["3"]?["inputs"] as? [String: Any])?["denoise"] as? Double == 0.35)
        #expect(workflow["5"] == nil, "the img2img workflow was sent")
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        #expect(metadata.extra["source-sha256"] == (try RemoteSourceTests.sha256(photo)))
    }

    @Test func theServersRefusalsAndFaultsAreClearErrors() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.server)
        defer { server.stop() }
        let modes = ["node-errors", "exec-error", "view-escape", "view-temp", "html-200", "truncated", "huge", "retry-after", "flaky503", "echo-key"]
        let config = try Self.config(s, server, modes: modes, extra: #", "maxResponseBytes": 1048576"#)
        var results: [String: Sandbox.Result] = [:]
        for mode in modes { results[mode] = try await Self.run(s, config, mode) }
        func stderr(_ mode: String) -> String { results[mode]?.stderr ?? "" }

        #expect(results["node-errors"]?.status == 1)
        #expect(stderr("node-errors").contains(#"node 4 (CheckpointLoaderSimple), input "ckpt_name": Value not in list"#), "\(stderr("node-errors"))")
        #expect(stderr("exec-error").contains("in node 3 (KSampler): CUDA out of memory"), "\(stderr("exec-error"))")
        #expect(stderr("view-temp").contains("made only a preview") && stderr("view-temp").contains("use a SaveImage node"), "\(stderr("view-temp"))")
        for mode in ["view-escape", "view-temp"] {
            #expect(results[mode]?.status == 1, "\(stderr(mode))")
            #expect(mode == "view-temp" || stderr(mode).contains("outside its output folder"), "\(stderr(mode))")
            #expect(try !Self.received(server, mode: mode).contains { $0.path == "/view" }, "\(mode) fetched /view")
        }
        #expect(stderr("html-200").contains("the server's answer is a web page"), "\(stderr("html-200"))")
        #expect(results["truncated"]?.status == 1, "\(stderr("truncated"))")
        #expect(stderr("huge").contains("larger than 1048576 bytes"), "\(stderr("huge"))")
        for mode in ["retry-after", "flaky503"] {
            #expect(results[mode]?.status == 0, "\(stderr(mode))")
            #expect(try Self.received(server, mode: mode).filter { $0.path == "/prompt" }.count == (mode == "retry-after" ? 2 : 3))
        }
        #expect(results["echo-key"]?.status == 1 && stderr("echo-key").contains("HTTP 401") && stderr("echo-key").contains("********"),
                "\(stderr("echo-key"))")
        for (mode, result) in results {
            #expect(!result.stderr.contains(Self.key) && !result.stdout.contains(Self.key), "\(mode) printed the key")
        }
        // Nothing was committed by the failures; the last success is the badge.
        #expect(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png"))?.backend == "flaky503")
    }

    /// The deadline and Ctrl-C: a run that is executing is interrupted, and every abandoned run leaves the queue.
    @Test func anAbandonedRunIsInterruptedAndRemovedFromTheQueue() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.server)
        defer { server.stop() }
        let config = try Self.config(s, server, modes: ["hang", "pending", "hang-prompt"], extra: #", "timeoutSeconds": 1, "retries": 0"#)
        // A server that never answers the queueing: the request's own time limit ends it.
        let silent = try await Self.run(s, config, "hang-prompt")
        #expect(silent.status == 1 && silent.stderr.contains("no answer within the time limit"), "\(silent.stderr)")
        for mode in ["hang", "pending"] {
            let result = try await Self.run(s, config, mode)
            #expect(result.status == 1 && result.stderr.contains("did not finish within"), "\(result.stderr)")
            let requests = try Self.received(server, mode: mode)
            let id = try #require(requests.first { $0.path.hasPrefix("/history/") }?.path.dropFirst("/history/".count)).description
            let delete = requests.first { $0.method == "POST" && $0.path == "/queue" }
            #expect(delete?.body["delete"] as? [String] == [id], "\(mode)")
            let interrupt = requests.first { $0.path == "/interrupt" }
            // Only the run that is executing is interrupted; a pending one is only removed.
            #expect((interrupt != nil) == (mode == "hang"), "\(mode)")
            #expect(interrupt.map { $0.body["prompt_id"] as? String == id } ?? true)
        }

        let long = try Self.config(s, server, modes: ["hang"], extra: #", "timeoutSeconds": 600"#)
        let generate = try FirstTenMinutesTests.Watched(try s.start(
            ["generate", "--config", long.path, "--backend", "hang", "--size", "256", "x"], extraEnvironment: ["BADGE_E2E_KEY": Self.key]))
        let before = try Self.received(server, mode: "hang").count
        // Polling has begun once the server has been asked about the new run.
        try await waitUntil("the run's history is polled", timeout: .seconds(60)) {
            try Self.received(server, mode: "hang").dropFirst(before).contains { $0.path.hasPrefix("/history/") }
        }
        generate.process.interrupt()
        #expect(generate.finish() == 130, "\(generate.stderr)")
        let after = try Self.received(server, mode: "hang").dropFirst(before)
        #expect(after.contains { $0.path == "/interrupt" } && after.contains { $0.method == "POST" && $0.path == "/queue" }, "\(after.map(\.path))")
    }

    @Test func workflowsAndMappingsAreCheckedWithTheConfig() async throws {
        let s = try Sandbox()
        let ui = s.root.appendingPathComponent("ui.json")
        try Data(#"{"last_node_id": 9, "last_link_id": 9, "nodes": [{"id": 3, "type": "KSampler"}], "links": [[1, 4, 0, 3, 0, "MODEL"]], "version": 0.4}"#.utf8).write(to: ui)
        func validate(workflow: String, inputs: String) async throws -> Sandbox.Result {
            let config = s.root.appendingPathComponent("c.json")
            try Data(#"{"backends": {"comfy": {"type": "http", "api": "comfyui", "url": "http://127.0.0.1:8188", "workflow": "\#(workflow)", "inputs": \#(inputs)}}}"#.utf8).write(to: config)
            return try await s.run(["config", "validate", config.path])
        }
        let txt2img = Self.examples.appendingPathComponent("txt2img-sd15.json").path
        let good = try await validate(workflow: txt2img, inputs: #"{"prompt": "6.inputs.text"}"#)
        #expect(good.status == 0, "\(good.stderr)")
        #expect(!good.stderr.contains("SaveImage"), "\(good.stderr)")
        // A workflow with a PreviewImage and no SaveImage is valid, with a warning.
        var previewOnly = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: txt2img))) as? [String: Any])
        previewOnly["9"] = ["class_type": "PreviewImage", "inputs": ["images": ["8", 0]]]
        let preview = s.root.appendingPathComponent("preview-only.json")
        try JSONSerialization.data(withJSONObject: previewOnly).write(to: preview)
        let warned = try await validate(workflow: preview.path, inputs: #"{"prompt": "6.inputs.text"}"#)
        #expect(warned.status == 0, "\(warned.stderr)")
        #expect(warned.stderr.contains("warning: backend \"comfy\": the workflow \(preview.path) has no SaveImage node"), "\(warned.stderr)")
        let uiFormat = try await validate(workflow: ui.path, inputs: #"{"prompt": "6.inputs.text"}"#)
        #expect(uiFormat.status == 1 && uiFormat.stderr.contains("UI format") && uiFormat.stderr.contains("Export (API)"), "\(uiFormat.stderr)")
        let noNode = try await validate(workflow: txt2img, inputs: #"{"prompt": "12.inputs.text"}"#)
        #expect(noNode.status == 1 && noNode.stderr.contains(#"no node "12""#) && noNode.stderr.contains("3, 4, 5, 6, 7, 8, 9"), "\(noNode.stderr)")
        let noInput = try await validate(workflow: txt2img, inputs: #"{"prompt": "6.inputs.txt"}"#)
        #expect(noInput.status == 1 && noInput.stderr.contains(#"node "6" (CLIPTextEncode)"#) && noInput.stderr.contains("clip, text"), "\(noInput.stderr)")
        let noPrompt = try await validate(workflow: txt2img, inputs: #"{"seed": "3.inputs.seed"}"#)
        #expect(noPrompt.status == 1 && noPrompt.stderr.contains("where the prompt goes"), "\(noPrompt.stderr)")
        let unknown = try await validate(workflow: txt2img, inputs: #"{"prompt": "6.inputs.text", "steps": "3.inputs.steps"}"#)
        #expect(unknown.status == 1 && unknown.stderr.contains("steps"), "\(unknown.stderr)")
    }

    /// The fake checks each workflow against a real server's node classes and inputs
    /// (Tests/Data/comfyui/object_info.json) and refuses, as ComfyUI does, one that
    /// names a class it lacks, leaves out a required input, gives a value that is
    /// not of its type or range, or links an output of the wrong type; and one with
    /// an input its class does not have, which ComfyUI would drop unsaid. Nothing
    /// of a refused workflow is queued.
    @Test func theFakeRefusesAWorkflowARealServerWouldRefuse() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.server)
        defer { server.stop() }
        let txt2img = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.examples.appendingPathComponent("txt2img-sd15.json")))
            as? [String: [String: Any]])
        func broken(_ name: String, _ change: (inout [String: [String: Any]]) -> Void) async throws -> Sandbox.Result {
            var workflow = txt2img
            change(&workflow)
            let file = s.root.appendingPathComponent("\(name).json")
            try JSONSerialization.data(withJSONObject: workflow).write(to: file)
            let config = s.root.appendingPathComponent("\(name)-config.json")
            try Data(#"""
                {"backends": {"\#(name)": {"type": "http", "api": "comfyui", "url": "http://127.0.0.1:\#(server.port)/\#(name)", "retries": 0,
                  "workflow": "\#(file.path)", "inputs": {"prompt": "6.inputs.text", "seed": "3.inputs.seed"}}}}
                """#.utf8).write(to: config)
            return try await Self.run(s, config, name)
        }
        func set(_ workflow: inout [String: [String: Any]], _ node: String, _ input: String, _ value: Any?) {
            var inputs = workflow[node]?["inputs"] as? [String: Any] ?? [:]
            inputs[input] = value
            workflow[node]?["inputs"] = inputs
        }

        let noClass = try await broken("no-class") { $0["3"]?["class_type"] = "KSamplerPlus" }
        #expect(noClass.status == 1)
        // ComfyUI names the node by its title (_meta.title) when it has one.
        #expect(noClass.stderr.contains("HTTP 400: Node 'KSampler' not found. The custom node may not be installed. (Node ID '#3')"), "\(noClass.stderr)")

        let missing = try await broken("missing-input") { set(&$0, "3", "steps", nil) }
        #expect(missing.status == 1)
        #expect(missing.stderr.contains(#"ComfyUI refused the workflow: Prompt outputs failed validation: node 3 (KSampler), input "steps": Required input is missing: steps"#),
                "\(missing.stderr)")

        let unknown = try await broken("unknown-input") { set(&$0, "5", "batch", 2) }
        #expect(unknown.stderr.contains(#"node 5 (EmptyLatentImage), input "batch": Input is not one of the node's inputs: batch"#), "\(unknown.stderr)")

        let illTyped = try await broken("ill-typed") {
            set(&$0, "3", "cfg", "high")
            set(&$0, "5", "width", 8)
            set(&$0, "8", "vae", ["4", 0])
        }
        for said in [#"node 3 (KSampler), input "cfg": Failed to convert an input value to a FLOAT value: cfg, high"#,
                     #"node 5 (EmptyLatentImage), input "width": Value 8 smaller than min of 16: width"#,
                     #"node 8 (VAEDecode), input "vae": Return type mismatch between linked nodes: vae, received_type(MODEL) mismatch input_type(VAE)"#] {
            #expect(illTyped.stderr.contains(said), "\(said) not in \(illTyped.stderr)")
        }
        // The server lists what it has when the list is short, and counts it when it is long.
        let notInList = try await broken("not-in-list") {
            set(&$0, "3", "sampler_name", "eulr")
            set(&$0, "3", "scheduler", "normle")
        }
        for said in [#"node 3 (KSampler), input "sampler_name": Value not in list: sampler_name: 'eulr' not in (list of length 44)"#,
                     #"node 3 (KSampler), input "scheduler": Value not in list: scheduler: 'normle' not in ['simple', 'sgm_uniform', "#] {
            #expect(notInList.stderr.contains(said), "\(said) not in \(notInList.stderr)")
        }
        for mode in ["no-class", "missing-input", "unknown-input", "ill-typed", "not-in-list"] {
            let requests = try Self.received(server, mode: mode)
            #expect(requests.count == 1 && requests.first?.path == "/prompt", "\(mode): \(requests.map(\.path))")
        }
    }

    @Test func aRefusedSourceIsNeverUploaded() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.server)
        defer { server.stop() }
        let config = try Self.config(s, server, modes: ["ok"])
        let text = s.root.appendingPathComponent("photo.jpg")
        try Data("GIF89a, or so it says".utf8).write(to: text)
        let refused = try await Self.run(s, config, "ok", ["--source", text.path])
        #expect(refused.status != 0 && refused.stderr.contains(text.path), "\(refused.stderr)")
        #expect(try Self.received(server, mode: "ok").isEmpty)
    }

    @Test func probeAsksSystemStatsAndNamesMissingCheckpoints() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.server)
        defer { server.stop() }
        let config = try Self.config(s, server, modes: ["ok", "probe-combo", "probe-missing", "probe-no-models", "probe-no-class", "not-comfyui"])
        let result = try await s.run(["backends", "--probe", "--json", "--config", config.path], extraEnvironment: ["BADGE_E2E_KEY": Self.key])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        func row(_ name: String) -> [String: Any] { rows.first { $0["name"] as? String == name } ?? [:] }
        #expect(row("ok")["available"] as? Bool == true, "\(row("ok"))")
        #expect(row("probe-combo")["available"] as? Bool == true, "\(row("probe-combo"))")
        #expect(row("probe-missing")["available"] as? Bool == false)
        #expect((row("probe-missing")["reason"] as? String)?.contains("v1-5-pruned-emaonly.safetensors") == true, "\(row("probe-missing"))")
        #expect((row("probe-missing")["hint"] as? String)?.contains("sd_xl_base_1.0.safetensors") == true, "\(row("probe-missing"))")
        // A server with no checkpoint at all offers none to name.
        #expect(row("probe-no-models")["available"] as? Bool == false)
        #expect((row("probe-no-models")["reason"] as? String)?.contains("sets ckpt_name to \"v1-5-pruned-emaonly.safetensors\"") == true,
                "\(row("probe-no-models"))")
        #expect((row("probe-no-models")["hint"] as? String)?.contains("the server has") == false, "\(row("probe-no-models"))")
        #expect((row("not-comfyui")["reason"] as? String)?.contains("system_stats") == true, "\(row("not-comfyui"))")
        // A node class the server lacks is named with its node; inputs badge fills (LoadImage's image) are not checked.
        #expect(row("probe-no-class")["available"] as? Bool == false)
        #expect((row("probe-no-class")["reason"] as? String)?.contains("img2img-sd15.json node 3 is a KSampler, a node class this server does not have") == true,
                "\(row("probe-no-class"))")
        #expect(try Self.received(server, mode: "ok").map(\.path) == ["/system_stats", "/object_info"], "one /object_info for both workflows")
    }

    /// Eight backends of one server (as a config with a backend per workflow
    /// has them) are probed with one `/object_info`: it can be megabytes.
    /// Another key is another fetch: what a server describes may depend on who asks.
    @Test func eightBackendsOfOneServerFetchItsNodesOnce() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.server)
        defer { server.stop() }
        let one = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: try Self.config(s, server, modes: ["ok"]))) as? [String: Any])
        let backend = try #require((one["backends"] as? [String: Any])?["ok"] as? [String: Any])
        var backends = Dictionary(uniqueKeysWithValues: (1...8).map { ("b\($0)", backend) })
        backends["second"] = backend.merging(["apiKeyEnv": "BADGE_OTHER_KEY"]) { $1 }
        let config = s.root.appendingPathComponent("eight.json")
        try JSONSerialization.data(withJSONObject: ["backends": backends]).write(to: config)
        let result = try await s.run(["backends", "--probe", "--json", "--config", config.path],
                                     extraEnvironment: ["BADGE_E2E_KEY": Self.key, "BADGE_OTHER_KEY": "sk-7d1f0c93e2a4b6"])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        let ours = rows.filter { backends[$0["name"] as? String ?? ""] != nil }
        #expect(ours.count == 9 && ours.allSatisfy { $0["available"] as? Bool == true }, "\(result.stdout)")
        let paths = try Self.received(server, mode: "ok").map(\.path)
        #expect(paths.filter { $0 == "/system_stats" }.count == 9)
        #expect(paths.filter { $0 == "/object_info" }.count == 2, "one /object_info per key, not per backend: \(paths)")
    }
}
