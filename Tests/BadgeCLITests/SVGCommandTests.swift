import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Testing

/// SVG badges through the built binary: `generate --output X.svg`, `export`,
/// and `/v1/badge.svg`; and every way of asking for one that cannot be made,
/// refused with what to do instead, leaving the store and the file alone.
@Suite(.threadsOfTheirOwn) struct SVGCommandTests {
    /// The PSNR (dB) of two pictures of one size, each composited on white.
    static func psnr(_ a: GDImage, _ b: GDImage) -> Double {
        guard a.width == b.width, a.height == b.height else { return 0 }
        var squares = 0.0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let p = a.pixel(x, y), q = b.pixel(x, y)
                let pa = Double(p.a) / 255, qa = Double(q.a) / 255
                for (u, v) in [(p.r, q.r), (p.g, q.g), (p.b, q.b)] {
                    let d = (Double(u) * pa + 255 * (1 - pa)) - (Double(v) * qa + 255 * (1 - qa))
                    squares += d * d
                }
            }
        }
        let mse = squares / Double(a.width * a.height * 3)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    static func isSVG(_ data: Data) -> Bool {
        let text = String(decoding: data, as: UTF8.self)
        return text.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\"") && text.hasSuffix("</svg>\n") && !text.contains("<text")
    }

    @Test func generateWritesAnSVGNamedSoAndLeavesTheStoreAlone() async throws {
        let s = try Sandbox()
        let file = s.root.appendingPathComponent("badge.svg")
        let result = try await s.run(["generate", "--seed", "3", "--size", "512", "--output", file.path, "Run a marathon"])
        #expect(result.status == 0, "\(result.stderr)")
        let svg = try Data(contentsOf: file)
        #expect(Self.isSVG(svg), "\(String(decoding: svg.prefix(200), as: UTF8.self))")
        #expect(String(decoding: svg, as: UTF8.self).contains("<prompt>Run a marathon</prompt>"))
        #expect(result.stdout.contains("Wrote a preview; the current badge is unchanged."))
        #expect(s.badge == nil, "an SVG preview commits nothing")
        // --format says it for a name without an extension, and for standard output.
        let named = s.root.appendingPathComponent("badge-vector")
        #expect(try await s.run(["generate", "--format", "svg", "--seed", "3", "--size", "512", "--output", named.path, "Run a marathon"]).status == 0)
        #expect(Self.isSVG(try Data(contentsOf: named)))
        let piped = try await s.run(["generate", "--format", "SVG", "--seed", "3", "--size", "512", "--output", "-", "Run a marathon"])
        #expect(piped.status == 0 && Self.isSVG(Data(piped.stdout.utf8)), "\(piped.stderr)")
    }

    @Test(arguments: [
        (["--output", "ROOT/badge.jpg"], "badge writes PNG or SVG, not .jpg"),
        (["--format", "svg"], "the store holds the badge as PNG"),
        (["--format", "png", "--output", "ROOT/badge.svg"], "--format png contradicts --output ROOT/badge.svg"),
        (["--format", "webp", "--output", "ROOT/badge"], "--format takes png or svg, not 'webp'"),
        (["--choose", "2", "--output", "ROOT/badge.svg"], "--choose shows candidates as pictures"),
    ])
    func anSVGThatCannotBeWrittenIsRefusedAndNothingIsWritten(arguments: [String], message: String) async throws {
        let s = try Sandbox()
        let root = s.root.path
        let result = try await s.run(["generate"] + arguments.map { $0.replacingOccurrences(of: "ROOT", with: root) } + ["Run a marathon"])
        #expect(result.status == 64, "\(result.status): \(result.stderr)")
        #expect(result.stderr.contains(message.replacingOccurrences(of: "ROOT", with: root)), "\(result.stderr)")
        #expect(s.badge == nil)
        let written = try FileManager.default.contentsOfDirectory(atPath: s.root.path).filter { $0.hasPrefix("badge") }
        #expect(written.isEmpty, "\(written)")
    }

    @Test func aBackendThatMakesRastersOnlyIsAskedForNoSVG() async throws {
        let s = try Sandbox()
        let photo = s.root.appendingPathComponent("photo.png")
        #expect(try await s.run(["generate", "--size", "64", "--output", photo.path, "Photo"]).status == 0)
        let result = try await s.run(["import", photo.path, "--output", s.root.appendingPathComponent("out.svg").path, "A photo"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("makes PNG images only; it cannot make an SVG"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.root.appendingPathComponent("out.svg").path))
    }

    @Test func exportWritesTheCommittedBadgeAsSVGWithItsOwnMetadata() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--seed", "4", "--size", "256", "--date", "2027-01-01", "Read 20 books"]).status == 0)
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        let file = s.root.appendingPathComponent("export.svg")
        let result = try await s.run(["export", "--output", file.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Wrote badge \(metadata.id) as SVG"), "\(result.stdout)")
        let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
        #expect(Self.isSVG(Data(text.utf8)))
        #expect(text.contains("<id>\(metadata.id)</id>") && text.contains("<commitment-date>\(metadata.commitmentDateString)</commitment-date>"), "\(text.prefix(600))")
        // A history entry by its id, once a newer badge replaced it.
        #expect(try await s.run(["generate", "--seed", "5", "--size", "256", "Drink water"]).status == 0)
        let older = try await s.run(["export", String(metadata.id.prefix(6)), "--output", "-"])
        #expect(older.status == 0 && older.stdout == text, "\(older.stderr)")
    }

    @Test func aBadgeThatCannotBeRedrawnIsNotExported() async throws {
        let s = try Sandbox()
        let photo = s.root.appendingPathComponent("photo.png")
        #expect(try await s.run(["generate", "--size", "64", "--output", photo.path, "Photo"]).status == 0)
        #expect(try await s.run(["import", photo.path, "A photo"]).status == 0)
        let imported = try await s.run(["export", "--output", s.root.appendingPathComponent("imported.svg").path])
        #expect(imported.status == 1)
        #expect(imported.stderr.contains("only procedural badges are drawn as vectors") && imported.stderr.contains("--format png"), "\(imported.stderr)")
        let png = try await s.run(["export", "--format", "png", "--output", s.root.appendingPathComponent("imported.png").path])
        let exported = try Data(contentsOf: s.root.appendingPathComponent("imported.png"))
        #expect(png.status == 0 && exported == s.badge, "\(png.stderr)")
        // No badge at all.
        let empty = try Sandbox()
        let none = try await empty.run(["export", "--output", empty.root.appendingPathComponent("x.svg").path])
        #expect(none.status == 1 && none.stderr.contains("there is no badge yet"), "\(none.stderr)")
    }

    /// `/v1/badge.svg`: the same query gives the same bytes from another
    /// process, typed as SVG, with no sniffing and no script allowed, and a tag of its own.
    @Test func theRenderAPIServesTheSVG() async throws {
        let s = try Sandbox()
        let query = "?promise=Run+a+marathon&style=flat&seed=7&size=256"
        var bodies: [Data] = []
        var tags: [String] = []
        for _ in 0..<2 {
            let served = try await Served.start(s)
            let answer = try await served.request("GET", "/v1/badge.svg" + query)
            let png = try await served.request("GET", "/v1/badge.png" + query)
            let head = try await served.request("HEAD", "/v1/badge.svg" + query)
            served.end()
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.header("content-type") == "image/svg+xml")
            #expect(answer.header("x-content-type-options") == "nosniff")
            #expect(answer.header("content-security-policy")?.contains("script-src 'none'") == true, "\(answer.headers)")
            #expect(answer.header("cache-control") == "public, max-age=31536000, immutable")
            #expect(Self.isSVG(answer.body))
            #expect(head.status == 200 && head.body.isEmpty && head.header("content-length") == String(answer.body.count))
            let tag = try #require(answer.header("etag"))
            #expect(tag != png.header("etag"), "the PNG and the SVG are two representations")
            bodies.append(answer.body)
            tags.append(tag)
        }
        #expect(bodies[0] == bodies[1] && tags[0] == tags[1])
        let served = try await Served.start(s)
        defer { served.end() }
        let bad = try await served.request("GET", "/v1/badge.svg?promise=x&size=5000")
        #expect(bad.status == 400 && (bad.error?["parameter"] as? String) == "size", "\(bad.text)")
    }

    /// The studio names the SVG of a procedural badge in its state and serves
    /// it, byte for byte what `badge export` writes, revalidated by the badge's
    /// id; a badge that cannot be redrawn has no SVG, and says why.
    @Test func theStudioServesTheCurrentBadgeAsSVG() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--seed", "3", "--size", "128", "Swim every week"]).status == 0)
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        let exported = try await s.run(["export", "--output", "-"])
        #expect(exported.status == 0, "\(exported.stderr)")
        let served = try await Served.start(s)
        defer { served.end() }
        let state = try await served.studio("GET", "/api/state")
        let badge = try #require((try JSONSerialization.jsonObject(with: state.body) as? [String: Any])?["badge"] as? [String: Any])
        #expect(badge["vector"] as? String == "/api/badge.svg?v=\(metadata.id)", "\(badge)")
        let svg = try await served.studio("GET", "/api/badge.svg?v=\(metadata.id)")
        #expect(svg.status == 200 && svg.header("content-type") == "image/svg+xml", "\(svg.status) \(svg.text.prefix(300))")
        #expect(svg.text == exported.stdout, "the studio's SVG is not the one export writes")
        #expect(svg.header("etag") == "\"\(metadata.id)-svg\"" && svg.header("cache-control") == "private, no-cache")
        #expect(svg.header("content-security-policy")?.contains("script-src 'none'") == true)
        let again = try await served.studio("GET", "/api/badge.svg", headers: ["If-None-Match": "\"\(metadata.id)-svg\""])
        #expect(again.status == 304 && again.body.isEmpty, "\(again.status)")
        let download = try await served.studio("GET", "/api/badge.svg?download=1")
        #expect(download.header("content-disposition") == "attachment; filename=\"promise-badge.svg\"")

        // An imported photo is not drawn again: no vector in the state, and a 404 that says why.
        let photo = s.root.appendingPathComponent("photo.png")
        #expect(try await s.run(["generate", "--size", "64", "--output", photo.path, "Photo"]).status == 0)
        #expect(try await s.run(["import", photo.path, "A photo"]).status == 0)
        let after = try await served.studio("GET", "/api/state")
        let imported = try #require((try JSONSerialization.jsonObject(with: after.body) as? [String: Any])?["badge"] as? [String: Any])
        #expect(imported["vector"] == nil || imported["vector"] is NSNull, "\(imported)")
        let none = try await served.studio("GET", "/api/badge.svg")
        #expect(none.status == 404 && none.error?["code"] as? String == "unsupported-format", "\(none.status) \(none.text)")
        #expect(none.text.contains("only a procedural badge of this art engine can be drawn as SVG"), "\(none.text)")
        let png = try await served.studio("GET", "/api/badge.png")
        #expect(png.status == 200 && png.body == s.badge)
    }

    /// `badge card html --svg`: the page's front is the badge as SVG, with the badge's own metadata.
    @Test func theCardPageCanEmbedTheSVGFront() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--seed", "2", "--size", "256", "Walk every day"]).status == 0)
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        let folder = s.root.appendingPathComponent("card")
        let result = try await s.run(["card", "html", "--svg", folder.path])
        #expect(result.status == 0, "\(result.stderr)")
        let page = try String(contentsOf: folder.appendingPathComponent("index.html"), encoding: .utf8)
        let marker = "data:image/svg+xml;base64,"
        let start = try #require(page.range(of: marker)).upperBound
        let encoded = page[start...].prefix { $0 != "\"" }
        let svg = try #require(Data(base64Encoded: String(encoded)))
        #expect(Self.isSVG(svg) && String(decoding: svg, as: UTF8.self).contains("<id>\(metadata.id)</id>"))
        #expect(page.contains("data:image/png;base64,"), "the back stays a PNG")
        // A picture has no vectors.
        let photo = s.root.appendingPathComponent("photo.png")
        #expect(try await s.run(["generate", "--size", "64", "--output", photo.path, "Photo"]).status == 0)
        #expect(try await s.run(["import", photo.path, "A photo"]).status == 0)
        let refused = try await s.run(["card", "html", "--svg", s.root.appendingPathComponent("card2").path])
        #expect(refused.status == 1 && refused.stderr.contains("only procedural badges are drawn as vectors"), "\(refused.stderr)")
    }

    /// The SVG drawn by Chromium is the PNG's picture: every style at 256 and
    /// 1024 px, and Chinese and Arabic captions, at a PSNR of at least 30 dB
    /// (composited on white). The pictures are kept in .build/test-screenshots/svg/.
    @Test func chromiumDrawsTheSVGAsThePNG() async throws {
        let s = try Sandbox()
        let kept = Sandbox.repository.appendingPathComponent(".build/test-screenshots/svg")
        try? FileManager.default.removeItem(at: kept)
        try FileManager.default.createDirectory(at: kept, withIntermediateDirectories: true)
        var jobs: [(name: String, side: Int, arguments: [String])] = []
        for style in ["medal", "tile", "flat", "sketch"] {
            for size in [256, 1024] {
                jobs.append(("\(style)-\(size)", size, ["--style", style, "--size", "\(size)", "--seed", "7", "Run a marathon"]))
            }
        }
        jobs.append(("chinese", 512, ["--style", "medal", "--size", "512", "--seed", "7", "学习中文"]))
        jobs.append(("arabic", 512, ["--style", "tile", "--size", "512", "--seed", "7", "اقرأ كل يوم"]))
        for job in jobs {
            for ext in ["png", "svg"] {
                let made = try await s.run(["generate", "--output", kept.appendingPathComponent("\(job.name).\(ext)").path] + job.arguments)
                #expect(made.status == 0, "\(job.name).\(ext): \(made.stderr)")
            }
        }
        let browser = ChildProcess()
        browser.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        browser.arguments = ["python3", Sandbox.repository.appendingPathComponent("Tests/BadgeCLITests/Browser/svg_in_chromium.py").path, kept.path]
            + jobs.map { "\($0.side):\($0.name)" }
        browser.environment = s.environment
        let output = Served.Stream(), errors = Served.Stream()
        browser.standardOutput = output.pipe
        browser.standardError = errors.pipe
        try browser.run()
        output.start()
        errors.start()
        let ended = try await s.waitForExit(browser, timeout: .seconds(300))
        #expect(ended, "Chromium did not finish in 300 s: \(errors.text)")
        try await output.readToTheEnd()
        try await errors.readToTheEnd()
        #expect(browser.terminationStatus == 0, "\(errors.text)")
        let line = try #require(output.text.split(separator: "\n").last, "no report: \(errors.text)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: [String]])
        #expect(report["drawn"] == jobs.map(\.name), "\(report)")
        var figures: [String] = []
        for job in jobs {
            let png = try GDImage.decodePNG(Data(contentsOf: kept.appendingPathComponent("\(job.name).png")))
            let shot = try GDImage.decodePNG(Data(contentsOf: kept.appendingPathComponent("\(job.name)-chromium.png")))
            let psnr = Self.psnr(shot, png)
            #expect(psnr >= 30, "\(job.name): PSNR \(psnr) dB")
            figures.append("\(job.name) \(String(format: "%.1f", psnr)) dB")
        }
        print("chromium SVG against PNG: " + figures.joined(separator: ", "))
    }
}
