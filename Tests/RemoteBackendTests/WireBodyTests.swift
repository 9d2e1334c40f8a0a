import BadgeKit
import BadgeTestSupport
import Foundation
import Testing
@testable import RemoteBackend

/// Every API's request body, byte for byte, against Fixtures/wire/*.json. Those
/// were captured from the code that built the bodies as `[String: Any]` and
/// wrote them with JSONSerialization (commit 4bdbadb); the bodies are the same
/// bytes but in two ways, both in user-supplied objects (a workflow, a
/// template): keys sort by their bytes ("10" before "9", "Z" before "a"), where
/// JSONSerialization sorted digits as numbers and letters ignoring case; and a
/// whole number above Int64.max is written as given, where JSONSerialization
/// wrote it through a Double (18446744073709551615 became 1.8446744073709552e+19).
@Suite(.threadsOfTheirOwn)
struct WireBodyTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/wire")

    /// A prompt with what JSON escapes, a slash it need not, and letters beyond ASCII.
    static let prompt = "A \"quoted\" badge / slash \\ back\nnew\tline \u{1} ctrl é 日本 🏅"
    static let request = BadgeRequest(prompt: prompt, size: 512, seed: 18_446_744_073_709_551_557)
    static let source = SourcePicture(png: Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3, 250]), side: 512, sha256: "")

    static func options(_ members: String, directory: URL = FileManager.default.temporaryDirectory) throws -> RemoteOptions {
        let text = "{\"backends\": {\"r\": {\"type\": \"http\", " + members + "}}}"
        let config = try BadgeConfig.parse(Data(text.utf8), file: directory.appendingPathComponent("c.json").path)
        return try RemoteOptions(try #require(config.backend(named: "r")).options, base: directory)
    }

    func expect(_ body: Data?, is name: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let expected = try String(decoding: Data(contentsOf: Self.fixtures.appendingPathComponent(name + ".json")), as: UTF8.self)
        let body = try #require(body, sourceLocation: sourceLocation)
        #expect(String(decoding: body, as: UTF8.self) == expected, "\(name)", sourceLocation: sourceLocation)
    }

    @Test func openAIGenerationsLeaveUnsetFieldsOut() throws {
        let bare = try Self.options(#""api": "openai", "url": "https://x/v1""#)
        try expect(try OpenAIDialect().makeRequest(Self.request, count: 1, source: nil, options: bare, credentials: []).body, is: "openai-bare")
        let full = try Self.options(#""api": "openai", "url": "https://x/v1", "model": "gpt-image-1", "quality": "high", "background": "opaque", "outputFormat": "webp", "imageSize": "1536x1024""#)
        try expect(try OpenAIDialect().makeRequest(Self.request, count: 3, source: nil, options: full, credentials: []).body, is: "openai-full")
    }

    @Test func automatic1111Txt2ImgAndImg2Img() throws {
        let a1111 = try Self.options(#""api": "automatic1111", "url": "http://x", "negativePrompt": "blurry / bad", "steps": 20, "cfgScale": 7.5, "sampler": "Euler a""#)
        try expect(try Automatic1111Dialect().makeRequest(Self.request, count: 2, source: nil, options: a1111, credentials: []).body, is: "a1111-txt2img")
        let bare = try Self.options(#""api": "automatic1111", "url": "http://x", "cfgScale": 7, "denoisingStrength": 0.35"#)
        try expect(try Automatic1111Dialect().makeRequest(Self.request, count: 1, source: nil, options: bare, credentials: []).body, is: "a1111-txt2img-bare")
        try expect(try Automatic1111Dialect().makeRequest(Self.request, count: 1, source: Self.source, options: bare, credentials: []).body, is: "a1111-img2img")
        var optioned = Self.request
        optioned.options = ["denoising_strength": "0.6"]
        try expect(try Automatic1111Dialect().makeRequest(optioned, count: 1, source: Self.source, options: a1111, credentials: []).body,
                   is: "a1111-img2img-option")
    }

    @Test func rawAndJobsTemplatesKeepTheirNumbers() throws {
        let template = #"{"inputs": "badge: {prompt}!", "parameters": {"width": "{size}", "seed": "{seed}", "steps": 4, "cfg": 7.5, "one": 1.0, "e": 1e3, "big": 18446744073709551615, "neg": -3, "n": null, "t": true, "list": ["{prompt}", "{size}", 0.1, [false]], "Z": 1, "a": 2, "10": 3, "9": 4, "_": 5}}"#
        let raw = try Self.options(#""api": "raw", "url": "https://x/raw", "bodyTemplate": "# + template)
        try expect(try RawDialect().makeRequest(Self.request, count: 1, source: nil, options: raw, credentials: []).body, is: "raw")
        let rawDefault = try Self.options(#""api": "raw", "url": "https://x/raw""#)
        try expect(try RawDialect().makeRequest(Self.request, count: 1, source: nil, options: rawDefault, credentials: []).body, is: "raw-default")
        let jobs = try Self.options(#""api": "jobs", "url": "https://x", "bodyTemplate": {"input": {"prompt": "{prompt}", "seed": "{seed}", "size": "{size}"}}"#)
        try expect(try JobsClient.body(Self.request, options: jobs), is: "jobs")
    }

    @Test func comfyUIPromptInterruptAndDelete() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-wire-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let workflow = #"""
        {"3": {"class_type": "KSampler", "inputs": {"seed": 156680208700286, "steps": 20, "cfg": 7.5, "denoise": 1, "model": ["4", 0], "latent_image": ["5", 0], "positive": ["6", 0]}},
         "4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "v1-5.safetensors"}},
         "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 512, "batch_size": 1}},
         "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "x", "clip": ["4", 1]}},
         "7": {"class_type": "CLIPTextEncode", "inputs": {"text": "neg", "clip": ["4", 1]}},
         "10": {"class_type": "LoadImage", "inputs": {"image": "a.png", "upload": "image"}},
         "12": {"class_type": "Custom", "inputs": {"big": 18446744073709551615, "neg": -12, "f": 0.1, "one": 1.0, "e": 1e3, "small": 2.5e-7, "n": null, "t": true, "f2": false, "s": "a/b", "arr": [1, [2.25, "x"], {}], "obj": {"B": 1, "a": 2, "_z": 3, "Z": 4, "10": 5, "9": 6}}},
         "9": {"class_type": "SaveImage", "inputs": {"filename_prefix": "badge", "images": ["8", 0]}}}
        """#
        let file = directory.appendingPathComponent("wf.json")
        try Data(workflow.utf8).write(to: file)
        var options = try Self.options(#""api": "comfyui", "url": "http://x:8188", "workflow": "\#(file.path)", "inputs": {"prompt": "6.inputs.text", "negativePrompt": "7.inputs.text", "seed": "3.inputs.seed", "width": "5.inputs.width", "height": "5.inputs.height", "image": "10.inputs.image", "denoise": "3.inputs.denoise"}"#, directory: directory)
        options.negativePrompt = "no / text"
        let filled = try #require(options.workflow)
        var values = ComfyClient.values(Self.request, options: options)
        values[.denoise] = .number(0.35)
        values[.image] = .string("badge-source-abc.png")
        try expect(try JSONBody.encode(ComfyPromptRequest(prompt: filled.filled(values), clientID: "client-1", promptID: "prompt-1")), is: "comfy-prompt")
        options.negativePrompt = nil
        let few = ComfyClient.values(BadgeRequest(prompt: "p", size: 256, seed: 42), options: options)
        try expect(try JSONBody.encode(ComfyPromptRequest(prompt: filled.filled(few), clientID: "c", promptID: "p")), is: "comfy-prompt-txt2img")
        try expect(try JSONBody.encode(ComfyInterruptRequest(promptID: "abc-1")), is: "comfy-interrupt")
        try expect(try JSONBody.encode(ComfyDeleteRequest(delete: ["b", "a", "c-9"])), is: "comfy-delete")
    }

    /// Whole numbers are read and written as the digits they are, beyond 2^53 and 2^63 too.
    @Test func wholeNumbersStayExact() throws {
        let text = "[18446744073709551615,-9223372036854775808,9007199254740993,0.5,\"9\",true,null,{\"a\":[]}]"
        let value = try JSONDecoder().decode(JSONNode.Value.self, from: Data(text.utf8))
        #expect(value == [.number(UInt64.max), .number(Int64.min), .number(9_007_199_254_740_993 as Int64), .number(0.5), "9", true, .null, ["a": []]])
        #expect(String(decoding: try JSONBody.encode(value), as: UTF8.self) == text)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(JSONNode.Value.self, from: Data("[1e400]".utf8)) }
    }
}

/// Answers decoded into their types: a field of the wrong type is named in the error.
@Suite(.threadsOfTheirOwn)
struct AnswerDecodingTests {
    static let context = ResponseContext(backend: "remote", url: "http://127.0.0.1:1/v1/images/generations")

    static func response(_ json: String, type: String = "application/json") -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", type)], body: Data(json.utf8))
    }

    static func openAIError(_ json: String) -> BadgeError? {
        #expect(throws: BadgeError.self) { try OpenAIDialect().readImages(response(json), count: 1, context: context) }
    }

    @Test(arguments: [
        (#"{"data": [{"b64_json": 5}]}"#, #"the answer's "data[0].b64_json" is a number, not a string"#),
        (#"{"data": [{"url": ["https://x"]}]}"#, #"the answer's "data[0].url" is an array, not a string"#),
        (#"{"data": [{"b64_json": "aGVsbG8=", "revised_prompt": {"text": "x"}}]}"#, #"the answer's "data[0].revised_prompt" is an object, not a string"#),
        (#"{"data": ["aGVsbG8="]}"#, #"the answer's "data[0]" is a string, not an object"#),
        (#"{"data": {"b64_json": "aGVsbG8="}}"#, #"the answer's "data" is an object, not an array"#),
        (#"{"created": 1}"#, #"the answer has no "data" array"#),
        (#"[{"b64_json": "aGVsbG8="}]"#, "the server's answer is not a JSON object but an array (application/json, 26 bytes)"),
        (#"{"data": [{"b64_json": "aGVsbG8="}"#, "the server's answer is not JSON (application/json, 34 bytes): unexpected end of file: the array opened at line 1, column 10 is not closed at 1:35"),
    ])
    func anOpenAIAnswerOfTheWrongShapeNamesTheField(json: String, message: String) throws {
        let error = try #require(Self.openAIError(json))
        #expect(error.message == message)
        #expect(error.backend == "remote" && error.path == Self.context.url)
        #expect(error.code == .generationFailed)
    }

    @Test func nullFieldsAndFieldsBadgeDoesNotReadAreFine() throws {
        let answer = try OpenAIDialect().readImages(
            Self.response(#"{"created": 1, "data": [{"url": null, "b64_json": "aGVsbG8=", "revised_prompt": null, "extra": [1, {}]}], "usage": {"total_tokens": 3}}"#),
            count: 1, context: Self.context)
        guard case let .bytes(bytes) = answer.first?.image else { Issue.record("no bytes: \(answer)"); return }
        #expect(bytes == Data("hello".utf8) && answer.first?.revisedPrompt == nil)
    }

    @Test func anAutomatic1111AnswerNamesTheImageAndToleratesItsInfo() throws {
        let error = #expect(throws: BadgeError.self) {
            try Automatic1111Dialect().readImages(Self.response(#"{"images": ["aGVsbG8=", 7]}"#), count: 2, context: Self.context)
        }
        #expect(error?.message == #"the answer's "images[1]" is a number, not a string"#)
        // `info` is read for the seeds only when it is a JSON text that says them.
        let infos: [(String, [UInt64?])] = [
            (#""{\"all_seeds\": [7, 8]}""#, [7, 8]), (#"{"all_seeds": [7, 8]}"#, [nil, nil]), (#""{\"all_seeds\": [-1, 8]}""#, [nil, nil]), ("12", [nil, nil]),
        ]
        for (info, seeds) in infos {
            let answers = try Automatic1111Dialect().readImages(
                Self.response(#"{"images": ["aGVsbG8=", "aGVsbG8="], "info": \#(info)}"#), count: 2, context: Self.context)
            #expect(answers.map(\.seed) == seeds, "\(info)")
        }
    }

    @Test func aJobsAnswerNamesItsField() throws {
        let context = ResponseContext(backend: "jobs", url: "http://x/predictions")
        func error(_ json: String) -> String? {
            (#expect(throws: BadgeError.self) { try JSONBody.decode(JobAnswer.self, from: Self.response(json), context: context) })?.message
        }
        #expect(error(#"{"id": "a", "status": 3}"#) == #"the answer's "status" is a number, not a string"#)
        #expect(error(#"{"id": {"x": 1}}"#) == #"the answer's "id" is not valid: expected a string or a whole number"#)
        let numbered = try JSONBody.decode(JobAnswer.self, from: Self.response(#"{"id": 42, "state": "done", "output": {"images": ["https://x/y.png"]}, "error": {"code": 1}}"#), context: context)
        #expect(numbered.id?.text == "42" && numbered.error?.message == nil)
        guard case .succeeded(.url) = try JobsClient.status(of: numbered, context: context) else { Issue.record("a URL in images"); return }
        let failed = try JSONBody.decode(JobAnswer.self, from: Self.response(#"{"job_id": "j", "status": "failed", "error": {"message": "out of memory"}}"#), context: context)
        guard case .failed("out of memory") = try JobsClient.status(of: failed, context: context) else { Issue.record("the error's message"); return }
    }

    @Test func aComfyUIHistoryNamesItsFieldAndReadsOnlyItsRun() throws {
        let context = ResponseContext(backend: "comfy", url: "http://x/history/run-1")
        func decode(_ json: String) throws -> ComfyHistoryAnswer {
            try JSONBody.decode(ComfyHistoryAnswer.self, from: Self.response(json), context: context, userInfo: [ComfyHistoryAnswer.runID: "run-1"])
        }
        let error = #expect(throws: BadgeError.self) {
            try decode(#"{"run-1": {"status": {"status_str": "success", "completed": true}, "outputs": {"9": {"images": [{"filename": 12, "type": "output"}]}}}}"#)
        }
        #expect(error?.message == #"the answer's "run-1.outputs.9.images[0].filename" is a number, not a string"#)
        // Another run's entry is not read, whatever it holds; messages are read only if they can be.
        let run = try #require(try decode(#"""
            {"other": 5, "run-1": {"status": {"status_str": "success", "completed": true, "messages": "?"},
             "outputs": {"10": {"images": [{"filename": "b.png", "subfolder": "", "type": "output"}]}, "9": {"images": [{"filename": "a.png", "subfolder": "s", "type": "temp"}], "text": ["hi"]}}}}
            """#).run)
        #expect(try ComfyClient.result(of: run, context: context) == ComfyClient.ViewTarget(filename: "b.png", subfolder: "", type: "output"))
        #expect(try decode(#"{"other": {}}"#).run == nil)
        let failed = try #require(try decode(#"""
            {"run-1": {"status": {"status_str": "error", "completed": false, "messages": [["execution_start", {}], ["execution_error", {"node_id": 3, "node_type": "KSampler", "exception_message": "CUDA out of memory"}]]}, "outputs": {}}}
            """#).run)
        let failure = #expect(throws: BadgeError.self) { try ComfyClient.result(of: failed, context: context) }
        #expect(failure?.message == "the ComfyUI run failed in node 3 (KSampler): CUDA out of memory")
    }

    @Test func comfyUIPromptAndUploadAnswersNameTheirFields() throws {
        let context = ResponseContext(backend: "comfy", url: "http://x/prompt")
        let prompt = #expect(throws: BadgeError.self) {
            try JSONBody.decode(ComfyPromptAnswer.self, from: Self.response(#"{"prompt_id": 17, "number": 0, "node_errors": {}}"#), context: context)
        }
        #expect(prompt?.message == #"the answer's "prompt_id" is a number, not a string"#)
        let upload = #expect(throws: BadgeError.self) {
            try JSONBody.decode(ComfyUploadAnswer.self, from: Self.response(#"{"name": "a.png", "subfolder": false}"#), context: context)
        }
        #expect(upload?.message == #"the answer's "subfolder" is a boolean, not a string"#)
    }

    /// Best-effort reads: the queue, the error body, /object_info in both of its forms.
    @Test func tolerantReadsKeepWhatTheyCan() throws {
        let queue = try #require(JSONBody.decodeIfValid(ComfyQueueAnswer.self, from: Data(#"""
            {"queue_running": [[0, "a", {}, {"client_id": "me"}, []], [1, 2], []], "queue_pending": "nothing"}
            """#.utf8)))
        #expect(queue.items.running.map(\.id) == ["a", nil, nil] && queue.items.running.first?.clientID == "me" && queue.items.pending.isEmpty)
        func said(_ json: String) -> String? { RemoteGenerator.serverMessage(Self.response(json)) }
        #expect(said(#"{"error": {"message": "Prompt outputs failed validation", "details": "Node ID '#4'"}}"#) == "Prompt outputs failed validation (Node ID '#4')")
        #expect(said(#"{"error": {"code": 3}, "detail": "no such model"}"#) == "no such model")
        #expect(said(#"{"detail": [{"loc": ["body"]}], "message": "invalid"}"#) == "invalid")
        let info = try #require(JSONBody.decodeIfValid(ComfyObjectInfo.self, from: Data(#"""
            {"CheckpointLoaderSimple": {"input": {"required": {"ckpt_name": [["a.safetensors", "b.safetensors"], {}]}}},
             "KSampler": {"input": {"required": {"sampler_name": ["COMBO", {"options": ["euler"]}], "seed": ["INT", {"min": 0}]}, "optional": {"x": 5}}},
             "Broken": "no", "Unasked": {"input": {}}}
            """#.utf8), userInfo: [ComfyObjectInfo.classes: Set(["CheckpointLoaderSimple", "KSampler", "Broken", "Missing"])]))
        #expect(Set(info.classes.keys) == ["CheckpointLoaderSimple", "KSampler"])
        #expect(info.classes["CheckpointLoaderSimple"]?.inputs["ckpt_name"]?.allowed == ["a.safetensors", "b.safetensors"])
        #expect(info.classes["KSampler"]?.inputs["sampler_name"]?.allowed == ["euler"])
        #expect(info.classes["KSampler"]?.inputs["seed"] != nil && info.classes["KSampler"]?.inputs["seed"]?.allowed == nil)
    }
}
