import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Testing

/// `badge batch FILE --contact-sheet sheet.png|sheet.html`: every result on one page.
@Suite(.threadsOfTheirOwn)
struct ContactSheetTests {
    static let jobs = #"""
        [{"name": "alice", "prompt": "Run a marathon", "size": 64, "seed": 1},
         {"name": "bob.smith_2", "prompt": "Read 20 books", "size": 64, "seed": 2},
         {"name": "carol", "prompt": "Drink water", "size": 64, "seed": 3}]
        """#

    /// Runs the three jobs with `--contact-sheet sheet.EXT`; returns the sandbox, the sheet and the run.
    func batch(sheet name: String) async throws -> (Sandbox, URL, Sandbox.Result) {
        let s = try Sandbox()
        let manifest = s.root.appendingPathComponent("jobs.json")
        try Data(Self.jobs.utf8).write(to: manifest)
        let sheet = s.root.appendingPathComponent(name)
        let result = try await s.run(["batch", manifest.path, "--output", s.root.appendingPathComponent("out").path,
                                      "--contact-sheet", sheet.path])
        return (s, sheet, result)
    }

    @Test func pngSheetHasEveryBadgeCaptioned() async throws {
        let (s, sheet, result) = try await batch(sheet: "sheet.png")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Contact sheet  \(sheet.path)"), "\(result.stdout)")
        let image = try GDImage.decodePNG(try Data(contentsOf: sheet))
        // Two across (the square root of three, rounded up), two rows, 64 px thumbnails of 64 px badges.
        // 16 px gaps, a 30 px caption under each.
        #expect(image.width == 16 + 2 * (64 + 16))
        #expect(image.height == 16 + 2 * (64 + 30 + 16))
        // The first thumbnail is alice's badge, scaled to the same size.
        let alice = try GDImage.decodePNG(try Data(contentsOf: s.root.appendingPathComponent("out/alice.png")))
        let gap = 16
        #expect(image.pixel(gap + 32, gap + 32) == alice.pixel(32, 32))
        // A caption's ink under the first thumbnail: dark pixels on the light sheet.
        var ink = 0
        for y in (gap + 64)..<(gap + 64 + 30) {
            for x in gap..<(gap + 64) where image.pixel(x, y).r < 120 { ink += 1 }
        }
        #expect(ink > 20, "no caption under alice's badge")
    }

    /// Job names are letters, digits, '.', '_' and '-' (the manifest refuses others), and the page escapes them all the same.
    @Test func htmlSheetShowsEveryBadgeWithItsName() async throws {
        let (s, sheet, result) = try await batch(sheet: "sheet.html")
        #expect(result.status == 0, "\(result.stderr)")
        let page = try String(contentsOf: sheet, encoding: .utf8)
        #expect(page.contains("<title>Badges of jobs.json</title>"))
        #expect(page.components(separatedBy: "<img src=\"data:image/png;base64,").count - 1 == 3)
        for name in ["alice", "bob.smith_2", "carol"] { #expect(page.contains("<figcaption>\(name)</figcaption>")) }
        let made = try FileManager.default.contentsOfDirectory(atPath: s.root.appendingPathComponent("out").path).filter { $0.hasSuffix(".png") }
        #expect(made.sorted() == ["alice.png", "bob.smith_2.png", "carol.png"], "the sheet shows the badges the batch made: \(made)")
    }

    @Test func anotherExtensionIsAUsageError() async throws {
        let s = try Sandbox()
        let manifest = s.root.appendingPathComponent("jobs.json")
        try Data(Self.jobs.utf8).write(to: manifest)
        let result = try await s.run(["batch", manifest.path, "--contact-sheet", s.root.appendingPathComponent("sheet.jpg").path])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("--contact-sheet writes a .png or an .html file"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.root.appendingPathComponent("badges").path), "nothing was made")
    }
}
