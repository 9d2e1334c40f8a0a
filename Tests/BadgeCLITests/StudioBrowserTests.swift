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
        // Each backend as it is: the three that can run are offered, the one without its key is not.
        for name in ["procedural", "import", "hang"] {
            let option = try #require(backends.first { $0[0] as? String == name })
            #expect(option[1] as? Bool == false && option[2] as? String == name, "\(name) is not offered: \(option)")
        }
        let openai = try #require(backends.first { $0[0] as? String == "openai" })
        #expect(openai[1] as? Bool == true && openai[2] as? String == "openai (unavailable)", "\(openai)")
        #expect((report["backend_note"] as? String)?.hasPrefix("procedural is ready. Unavailable: ") == true, "\(report["backend_note"] ?? "")")
        #expect((report["backend_note"] as? String)?.contains("openai: the environment variable BADGE_E2E_NO_SUCH_KEY is not set") == true,
                "\(report["backend_note"] ?? "")")
        #expect(report["reduced_motion_animating"] as? Bool == false && report["reduced_motion_face"] as? String == "back")
        #expect((report["candidates"] as? [String])?.count == 4)
        // The page's words are words at every step: no value it failed to spell out.
        #expect((report["not_words"] as? [String])?.isEmpty == true, "\(report["not_words"] ?? "")")
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
        #expect(report["download_href_scheme"] as? String == "blob:", "the download link does not point at the picture itself")
        #expect(report["download_href_png"] as? Bool == true, "the download link's blob: URL is not a picture")
        // The sheet as Image Playground's: options behind a disclosure, a click chooses (the large
        // preview shows it, nothing is committed yet), Done keeps it.
        #expect(report["options_closed_at_first"] as? Bool == true)
        let chosen = try #require(report["chosen"] as? [String: Any])
        #expect(chosen["selected"] as? Int == 3 && chosen["open"] as? Bool == true && chosen["badge"] is NSNull, "\(chosen)")
        #expect((chosen["preview"] as? String)?.hasPrefix("Candidate 3: ") == true && chosen["pressed"] as? [Int] == [3], "\(chosen)")
        let byNumber = report["chosen_by_number"] as? [Any] ?? []
        #expect(byNumber.first as? Int == 1 && byNumber.last as? Bool == true, "a digit committed at once: \(byNumber)")
        // Keyboard alone: the focus goes to the first candidate ready, the arrows move it, a digit chooses, Enter keeps.
        #expect(report["focus_when_ready"] as? String == "candidate", "\(report["focus_when_ready"] ?? "")")
        let arrows = report["focus_after_arrow"] as? [Int] ?? []
        #expect(arrows.count == 2 && arrows[1] == arrows[0] % 4 + 1, "\(arrows)")
        #expect(report["focus_after_arrow_back"] as? Int == arrows.first)
        // axe-core finds no serious or critical violation in any view, at 1200x900 or at 390x844.
        #expect((report["axe"] as? [String])?.isEmpty == true, "\((report["axe"] as? [String] ?? []).joined(separator: "\n"))")
        // On a phone the sheet's head stays at its top while the sheet scrolls.
        let phone = try #require(report["phone_sheet"] as? [String: Double])
        #expect((phone["scrolled"] ?? 0) > 100 && abs(phone["headTop"] ?? 99) <= 1 && (phone["headBottom"] ?? 0) > 30, "\(phone)")
        // A German browser reads the page in English, its date too.
        let german = try #require(report["german"] as? [String: String])
        #expect(german["language"] == "de-DE" && german["date"] == date && german["back"]?.contains("locale=en-US") == true, "\(german)")
        let reopened = try #require(report["reopened"] as? [String: Any])
        #expect(reopened["promise"] as? String == "" && reopened["candidates"] as? Int == 0 && reopened["status"] as? String == "", "\(reopened)")
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
        // The main view shows the committed badge's pixels, and each candidate is a
        // badge: a picture with a disc and a motif in it, not a blank or a broken image.
        let committed = try GDImage.decodePNG(stored)
        let front = try GDImage.decodePNG(Data(contentsOf: URL(fileURLWithPath: try #require(report["front_shot"] as? String))))
        let frontDifference = Self.meanDifference(front, committed)
        #expect(frontDifference < 12, "the main view is not the committed badge: a mean difference of \(frontDifference) of 255")
        // A procedural badge is shown as its SVG, in the main view and in the candidates.
        let frontSource = report["front_source"] as? String ?? ""
        #expect(frontSource.contains("/api/badge.svg?v=\(picked)"), "the main view does not show the SVG: \(frontSource)")
        // Pictures come through fetch (with the token) as blob: URLs.
        #expect((report["front_url"] as? String)?.hasPrefix("blob:http://127.0.0.1:\(served.port)/") == true, "\(report["front_url"] ?? "")")
        #expect((report["candidate_urls"] as? [String])?.allSatisfy { $0.hasPrefix("blob:") } == true)
        #expect(report["svg_download_shown"] as? Bool == true, "no Download SVG for a procedural badge")
        let candidateSources = report["candidate_sources"] as? [String] ?? []
        #expect(candidateSources.count == 4 && candidateSources.allSatisfy { $0.hasSuffix(".svg") }, "\(candidateSources)")
        let shots = try #require(report["candidate_shots"] as? [String])
        #expect(shots.count == 4)
        var grids: [[Double]] = []
        for path in shots {
            let candidate = try GDImage.decodePNG(Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(candidate.width >= 64 && candidate.height >= 64, "\(path): \(candidate.width)x\(candidate.height)")
            let grid = Self.grid(candidate)
            let spread = Self.spread(grid)
            #expect(spread > 20, "\(path) looks blank: its cells' colours spread over \(spread) of 255")
            grids.append(grid)
        }
        // The four differ from each other, and the third, the one picked (and restored at
        // the end, so the one stored now), is the badge committed.
        for i in 0..<grids.count { for j in (i + 1)..<grids.count {
            #expect(Self.distance(grids[i], grids[j]) > 2, "candidates \(i + 1) and \(j + 1) look the same")
        } }
        if grids.count == 4 {
            let picked = Self.distance(grids[2], Self.grid(committed))
            #expect(picked < 12, "the picked candidate is not the committed badge: a mean difference of \(picked) of 255")
        }
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

        // The token: no cookie at all, kept in the tab's sessionStorage; another server on
        // 127.0.0.1, visited in the tab, received nothing of it and could not read it.
        #expect((report["cookies"] as? [Any])?.isEmpty == true, "the studio set cookies: \(report["cookies"] ?? "")")
        #expect(report["token_kept"] as? Bool == true)
        let seen = try #require(report["elsewhere_seen"] as? [[String: Any]])
        #expect(seen.contains { $0["path"] as? String == "/visited" }, "\(seen)")
        for request in seen {
            let headers = request["headers"] as? [String: String] ?? [:]
            #expect(!headers.keys.contains { $0.lowercased() == "cookie" }, "another port was sent cookies: \(headers)")
            #expect(!headers.values.contains { $0.contains(served.token) } && !headers.keys.contains { $0.lowercased() == "x-badge-token" },
                    "another port was sent the token: \(headers)")
        }
        #expect(report["elsewhere_storage"] is NSNull, "another origin read the token from sessionStorage")
        let back = try #require(report["back_in_the_tab"] as? [String: Any])
        #expect(back["locked"] as? Bool == false && back["badge"] as? String == picked, "\(back)")
        #expect(report["new_tab_locked"] as? Bool == true)
        #expect((report["new_tab_text"] as? String)?.contains("This studio needs its token") == true)
        #expect((report["new_tab_text"] as? String)?.contains("#token=") == true)
        let steps = try #require(report["steps"] as? [[String: String]])
        #expect(steps.count >= 9)
        for step in steps { #expect(FileManager.default.fileExists(atPath: step["screenshot"] ?? "")) }
        print("studio screenshots: \(Self.screenshots.path)")
        #expect(try await served.stop() == 0)
    }

    /// An image's central square (where a medal's disc covers every pixel) as
    /// an 8x8 grid of mean colours: r, g, b of each cell, row by row.
    static func grid(_ image: GDImage) -> [Double] {
        let side = min(image.width, image.height), cells = 8
        let inner = side * 6 / 10, left = (image.width - inner) / 2, top = (image.height - inner) / 2
        var values: [Double] = []
        for cy in 0..<cells {
            for cx in 0..<cells {
                var sum = (0.0, 0.0, 0.0), count = 0.0
                for y in (top + cy * inner / cells)..<(top + (cy + 1) * inner / cells) {
                    for x in (left + cx * inner / cells)..<(left + (cx + 1) * inner / cells) {
                        let p = image.pixel(x, y)
                        sum.0 += Double(p.r); sum.1 += Double(p.g); sum.2 += Double(p.b); count += 1
                    }
                }
                values += [sum.0 / count, sum.1 / count, sum.2 / count]
            }
        }
        return values
    }

    /// The mean absolute difference, of 255, between two grids.
    static func distance(_ a: [Double], _ b: [Double]) -> Double {
        zip(a, b).map { abs($0 - $1) }.reduce(0, +) / Double(a.count)
    }

    /// How far apart the grid's cells are: the largest difference of a channel between two cells.
    static func spread(_ grid: [Double]) -> Double {
        (0..<3).map { channel in
            let values = stride(from: channel, to: grid.count, by: 3).map { grid[$0] }
            return (values.max() ?? 0) - (values.min() ?? 0)
        }.max() ?? 0
    }

    static func meanDifference(_ shown: GDImage, _ badge: GDImage) -> Double {
        distance(grid(shown), grid(badge))
    }
}
