import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Testing

/// `badge card back|flip|html` as a user runs them.
@Suite(.threadsOfTheirOwn)
struct CardCommandTests {
    private func makeBadge(_ s: Sandbox, size: Int = 96) async throws {
        let made = try await s.run(["generate", "--size", "\(size)", "--seed", "2", "--date", "2027-01-01", "Read 20 books"])
        try #require(made.status == 0, "\(made.stderr)")
    }

    @Test func backWritesTheBackOfTheCurrentBadgeAtItsSize() async throws {
        let s = try Sandbox()
        try await makeBadge(s, size: 160)
        let out = s.root.appendingPathComponent("back.png")
        let result = try await s.run(["card", "back", "--output", out.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Commitment Date: January 1, 2027"), "\(result.stdout)")
        let image = try GDImage.decodePNG(try Data(contentsOf: out))
        #expect(image.width == 160 && image.height == 160)
        #expect(image.pixel(0, 0).a == 0 && image.pixel(80, 20).a == 255, "a rounded card")
        // No temporary file is left beside it.
        let names = try FileManager.default.contentsOfDirectory(atPath: s.root.path)
        #expect(!names.contains { $0.hasSuffix(".tmp") }, "\(names)")
    }

    @Test func backOfAGivenFileAndItsDate() async throws {
        let s = try Sandbox()
        let preview = s.root.appendingPathComponent("preview.png")
        #expect(try await s.run(["generate", "--output", preview.path, "--size", "64", "--date", "2026-11-22", "Walk"]).status == 0)
        let result = try await s.run(["card", "back", "--badge", preview.path, "-o", s.root.appendingPathComponent("b.png").path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("November 22, 2026"))
        #expect(s.badge == nil, "the store is not involved")
    }

    @Test func aPictureWithoutACommitmentDateIsExplained() async throws {
        let s = try Sandbox()
        let plain = s.root.appendingPathComponent("plain.png")
        try PNGEncoder.encode(try Canvas(width: 32, height: 32, background: .white)).write(to: plain)
        let result = try await s.run(["card", "back", "--badge", plain.path, "-o", s.root.appendingPathComponent("b.png").path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no commitment date"), "\(result.stderr)")
        #expect(result.stderr.contains("badge import"), "says what to do: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.root.appendingPathComponent("b.png").path))
    }

    @Test func withNoBadgeItSaysHowToMakeOne() async throws {
        let s = try Sandbox()
        let result = try await s.run(["card", "back", "-o", s.root.appendingPathComponent("b.png").path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("there is no badge yet") && result.stderr.contains("badge generate"))
    }

    @Test func flipWritesAnAnimatedPNGAndAGIF() async throws {
        let s = try Sandbox()
        try await makeBadge(s)
        let apng = s.root.appendingPathComponent("flip.png")
        let result = try await s.run(["card", "flip", "--output", apng.path, "--size", "48", "--fps", "10", "--direction", "right"])
        #expect(result.status == 0, "\(result.stderr)")
        let chunks = try PNG.chunks(in: try Data(contentsOf: apng))
        #expect(chunks.map(\.type).prefix(3) == ["IHDR", "acTL", "fcTL"])
        let frames = chunks[1].data.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        #expect(frames > 8 && result.stdout.contains("\(frames) frames at 10 fps"), "\(result.stdout)")

        let gif = s.root.appendingPathComponent("flip.gif")
        let made = try await s.run(["card", "flip", "-o", gif.path, "--size", "48", "--fps", "10", "--background", "#202040"])
        #expect(made.status == 0, "\(made.stderr)")
        let bytes = try Data(contentsOf: gif)
        #expect(bytes.prefix(6) == Data("GIF89a".utf8))
        let corner = try GDImage.decode(bytes, accepting: [.gif]).pixel(0, 0)
        #expect(abs(Int(corner.r) - 0x20) < 6 && abs(Int(corner.b) - 0x40) < 6, "\(corner)")
    }

    @Test(arguments: [
        (["card", "flip", "-o", "x.webp"], ".png (an animated PNG) or .gif"),
        (["card", "flip", "-o", "x.png", "--fps", "0"], "--fps must be from 1 to 60"),
        (["card", "flip", "-o", "x.png", "--direction", "up"], "direction"),
        (["card", "flip", "-o", "x.png", "--background", "nope"], "#RRGGBB"),
        (["card", "flip", "-o", "x.gif", "--fps", "60"], "a GIF cannot play 60 frames a second"),
    ])
    func flipRefusesWhatItCannotDo(arguments: [String], message: String) async throws {
        let s = try Sandbox()
        try await makeBadge(s, size: 64)
        let result = try await s.run(arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func htmlWritesOneSelfContainedPage() async throws {
        let s = try Sandbox()
        try await makeBadge(s)
        let dir = s.root.appendingPathComponent("site/card")
        let result = try await s.run(["card", "html", dir.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["index.html"])
        let html = try String(contentsOf: dir.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(html.components(separatedBy: "src=\"data:image/png;base64,").count == 3, "both faces inline")
        #expect(!html.contains("http://") && !html.contains("https://") && !html.contains("<script src") && !html.contains("<link"))
        #expect(html.contains("Commitment Date: January 1, 2027"))
        #expect(html.contains("name=\"viewport\"") && html.contains("prefers-reduced-motion"))
        #expect(html.contains("Read 20 books"))
    }
}
