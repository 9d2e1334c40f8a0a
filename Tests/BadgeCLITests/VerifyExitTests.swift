import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// Issue #31: `badge verify` exits with the status its help gives (1) for a
/// badge it cannot re-render; it exited 64, the status of a usage error.
@Suite(.threadsOfTheirOwn)
struct VerifyExitTests {
    @Test func aBadgeThatCannotBeReRenderedExitsOne() async throws {
        let s = try Sandbox()
        let picture = s.root.appendingPathComponent("picture.png")
        try TestPNG.solid(width: 64, height: 64, rgb: (10, 20, 30)).write(to: picture)
        #expect(try await s.run(["import", "--size", "64", picture.path, "a picture"]).status == 0)
        let help = try await s.run(["verify", "--help"])
        let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("1 when they differ or the badge cannot be re-rendered"), "\(help.stdout)")
        let result = try await s.run(["verify"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("only procedural badges can be re-rendered"), "\(result.stderr)")
    }
}
