import BadgeKit
import BadgeTestSupport
import Foundation
import Testing

/// The icon font through the built binary: opened only by a badge that draws
/// an icon, and a badge without it still made, with a note that names the package.
@Suite(.threadsOfTheirOwn)
struct IconFontTests {
    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    /// Without the font, the badge is drawn with the hand-drawn motif its
    /// words chose (a music note for the piano, the emblem for tennis) and
    /// its note says what to install.
    @Test(arguments: [("Learn to play the piano", "music <- piano"), ("Play tennis every weekend", "abstract (no known word; drawn from the words' hash)")])
    func aMissingIconFontFallsBackToTheHandDrawnMotif(prompt: String, motif: String) async throws {
        let s = try Sandbox()
        let missing = s.root.appendingPathComponent("no-such-font.ttf").path
        let made = try await s.run(["generate", "--size", "128", "--json", prompt], extraEnvironment: ["BADGE_ICON_FONT": missing])
        #expect(made.status == 0, "\(made.stderr)")
        let extra = try #require(try json(made.stdout)["extra"] as? [String: String])
        #expect(extra["motif"] == motif, "\(extra)")
        #expect(extra["note"]?.contains("the icon font is missing (\(missing)); install it: apt-get install fonts-material-design-icons-iconfont") == true,
                "\(extra)")
        let shown = try await s.run(["show"], extraEnvironment: ["BADGE_ICON_FONT": missing])
        #expect(shown.stdout.contains("apt-get install fonts-material-design-icons-iconfont"), "\(shown.stdout)")
        // With the font, the same promise draws its icon.
        let drawn = try json(try await s.run(["generate", "--size", "128", "--json", prompt]).stdout)
        #expect((drawn["extra"] as? [String: String])?["motif"]?.hasPrefix("icon ") == true, "\(drawn)")
    }

    /// `badge --help` never opens the icon font. The font's path is a FIFO:
    /// opening it for reading waits for a writer, so a run that opened it
    /// would not end; a badge of an icon does open it (the writer below is let
    /// through), and, the FIFO being no font, is drawn without the icon.
    @Test func helpDoesNotOpenTheIconFont() async throws {
        let s = try Sandbox()
        let fifo = s.root.appendingPathComponent("icons.ttf").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let help = try await s.run(["--help"], extraEnvironment: ["BADGE_ICON_FONT": fifo], timeout: 20)
        #expect(help.status == 0 && help.stdout.contains("USAGE"), "\(help.stderr)")

        // The check's witness: a writer whose open returns once a reader opens the FIFO.
        let opened = Gate()
        Thread {
            let fd = open(fifo, O_WRONLY)
            opened.arrive()
            if fd >= 0 { close(fd) }
        }.start()
        let made = try await s.run(["generate", "--size", "128", "--json", "Play tennis every weekend"], extraEnvironment: ["BADGE_ICON_FONT": fifo],
                                   timeout: 20)
        // The writer got through while the badge was made: the badge opened the FIFO.
        let witnessed = opened.wait(for: 1, limit: .seconds(10))
        if !witnessed {
            // Free the writer.
            let reader = open(fifo, O_RDONLY | O_NONBLOCK)
            _ = opened.wait(for: 1, limit: .seconds(10))
            if reader >= 0 { close(reader) }
        }
        #expect(witnessed, "the badge of an icon did not open the icon font")
        #expect(made.status == 0, "\(made.stderr)")
        let extra = try #require(try json(made.stdout)["extra"] as? [String: String])
        #expect(extra["note"]?.contains("the icon \"sports_tennis\" was not drawn: the icon font is missing") == true, "\(extra)")
    }
}
