import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Testing

/// `--source` with http backends, through the built binary against the fake
/// image server: what leaves the machine is the picture's pixels alone, turned
/// as its EXIF says, at most at the model's size, and the badge keeps the
/// picture's sha256, never its path.
@Suite(.threadsOfTheirOwn)
struct RemoteSourceTests {
    static let imageServer = Sandbox.repository.appendingPathComponent("Tests/RemoteBackendTests/Fixtures/fake_image_server.py")
    /// 300×200 as stored, red left and blue right; EXIF orientation 6 (red on top when shown) and a GPS position.
    static let photo = Sandbox.repository.appendingPathComponent("Tests/Data/exif/gps-rotated.jpg")
    static let key = "sk-e2e-source-canary-51c0ffee"

    struct Received {
        var path: String
        var body: [String: Any]
        var violations: [String]
    }

    static func received(_ server: FixtureServer, mode: String) throws -> [Received] {
        let data = try server.get("/_requests")
        let all = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        return all.filter { $0["mode"] as? String == mode }.map {
            Received(path: $0["path"] as? String ?? "", body: $0["body"] as? [String: Any] ?? [:],
                     violations: $0["violations"] as? [String] ?? ["no violations list"])
        }
    }

    static func config(_ s: Sandbox, _ server: FixtureServer, _ backends: [String: String]) throws -> URL {
        let url = s.root.appendingPathComponent("remote.json")
        let members = backends.sorted { $0.key < $1.key }.map { name, body in
            #""\#(name)": {"type": "http", "url": "http://127.0.0.1:\#(server.port)/\#(name)\#(body.contains("openai") ? "/v1" : "")", "apiKeyEnv": "BADGE_E2E_KEY", \#(body.contains("retries") ? "" : "\"retries\": 0, ")\#(body)}"#
        }
        try Data("{\"backends\": {\(members.joined(separator: ", "))}}".utf8).write(to: url)
        return url
    }

    /// The uploaded picture: a PNG of `side`, no EXIF, no GPS, no text, turned as the EXIF said.
    static func checkUpload(_ png: Data, side: Int) throws {
        #expect(PNG.hasSignature(png))
        let chunks = try PNG.chunks(in: png)
        let types = Set(chunks.map(\.type))
        #expect(types.isSubset(of: ["IHDR", "PLTE", "tRNS", "IDAT", "IEND", "sRGB", "gAMA", "pHYs"]), "unexpected chunks \(types)")
        #expect(png.range(of: Data("Exif".utf8)) == nil && png.range(of: Data("GPS".utf8)) == nil)
        let image = try GDImage.decodePNG(png)
        #expect(image.width == side && image.height == side)
        // Orientation 6 applied: red on top, blue below.
        let top = image.pixel(side / 2, side / 8)
        let bottom = image.pixel(side / 2, side - side / 8)
        #expect(top.r > 200 && top.b < 60, "top is \(top)")
        #expect(bottom.b > 200 && bottom.r < 60, "bottom is \(bottom)")
    }

    static func sha256(_ url: URL) throws -> String {
        try BatchHash.sha256(Data(contentsOf: url))
    }

    @Test func anOpenAIBackendEditsTheSourcePicture() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.imageServer)
        defer { server.stop() }
        let config = try Self.config(s, server, ["ok": #""api": "openai", "model": "gpt-image-1", "imageSize": "1024x1024", "quality": "high", "background": "opaque", "outputFormat": "png""#])
        let result = try await s.run(["generate", "--config", config.path, "--backend", "ok", "--source", Self.photo.path, "--size", "512", "--verbose",
                                      "Make it a badge"], extraEnvironment: ["BADGE_E2E_KEY": Self.key])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains(Self.key) && !result.stdout.contains(Self.key))
        let requests = try Self.received(server, mode: "ok")
        let edit = try #require(requests.first)
        #expect(requests.count == 1)
        #expect(edit.path == "/ok/v1/images/edits")
        #expect(edit.violations.isEmpty, "\(edit.violations)")
        #expect(edit.body["prompt"] as? String == "Make it a badge")
        #expect(edit.body["model"] as? String == "gpt-image-1" && edit.body["n"] as? String == "1" && edit.body["size"] as? String == "1024x1024")
        #expect(edit.body["quality"] as? String == "high" && edit.body["background"] as? String == "opaque" && edit.body["output_format"] as? String == "png")
        let image = try #require(edit.body["image"] as? [String: Any])
        #expect(image["content_type"] as? String == "image/png")
        let png = try #require(Data(base64Encoded: image["b64"] as? String ?? ""))
        try Self.checkUpload(png, side: 512)

        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        #expect(metadata.extra["source-sha256"] == (try Self.sha256(Self.photo)))
        let stored = try Data(contentsOf: s.store.appendingPathComponent("badge.png"))
        #expect(stored.range(of: Data("gps-rotated".utf8)) == nil && stored.range(of: Data(s.root.path.utf8)) == nil)
    }

    @Test func theUploadIsNeverLargerThanTheModelsSize() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.imageServer)
        defer { server.stop() }
        let config = try Self.config(s, server, ["ok": #""api": "openai", "imageSize": "256x256""#])
        let result = try await s.run(["generate", "--config", config.path, "--backend", "ok", "--source", Self.photo.path, "--size", "512", "x"],
                                     extraEnvironment: ["BADGE_E2E_KEY": Self.key])
        #expect(result.status == 0, "\(result.stderr)")
        let edit = try #require(try Self.received(server, mode: "ok").first)
        let image = try #require(edit.body["image"] as? [String: Any])
        try Self.checkUpload(try #require(Data(base64Encoded: image["b64"] as? String ?? "")), side: 256)
    }

    @Test func anAutomatic1111BackendSendsImg2Img() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.imageServer)
        defer { server.stop() }
        let config = try Self.config(s, server, ["ok": #""api": "automatic1111", "denoisingStrength": 0.4, "steps": 20"#])
        let fromConfig = try await s.run(["generate", "--config", config.path, "--backend", "ok", "--source", Self.photo.path, "--size", "256", "--seed", "7",
                                          "Make it a badge"], extraEnvironment: ["BADGE_E2E_KEY": Self.key])
        #expect(fromConfig.status == 0, "\(fromConfig.stderr)")
        let fromOption = try await s.run(["generate", "--config", config.path, "--backend", "ok", "--source", Self.photo.path, "--size", "256",
                                          "--option", "denoising_strength=0.9", "Make it a badge"], extraEnvironment: ["BADGE_E2E_KEY": Self.key])
        #expect(fromOption.status == 0, "\(fromOption.stderr)")
        let requests = try Self.received(server, mode: "ok")
        #expect(requests.count == 2)
        for request in requests {
            #expect(request.path == "/ok/sdapi/v1/img2img")
            #expect(request.violations.isEmpty, "\(request.violations)")
            #expect(request.body["width"] as? Int == 256 && request.body["height"] as? Int == 256 && request.body["steps"] as? Int == 20)
            let images = try #require(request.body["init_images"] as? [String])
            try Self.checkUpload(try #require(Data(base64Encoded: images.first ?? "")), side: 256)
        }
        #expect(requests.first?.body["denoising_strength"] as? Double == 0.4)
        #expect(requests.last?.body["denoising_strength"] as? Double == 0.9)
        #expect(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png"))?.extra["source-sha256"] == (try Self.sha256(Self.photo)))

        // Without a picture the option has nothing to act on: refused, not ignored.
        let stray = try await s.run(["generate", "--config", config.path, "--backend", "ok", "--option", "denoising_strength=0.9", "x"],
                                    extraEnvironment: ["BADGE_E2E_KEY": Self.key])
        #expect(stray.status == 64, "\(stray.stderr)")
        #expect(stray.stderr.contains("backend 'ok': --option denoising_strength=0.9 applies only to a source picture"), "\(stray.stderr)")
        #expect(stray.stderr.contains("hint: add --source FILE, or leave the option out"), "\(stray.stderr)")
        let bad = try await s.run(["generate", "--config", config.path, "--backend", "ok", "--source", Self.photo.path, "--option", "denoising_strength=2", "x"],
                                  extraEnvironment: ["BADGE_E2E_KEY": Self.key])
        #expect(bad.status == 64 && bad.stderr.contains("expected a number from 0 to 1"), "\(bad.stderr)")
        #expect(try Self.received(server, mode: "ok").count == 2)
    }

    /// A batch job's `source` (relative to the job list) reaches an http backend as `--source` does.
    @Test func aBatchJobsSourceIsSentToo() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.imageServer)
        defer { server.stop() }
        let config = try Self.config(s, server, ["ok": #""api": "openai""#])
        try FileManager.default.copyItem(at: Self.photo, to: s.root.appendingPathComponent("photo.jpg"))
        let list = s.root.appendingPathComponent("jobs.json")
        try Data(#"[{"name": "edited", "prompt": "Make it a badge", "backend": "ok", "size": 128, "source": "photo.jpg"}]"#.utf8).write(to: list)
        let out = s.root.appendingPathComponent("out")
        let result = try await s.run(["batch", "--config", config.path, list.path, "--output", out.path], extraEnvironment: ["BADGE_E2E_KEY": Self.key])
        #expect(result.status == 0, "\(result.stderr)")
        let edit = try #require(try Self.received(server, mode: "ok").first)
        #expect(edit.path == "/ok/v1/images/edits" && edit.violations.isEmpty, "\(edit.violations)")
        let image = try #require(edit.body["image"] as? [String: Any])
        try Self.checkUpload(try #require(Data(base64Encoded: image["b64"] as? String ?? "")), side: 128)
        let made = try #require(try FileManager.default.contentsOfDirectory(atPath: out.path).first { $0.hasSuffix(".png") })
        #expect(try BadgeMetadata.read(from: out.appendingPathComponent(made))?.extra["source-sha256"] == (try Self.sha256(Self.photo)))
    }

    /// A batch job whose option acts on a source picture it does not give is
    /// refused at that option before any job runs: the server hears nothing.
    @Test func aBatchJobsSourceOptionWithoutASourceIsRefusedFirst() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.imageServer)
        defer { server.stop() }
        let config = try Self.config(s, server, ["ok": #""api": "automatic1111""#])
        let list = s.root.appendingPathComponent("jobs.json")
        try Data(#"[{"name": "a", "prompt": "Run", "backend": "ok", "size": 128}, {"name": "b", "prompt": "Swim", "backend": "ok", "options": {"denoising_strength": "0.5"}}]"#.utf8)
            .write(to: list)
        let out = s.root.appendingPathComponent("out")
        let result = try await s.run(["batch", "--config", config.path, list.path, "--output", out.path], extraEnvironment: ["BADGE_E2E_KEY": Self.key])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains(#"\#(list.path):1:147: job "b": backend 'ok': options.denoising_strength "0.5" applies only to a source picture"#),
                "\(result.stderr)")
        #expect(result.stderr.contains(#"hint: give the job a "source" picture, or leave the option out"#), "\(result.stderr)")
        #expect(try Self.received(server, mode: "ok").isEmpty, "no job ran")
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("a.png").path))
    }

    /// A picture the intake refuses never leaves: the server hears nothing, the old badge stays.
    @Test func aRefusedSourceFailsBeforeAnyUpload() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.imageServer)
        defer { server.stop() }
        let made = try await s.run(["generate", "--size", "64", "--seed", "1", "Keep this one"])
        #expect(made.status == 0, "\(made.stderr)")
        let before = try Data(contentsOf: s.store.appendingPathComponent("badge.png"))
        let config = try Self.config(s, server, ["ok": #""api": "openai""#])
        let text = s.root.appendingPathComponent("notes.png")
        try Data("not a picture at all, just words".utf8).write(to: text)
        let refusedFormat = try await s.run(["generate", "--config", config.path, "--backend", "ok", "--source", text.path, "x"],
                                            extraEnvironment: ["BADGE_E2E_KEY": Self.key])
        #expect(refusedFormat.status != 0 && refusedFormat.stderr.contains(text.path), "\(refusedFormat.stderr)")
        // Over the configured file-size limit.
        let limited = s.root.appendingPathComponent("limited.json")
        let body = try String(contentsOf: config, encoding: .utf8)
        try Data((String(body.dropLast()) + #", "intake": {"maxFileBytes": 1024}}"#).utf8).write(to: limited)
        let tooLarge = try await s.run(["generate", "--config", limited.path, "--backend", "ok", "--source", Self.photo.path, "x"],
                                       extraEnvironment: ["BADGE_E2E_KEY": Self.key])
        #expect(tooLarge.status != 0 && tooLarge.stderr.contains("the file is 1875 bytes, more than the 1024 allowed"), "\(tooLarge.stderr)")
        // A FIFO is refused by what it is, never waited on; a missing file is named as missing.
        let fifo = s.root.appendingPathComponent("pipe.png")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let notAFile = try await s.run(["generate", "--config", config.path, "--backend", "ok", "--source", fifo.path, "x"],
                                       extraEnvironment: ["BADGE_E2E_KEY": Self.key])
        #expect(notAFile.status == 1 && notAFile.stderr.contains("backend 'ok'")
                && notAFile.stderr.contains("this is a FIFO (named pipe), not a picture") && notAFile.stderr.contains(fifo.path),
                "\(notAFile.stderr)")
        let missing = try await s.run(["generate", "--config", config.path, "--backend", "ok", "--source", s.root.appendingPathComponent("gone.png").path, "x"],
                                      extraEnvironment: ["BADGE_E2E_KEY": Self.key])
        #expect(missing.status == 1 && missing.stderr.contains("no such file") && missing.stderr.contains("gone.png"), "\(missing.stderr)")
        #expect(try Self.received(server, mode: "ok").isEmpty)
        #expect(try Data(contentsOf: s.store.appendingPathComponent("badge.png")) == before)
    }

    /// The fault modes of the edit route: an HTML page, a cut-off answer, too much, a 503 then success.
    @Test func editRequestsMeetTheServersFaults() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: Self.imageServer)
        defer { server.stop() }
        let config = try Self.config(s, server, [
            "html-200": #""api": "openai""#, "truncated": #""api": "openai""#, "huge": #""api": "openai", "maxResponseBytes": 1048576"#,
            "flaky503": #""api": "openai", "retries": 3"#, "echo-key": #""api": "automatic1111""#,
        ])
        func run(_ backend: String) async throws -> Sandbox.Result {
            try await s.run(["generate", "--config", config.path, "--backend", backend, "--source", Self.photo.path, "--size", "64", "--verbose", "x"],
                            extraEnvironment: ["BADGE_E2E_KEY": Self.key])
        }
        let html = try await run("html-200")
        #expect(html.status == 1 && html.stderr.contains("the server's answer is a web page"), "\(html.stderr)")
        let truncated = try await run("truncated")
        #expect(truncated.status == 1, "\(truncated.stderr)")
        let huge = try await run("huge")
        #expect(huge.status == 1 && huge.stderr.contains("larger than 1048576 bytes"), "\(huge.stderr)")
        let flaky = try await run("flaky503")
        #expect(flaky.status == 0, "\(flaky.stderr)")
        #expect(try Self.received(server, mode: "flaky503").map(\.path) == Array(repeating: "/flaky503/v1/images/edits", count: 3))
        let echoed = try await run("echo-key")
        #expect(echoed.status == 1 && echoed.stderr.contains("********"), "\(echoed.stderr)")
        for result in [html, truncated, huge, flaky, echoed] {
            #expect(!result.stderr.contains(Self.key) && !result.stdout.contains(Self.key))
        }
    }
}
