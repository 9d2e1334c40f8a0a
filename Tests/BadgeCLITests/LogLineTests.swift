import BadgeTestSupport
import Testing
@testable import BadgeMain

/// The log's metadata values as logfmt writes them: quoted when a space, a
/// quote, an `=` or nothing would blur where one ends and the next begins.
@Suite(.threadsOfTheirOwn)
struct LogLineTests {
    @Test(arguments: [
        ("procedural", "procedural"),
        ("/tmp/store", "/tmp/store"),
        ("0.02", "0.02"),
        ("runner <- run", #""runner <- run""#),
        ("", #""""#),
        ("a=b", #""a=b""#),
        (#"say "hi""#, #""say \"hi\"""#),
        (#"C:\x y"#, #""C:\\x y""#),
        ("tab\there", "\"tab\there\""),
        ("日本語", "日本語"),
    ])
    func aValueIsQuotedWhenItWouldBlur(value: String, written: String) {
        #expect(StderrLogHandler.logfmt(value) == written)
    }
}
