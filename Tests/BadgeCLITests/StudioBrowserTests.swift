import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Testing

/// The studio in a real browser: Chromium driven by Playwright for Python
/// (Browser/studio_walkthrough.py) through the sheet as a person goes through
/// it, against `badge serve` and a fake ComfyUI for the slow remote render.
/// The screenshots of each step are kept in .build/test-screenshots/studio/.
@Suite(.threadsOfTheirOwn) struct StudioBrowserTests {
    static let walkthrough = Sandbox.repository.appendingPathComponent("Tests/BadgeCLITests/Browser/studio_walkthrough.py")
    static let screenshots = Sandbox.repository.appendingPathComponent(".build/test-screenshots/studio")

    @Test func aPersonMakesPicksFlipsRestoresAndCancelsInTheStudio() async throws {
        let s = try Sandbox()
        let comfy = try FixtureServer(script: ComfyUITests.server)
        defer { comfy.stop() }
        // procedural, and a ComfyUI whose runs never finish (mode "hang").
        let comfyConfig = try ComfyUITests.config(s, comfy, modes: ["hang"], extra: #", "timeoutSeconds": 600"#)
        // And an OpenAI backend whose key is not set: listed as unavailable, with the reason.
        var root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: comfyConfig)) as? [String: Any])
        var configured = try #require(root["backends"] as? [String: Any])
        configured["openai"] = ["type": "http", "api": "openai", "url": "https://api.openai.com/v1", "model": "gpt-image-1", "apiKeyEnv": "BADGE_E2E_NO_SUCH_KEY"]
        root["backends"] = configured
        let config = s.root.appendingPathComponent("studio.json")
        try JSONSerialization.data(withJSONObject: root).write(to: config)
        let served = try await Served.start(s, ["--config", config.path, "--concurrency", "2"], environment: ["BADGE_E2E_KEY": ComfyUITests.key])
        defer { served.end() }
        try? FileManager.default.removeItem(at: Self.screenshots)

        let browser = ChildProcess()
        browser.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        browser.arguments = ["python3", Self.walkthrough.path, served.url, Self.screenshots.path, "--slow-backend", "hang"]
        browser.environment = s.environment
        let output = Served.Stream(), errors = Served.Stream()
        browser.standardOutput = output.pipe
        browser.standardError = errors.pipe
        try browser.run()
        output.start()
        errors.start()
        let ended = try await s.waitForExit(browser, timeout: .seconds(300))
        #expect(ended, "the walkthrough did not end in 300 s: \(errors.text)")
        try await output.readToTheEnd()
        try await errors.readToTheEnd()
        #expect(browser.terminationStatus == 0, "\(errors.text)\nserver: \(served.stderr)")
        let line = try #require(output.text.split(separator: "\n").last, "no report: \(errors.text)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])

        #expect((report["empty_text"] as? String)?.contains("No badge yet") == true)
        let backends = try #require(report["backends"] as? [[Any]])
        #expect(Set(backends.map { $0[0] as? String ?? "" }) == ["procedural", "import", "hang", "openai"])
        let openai = try #require(backends.first { $0[0] as? String == "openai" })
        #expect(openai[1] as? Bool == true && (openai[2] as? String)?.contains("unavailable") == true, "\(openai)")
        #expect((report["backend_note"] as? String)?.hasPrefix("procedural is ready. Unavailable: ") == true, "\(report["backend_note"] ?? "")")
        #expect((report["backend_note"] as? String)?.contains("openai: the environment variable BADGE_E2E_NO_SUCH_KEY is not set") == true,
                "\(report["backend_note"] ?? "")")
        #expect(report["reduced_motion_animating"] as? Bool == false && report["reduced_motion_face"] as? String == "back")
        #expect((report["candidates"] as? [String])?.count == 4)
        // The badge the page committed is the one `badge show` reports, down to the id.
        let picked = try #require(report["picked_id"] as? String)
        let date = try #require(report["date"] as? String)
        #expect(report["promise"] as? String == "Run a marathon before I turn forty")
        #expect(report["flipped_face"] as? String == "back")
        // The focus ring hugs the round medal: blue beside the disc's left edge, none in the
        // corners of the card's box (where a ring drawn round the box would pass).
        let ring = try GDImage.decodePNG(Data(contentsOf: URL(fileURLWithPath: try #require(report["focus_ring"] as? String))))
        let pad = try #require(report["focus_pad"] as? Int)
        // A disc touching the box comes within 14.6 % of a corner, its ring within ~14 %.
        let side = ring.width - 2 * pad, corner = side / 10
        func isRingBlue(_ x: Int, _ y: Int) -> Bool {
            let p = ring.pixel(x, y)
            return p.b >= 200 && p.r <= 90 && (90...180).contains(p.g)
        }
        let leftOfTheDisc = (0..<(pad + side / 4)).filter { isRingBlue($0, ring.height / 2) }.count
        var inCorners = 0
        for (cx, cy) in [(pad, pad), (pad + side - corner, pad), (pad, pad + side - corner), (pad + side - corner, pad + side - corner)] {
            for y in cy..<(cy + corner) { for x in cx..<(cx + corner) where isRingBlue(x, y) { inCorners += 1 } }
        }
        #expect(leftOfTheDisc >= 2 && leftOfTheDisc <= 10, "the focus ring beside the disc: \(leftOfTheDisc) px")
        #expect(inCorners == 0, "the focus ring crosses the card's corners: \(inCorners) px")
        #expect((report["flip_duration"] as? Double ?? 0) > 0.3, "the flip did not spring")
        // The download is the badge the page showed then (restored now, the same file).
        #expect(report["download_name"] as? String == "promise-badge.png")
        #expect(report["restored_id"] as? String == picked && report["restored_promise"] as? String == "Run a marathon before I turn forty")
        let show = try await s.run(["show", "--json"])
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        #expect(shown["id"] as? String == picked, "badge show disagrees with the studio")
        let history = try s.storeObject.history().map(\.metadata.id)
        #expect(history.contains(report["second_id"] as? String ?? "-"))
        // The date shown is the long date, in the browser's locale (en-US), of the day committed.
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        let stored = try #require(s.badge)
        let downloaded = try Data(contentsOf: URL(fileURLWithPath: try #require(report["download"] as? String)))
        #expect(downloaded == stored, "the download is not the badge")
        #expect(date == metadata.longCommitmentDate(locale: Locale(identifier: "en_US")))

        // Cancel: both candidates were working with their time shown, nothing was committed,
        // and the server-side work was stopped (ComfyUI's queue emptied and the run interrupted).
        #expect((report["working_labels"] as? [String])?.allSatisfy { $0.hasPrefix("Working… ") } == true)
        #expect((report["cancel_status"] as? String)?.contains("Nothing was committed") == true)
        #expect(report["after_cancel_id"] as? String == picked)
        #expect(shown["id"] as? String == picked)
        let requests = try ComfyUITests.received(comfy, mode: "hang")
        #expect(requests.contains { $0.path == "/interrupt" }, "\(requests.map(\.path))")
        #expect(requests.contains { $0.method == "POST" && $0.path == "/queue" })

        #expect((report["console_errors"] as? [String])?.isEmpty == true, "\(report["console_errors"] ?? "")")
        #expect((report["requests_elsewhere"] as? [String])?.isEmpty == true, "the page loaded something from another origin")
        let steps = try #require(report["steps"] as? [[String: String]])
        #expect(steps.count >= 9)
        for step in steps { #expect(FileManager.default.fileExists(atPath: step["screenshot"] ?? "")) }
        print("studio screenshots: \(Self.screenshots.path)")
        #expect(try await served.stop() == 0)
    }
}
