import BadgeKit
import BadgeTestSupport
import Foundation
import Testing

/// A caption no installed font can draw is never a silently blank badge:
/// the badge is made, and a warning names the letters and the package to install.
@Suite(.threadsOfTheirOwn)
struct CaptionFontTests {
    /// A fontconfig that knows DejaVu alone: nothing for Chinese.
    private func dejaVuOnly(_ s: Sandbox) throws -> [String: String] {
        let conf = s.root.appendingPathComponent("fonts.conf")
        try """
        <?xml version="1.0"?>
        <!DOCTYPE fontconfig SYSTEM "fonts.dtd">
        <fontconfig>
          <dir>/usr/share/fonts/truetype/dejavu</dir>
          <cachedir>\(s.root.appendingPathComponent("fontconfig-cache").path)</cachedir>
        </fontconfig>
        """.write(to: conf, atomically: true, encoding: .utf8)
        return ["FONTCONFIG_FILE": conf.path, "XDG_CACHE_HOME": s.root.appendingPathComponent("cache").path]
    }

    @Test func aCaptionNoFontDrawsWarnsWithThePackageToInstall() async throws {
        let s = try Sandbox()
        let result = try await s.run(["generate", "学习中文", "--size", "256", "--seed", "1"], extraEnvironment: try dejaVuOnly(s))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("the caption was not drawn"), "\(result.stderr)")
        #expect(result.stderr.contains("U+5B66") && result.stderr.contains("apt-get install fonts-noto-core fonts-noto-cjk"), "\(result.stderr)")
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        #expect(metadata.extra["warning"]?.contains("fonts-noto-cjk") == true)
    }

    @Test func aCaptionPartlyDrawnSaysWhatIsMissing() async throws {
        let s = try Sandbox()
        let result = try await s.run(["generate", "Learn 中文", "--size", "256", "--seed", "1"], extraEnvironment: try dejaVuOnly(s))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("drawn without some of its letters") && result.stderr.contains("U+4E2D"), "\(result.stderr)")
    }

    /// A caption whose shortest form is wider than a small badge at a legible size is left out,
    /// and the warning says so on a line of its own that ends with the option to use.
    @Test func aCaptionTooLongForTheBadgeIsLeftOutAndTheWarningSaysWhatToDo() async throws {
        let s = try Sandbox()
        let file = s.root.appendingPathComponent("small.png")
        let result = try await s.run(["generate", "--size", "96", "--seed", "1", "--output", file.path,
                                      "--caption", "Pneumonoultramicroscopicsilicovolcanoconiosis", "A long word"])
        #expect(result.status == 0, "\(result.stderr)")
        let warning = "the caption was not drawn: even its shortest form does not fit the badge at a legible size; give a shorter one with --caption"
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains("badge: warning: backend \"procedural\": " + warning), "\(result.stderr)")
        // The summary's Caption row says it was not drawn, and why.
        #expect(result.stdout.contains("Caption          not drawn (even its shortest form does not fit the badge at a legible size"),
                "\(result.stdout)")
        let metadata = try #require(try BadgeMetadata.read(from: file))
        #expect(metadata.extra["warning"] == warning)
        #expect(metadata.extra["caption-drawn"] == nil)
    }

    @Test func withTheFontsInstalledNothingIsMissing() async throws {
        let s = try Sandbox()
        let result = try await s.run(["generate", "学习中文", "--size", "256", "--seed", "1", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("caption"), "\(result.stderr)")
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        #expect(metadata.extra["caption-drawn"] == "学习中文")
        #expect(metadata.extra["warning"] == nil)
    }
}
