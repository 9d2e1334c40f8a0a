import BadgeKit
import BadgeTestSupport
import Foundation
import Testing

/// Issue #31: one scrubber for every string that leaves badge, one sanitiser for printed outside text.
@Suite(.threadsOfTheirOwn)
struct SecretScrubberTests {
    static let key = "sk-proj-Secret0123456789abcdWXYZ"
    let scrubber = SecretScrubber(secrets: [key])

    /// Every 8-character piece of the key.
    static func pieces(of key: String) -> [String] {
        let chars = Array(key)
        return (0...(chars.count - 8)).map { String(chars[$0..<($0 + 8)]) }
    }

    func leaks(_ text: String) -> [String] { Self.pieces(of: Self.key).filter { text.contains($0) } }

    @Test func theKeyWholeSplitOrInPiecesIsMasked() {
        let half = Self.key.index(Self.key.startIndex, offsetBy: 15)
        let cases = [
            "key: \(Self.key).",
            "split \(Self.key[..<half])\n\(Self.key[half...]) over a line",
            "joined \(Self.key[..<half])\u{200D}\(Self.key[half...]) by a zero-width joiner",
            "escaped \(Self.key[..<half])\u{1B}[0m\(Self.key[half...])",
            "a piece: Secret0123 and its end abcdWXYZ",
            "Incorrect API key provided: sk-...WXYZ. You can find your key",
            "Incorrect API key provided: sk-proj-****************WXYZ.",
            "ellipsis sk-proj…WXYZ",
        ]
        for text in cases {
            let scrubbed = scrubber.scrub(text)
            #expect(leaks(scrubbed).isEmpty, "\(scrubbed.debugDescription)")
            #expect(scrubbed.contains(SecretScrubber.mask), "\(scrubbed.debugDescription)")
            #expect(!scrubbed.contains("WXYZ") || text.hasPrefix("a piece"), "\(scrubbed.debugDescription)")
        }
        #expect(scrubber.scrub("Incorrect API key provided: sk-...WXYZ. You can") == "Incorrect API key provided: ********. You can")
        #expect(scrubber.scrub("key: \(Self.key).") == "key: ********.")
        #expect(scrubber.scrub("the job \(Self.key) did not finish") == "the job ******** did not finish")
        #expect(scrubber.scrub(scrubber.scrub("the job \(Self.key) did not finish")) == "the job ******** did not finish")
    }

    @Test func textWithoutTheKeyIsLeftAlone() {
        for text in ["", "a calm sea", "sk-other-0000 WXYZ", "café ☕️ 日本語 \u{1B}[2J", "the word abcdWXY is short"] {
            #expect(scrubber.scrub(text) == text)
        }
        #expect(SecretScrubber(secrets: []).scrub(Self.key) == Self.key)
        #expect(SecretScrubber(secrets: ["abc"]).secrets.isEmpty, "a secret under 4 characters is too short to look for")
    }

    @Test func bidiOverridesAndControlsAreNotPrinted() {
        let text = "invoice\u{202E}gnp.exe \u{2066}x\u{2069} \u{1B}]0;t\u{07}\u{9B}31m ok\ttab"
        #expect(OutsideText.printable(text) == "invoicegnp.exe x ]0;t31m ok\ttab")
        #expect(OutsideText.printable("a\nb", keepingNewlines: false) == "ab")
    }
}
