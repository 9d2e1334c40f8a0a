import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Testing

/// Issue #31, end to end with the real decoder: a plugin hands over a PNG at
/// exactly the size asked for that carries an APNG's frames, a zTXt bomb or
/// a server's tEXt. The committed badge, a --output preview and the card
/// page built from it carry none of it.
@Suite(.threadsOfTheirOwn)
struct OutsidePNGProcessTests {
    static let plugin = Sandbox.repository.appendingPathComponent("Tests/ExecBackendTests/Fixtures/good.sh")

    @Test(arguments: HostilePNG.names)
    func aPluginsExtraChunksNeverReachTheBadge(name: String) async throws {
        let s = try Sandbox()
        let source = s.root.appendingPathComponent("outside.png")
        try HostilePNG.make(name).write(to: source)
        let config = s.root.appendingPathComponent("config.json")
        try Data(#"{"backends": {"outside": {"type": "exec", "command": ["\#(Self.plugin.path)"], "env": {"PNG_SOURCE": "\#(source.path)"}}}}"#.utf8)
            .write(to: config)
        let environment: [String: String] = [:]
        let size = "\(HostilePNG.side)"
        let made = try await s.run(["generate", "--config", config.path, "--backend", "outside", "--size", size, "from a plugin"],
                                   extraEnvironment: environment)
        #expect(made.status == 0, "\(name): \(made.stderr)")
        let preview = s.root.appendingPathComponent("preview.png")
        let previewed = try await s.run(["generate", "--config", config.path, "--backend", "outside", "--size", size, "--output", preview.path,
                                         "from a plugin"], extraEnvironment: environment)
        #expect(previewed.status == 0, "\(name): \(previewed.stderr)")
        let page = s.root.appendingPathComponent("page")
        #expect(try await s.run(["card", "html", page.path]).status == 0)

        for file in [s.store.appendingPathComponent("badge.png"), preview] {
            let data = try Data(contentsOf: file)
            let types = try PNG.chunks(in: data).map(\.type)
            #expect(types.filter { $0 != "iTXt" } == ["IHDR", "IDAT", "IEND"], "\(name) \(file.lastPathComponent): \(types)")
            #expect(!data.contains(Data("holiday".utf8)) && data.count < 64 << 10, "\(name): \(data.count) bytes")
            #expect(try GDImage.decodePNG(data).pixel(10, 10) == RGBA(200, 40, 90), "\(name): the still picture's pixels")
        }
        let html = try Data(contentsOf: page.appendingPathComponent("index.html"))
        #expect(html.count < 512 << 10, "\(name): the page is \(html.count) bytes")

        // Chromium, an independent decoder, sees one still frame where it saw the APNG animate.
        if name == "APNG" {
            let frames = try await Self.framesInChromium(s, [source.path, s.store.appendingPathComponent("badge.png").path, preview.path])
            #expect(frames[source.path]?.animated == true && (frames[source.path]?.frames ?? 0) > 1, "the witness does not see the APNG: \(frames)")
            for file in [s.store.appendingPathComponent("badge.png").path, preview.path] {
                #expect(frames[file]?.frames == 1 && frames[file]?.animated == false, "\(file): \(String(describing: frames[file]))")
            }
        }
    }

    static let witness = Sandbox.repository.appendingPathComponent("Tests/BadgeCLITests/Browser/png_frames.py")

    /// What Chromium's ImageDecoder finds in each file (Browser/png_frames.py).
    static func framesInChromium(_ s: Sandbox, _ files: [String]) async throws -> [String: (frames: Int, animated: Bool)] {
        let browser = ChildProcess()
        browser.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        browser.arguments = ["python3", witness.path] + files
        browser.environment = s.environment
        let output = Served.Stream(), errors = Served.Stream()
        browser.standardOutput = output.pipe
        browser.standardError = errors.pipe
        try browser.run()
        output.start()
        errors.start()
        #expect(try await s.waitForExit(browser, timeout: .seconds(120)), "Chromium did not answer: \(errors.text)")
        try await output.readToTheEnd()
        try await errors.readToTheEnd()
        #expect(browser.terminationStatus == 0, "\(errors.text)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.text.utf8)) as? [String: [String: Any]], "\(output.text) \(errors.text)")
        return json.mapValues { ($0["frames"] as? Int ?? 0, $0["animated"] as? Bool ?? false) }
    }
}
