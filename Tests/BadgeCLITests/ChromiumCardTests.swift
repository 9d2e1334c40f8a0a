import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Testing

/// The page `badge card html DIR` writes, in a real browser: headless Chromium,
/// driven through the DevTools protocol by Browser/drive_card.py with mouse,
/// touch and keys (its waits poll with Runtime.evaluate, which the page's CSP
/// does not block). Chromium is a test dependency (`make test` installs it);
/// without it this test fails rather than pass unseen. The screenshots are kept
/// in .build/test-screenshots/card/.
@Suite(.threadsOfTheirOwn)
struct ChromiumCardTests {
    static let driver = Sandbox.repository.appendingPathComponent("Tests/BadgeCLITests/Browser/drive_card.py")
    static let screenshots = Sandbox.repository.appendingPathComponent(".build/test-screenshots/card")

    static var chromium: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Mean luminance of each cell of a `cells`×`cells` grid over a region.
    static func grid(cells: Int, width: Int, height: Int, _ pixel: (Int, Int) -> RGBA) -> [Double] {
        var out: [Double] = []
        for cy in 0..<cells {
            for cx in 0..<cells {
                var sum = 0.0, n = 0.0
                for y in (cy * height / cells)..<((cy + 1) * height / cells) {
                    for x in (cx * width / cells)..<((cx + 1) * width / cells) {
                        let p = pixel(x, y)
                        sum += (0.2126 * Double(p.r) + 0.7152 * Double(p.g) + 0.0722 * Double(p.b)) / 255
                        n += 1
                    }
                }
                out.append(sum / max(n, 1))
            }
        }
        return out
    }

    static func distance(_ a: [Double], _ b: [Double]) -> Double {
        zip(a, b).map { abs($0 - $1) }.reduce(0, +) / Double(a.count)
    }

    struct Step {
        var state: String
        var face: String
        var angle: Double
        var animating: Bool
        var transform: String
        var rect: (x: Int, y: Int, width: Int, height: Int)
        var screenshot: String?

        init(_ object: Any?) throws {
            let o = try #require(object as? [String: Any], "no such step")
            state = o["state"] as? String ?? ""
            face = o["face"] as? String ?? ""
            angle = (o["angle"] as? NSNumber)?.doubleValue ?? .nan
            animating = o["animating"] as? Bool ?? true
            transform = o["transform"] as? String ?? ""
            let r = o["rect"] as? [String: Any] ?? [:]
            rect = ((r["x"] as? NSNumber)?.intValue ?? 0, (r["y"] as? NSNumber)?.intValue ?? 0,
                    (r["width"] as? NSNumber)?.intValue ?? 0, (r["height"] as? NSNumber)?.intValue ?? 0)
            screenshot = o["screenshot"] as? String
        }
    }

    @Test func theCardTurnsWithTheFingerAndTheKeysInChromium() async throws {
        guard let chromium = Self.chromium else {
            Issue.record("chromium is not installed, so the card page cannot be tested: run 'make test' (it installs it) or 'apt-get install chromium'")
            return
        }
        let s = try Sandbox()
        let promise = "Drink <more> water & sleep"
        let made = try await s.run(["generate", "--style", "tile", "--size", "256", "--seed", "3", "--date", "2026-11-22", promise])
        try #require(made.status == 0, "\(made.stderr)")
        let dir = s.root.appendingPathComponent("site/card")
        let written = try await s.run(["card", "html", dir.path])
        try #require(written.status == 0, "\(written.stderr)")
        let html = dir.appendingPathComponent("index.html")
        #expect(written.stdout.contains("Wrote the card page: \(html.path)"), "\(written.stdout)")
        // The faces to recognise in the screenshots: the badge, and the back badge draws for it.
        let backFile = s.root.appendingPathComponent("back.png")
        let back = try await s.run(["card", "back", "-o", backFile.path])
        try #require(back.status == 0, "\(back.stderr)")
        let frontImage = try GDImage.decodePNG(try #require(s.badge))
        let backImage = try GDImage.decodePNG(try Data(contentsOf: backFile))
        try #require(frontImage.width == 256 && backImage.width == 256)

        var environment = s.environment
        environment["PATH"] = URL(fileURLWithPath: chromium).deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "")
        let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3"
        try? FileManager.default.removeItem(at: Self.screenshots)
        let driven = try await HelperProgram.run([python, Self.driver.path, html.path, Self.screenshots.path], environment: environment, limit: 600)
        try #require(driven.status == 0 && !driven.killed, "the browser driver failed: \(driven.why)")
        let output = driven.stdout
        let steps = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any], "not JSON: \(String(decoding: output, as: UTF8.self))")

        // The state the page reports after each step.
        let initial = try Step(steps["initial"])
        #expect(initial.state == "front" && initial.face == "front" && initial.angle == 0)
        // The page says the promise as it was typed (escaped in the HTML, not lost or doubled).
        #expect(steps["promise"] as? String == promise, "\(steps["promise"] ?? "no promise")")
        #expect((steps["alt-back"] as? String)?.contains("November 22, 2026") == true, "\(steps["alt-back"] ?? "no alt text")")

        let shortHeld = try Step(steps["short-drag-held"])
        #expect(abs(shortHeld.angle - 36) < 1, "a drag of 20% of the width turns it 36°: \(shortHeld.angle)")
        #expect(shortHeld.transform.contains("perspective(") && shortHeld.transform.contains("rotateY(36"))
        let short = try Step(steps["short-drag"])
        #expect(short.state == "front" && short.face == "front" && short.angle == 0, "below 35% it springs back")

        let longHeld = try Step(steps["long-drag-held"])
        #expect(abs(longHeld.angle - 108) < 1 && longHeld.face == "back", "past 90° the back shows while held")
        let long = try Step(steps["long-drag"])
        #expect(long.state == "back" && long.face == "back" && long.angle == 180)

        // After the release: on past the back to ~10°, back to ~6° short, home. The springs'
        // own plan (window.card.motion, every millisecond) has the peak, whatever frames were drawn;
        // the frames that were drawn end at rest.
        let planned = try #require(steps["long-drag-planned"] as? [Double])
        let peak = try #require(planned.max())
        let peakIndex = try #require(planned.firstIndex(of: peak))
        let trough = try #require(planned[peakIndex...].min())
        #expect(peak >= 189 && peak < 200, "overshoot \(peak)")
        #expect(trough <= 175 && trough > 160, "pull back \(trough)")
        #expect(abs(planned.first! - 108) < 1, "the springs start where the finger left the card: \(planned.first!)")
        #expect(planned.last == 180)
        let angles = try #require(steps["long-drag-angles"] as? [Double])
        #expect(angles.allSatisfy { $0 > 100 && $0 < 200 }, "a frame left the planned path: \(angles)")
        #expect(angles.last == 180)

        let space = try Step(steps["space"])
        #expect(space.state == "front" && space.face == "front", "Space flips it")
        let arrow = try Step(steps["arrow-left"])
        #expect(arrow.state == "back" && arrow.face == "back", "an arrow key flips it")
        let tap = try Step(steps["tap"])
        #expect(tap.state == "front", "a press that moves less than 6 px is a tap, and a tap flips it")
        let below = try Step(steps["drag-33"])
        #expect(below.state == "front" && below.face == "front", "a drag of 33% springs back (the threshold is 35%)")
        let above = try Step(steps["drag-37"])
        #expect(above.state == "back" && above.face == "back", "a drag of 37% turns it (the threshold is 35%)")
        let phone = try Step(steps["phone-swipe"])
        #expect(phone.state == "back" && phone.face == "back", "a finger swipe on a phone turns it")
        let reduced = try Step(steps["reduced-motion"])
        #expect(reduced.state == "back" && !reduced.animating && reduced.angle == 180,
                "with reduced motion the card changes face at once")

        // What the screenshots show where the card is: the front's picture or
        // the back's (the right way round, not mirrored).
        let cells = 12
        func shown(_ step: Step) throws -> [Double] {
            let path = try #require(step.screenshot)
            let shot = try GDImage.decode(try Data(contentsOf: URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))))
            // Inset by a few pixels: the rounded corners show the page behind.
            let r = step.rect, inset = r.width / 16
            return Self.grid(cells: cells, width: r.width - 2 * inset, height: r.height - 2 * inset) {
                shot.pixel(r.x + inset + $0, r.y + inset + $1)
            }
        }
        let insetFront = Self.grid(cells: cells, width: 224, height: 224) { frontImage.pixel(16 + $0, 16 + $1) }
        let insetBack = Self.grid(cells: cells, width: 224, height: 224) { backImage.pixel(16 + $0, 16 + $1) }
        let insetMirror = Self.grid(cells: cells, width: 224, height: 224) { backImage.pixel(239 - $0, 16 + $1) }
        for (name, expectBack) in [("initial", false), ("short-drag", false), ("long-drag", true), ("space", false), ("phone-swipe", true)] {
            let grid = try shown(try Step(steps[name]))
            let toFront = Self.distance(grid, insetFront), toBack = Self.distance(grid, insetBack)
            if expectBack {
                #expect(toBack < 0.06 && toBack < toFront / 3, "\(name): the back should show (back \(toBack), front \(toFront))")
                #expect(toBack < Self.distance(grid, insetMirror), "\(name): the back is mirrored")
            } else {
                #expect(toFront < 0.06 && toFront < toBack / 3, "\(name): the front should show (front \(toFront), back \(toBack))")
            }
        }
    }
}
