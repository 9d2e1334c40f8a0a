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

    /// JSON that badge prints or keeps (`--json`, a batch's manifest) has
    /// what terminals act on escaped, every one of them and nothing else:
    /// DEL, C1, and the bidi embeddings, overrides and isolates; the JSON
    /// still reads as the same value.
    @Test func jsonKeepsItsMeaningWithTerminalControlsEscaped() throws {
        let acted = (0x7F...0x9F).map { Unicode.Scalar($0)! } + (0x202A...0x202E).map { Unicode.Scalar($0)! }
            + (0x2066...0x2069).map { Unicode.Scalar($0)! }
        let kept: [Unicode.Scalar] = ["é", "日", "\u{2028}", "\u{200F}", "\u{2065}", "\u{206A}", "\u{2029}", "\u{A0}", "\u{C2}", "\u{E2}"]
        let text = String(String.UnicodeScalarView(acted + kept)) + " \u{1B}[2J"
        let json = try JSONEncoder().encode(["error": text])
        let escaped = OutsideText.escapingControls(inJSON: json)
        let shown = String(decoding: escaped, as: UTF8.self)
        #expect(!shown.unicodeScalars.contains { acted.contains($0) }, "\(shown.debugDescription)")
        for scalar in acted { #expect(shown.contains(String(format: "\\u%04x", scalar.value)), "U+\(String(scalar.value, radix: 16))") }
        for scalar in kept { #expect(shown.unicodeScalars.contains(scalar), "U+\(String(scalar.value, radix: 16))") }
        #expect(try JSONDecoder().decode([String: String].self, from: escaped) == ["error": text])
        #expect(OutsideText.escapingControls(inJSON: Data("{\"a\": \"plain\"}".utf8)) == Data("{\"a\": \"plain\"}".utf8))
    }
}

/// Issue #58: a key a server echoes in pieces shorter than any mask takes
/// (spaces every 7 characters, dashes every 3), reversed or encoded, is
/// still the key: `echoes` finds it, and the server's words are withheld.
@Suite(.threadsOfTheirOwn)
struct SecretEchoTests {
    static let key = "sk-SECRETKEY-1234567890abcdef"
    let scrubber = SecretScrubber(secrets: [key])

    static func chunks(_ text: String, _ size: Int) -> [String] {
        let chars = Array(text)
        return stride(from: 0, to: chars.count, by: size).map { String(chars[$0..<min($0 + size, chars.count)]) }
    }

    @Test func everyFormOfTheKeyIsAnEcho() {
        let base64: String = Data(Self.key.utf8).base64EncodedString()
        let hex: String = Data(Self.key.utf8).map { String(format: "%02x", $0) }.joined()
        // Every byte escaped, and a stray "%" beside it.
        let percent: String = Self.key.utf8.map { String(format: "%%%02X", $0) }.joined() + " (100% used)"
        let echoed: [String] = [
            Self.chunks(Self.key, 7).joined(separator: " "), Self.chunks(Self.key, 3).joined(separator: "-"), String(Self.key.reversed()),
            base64, base64.replacingOccurrences(of: "=", with: ""), hex, percent, "key=" + base64, "auth_x" + base64,
        ]
        let forms: [String] = ["HTTP 401: key was " + echoed[0]] + echoed.dropFirst().map { "key was " + $0 } + ["only its middle: CRETKEY12345"]
        for form in forms {
            #expect(scrubber.echoes(form), "\(form)")
        }
        // The piece scrubber alone lets the spaced form through: every piece is under 8 characters.
        #expect(scrubber.scrub(forms[0]) == forms[0])
    }

    @Test func wordsThatShareLessThanAWindowWithTheKeyAreKept() {
        for text in ["Incorrect API key provided", "HTTP 401: sk- keys are refused", "request 1234567 failed", "abcdef SECRET",
                     "the model sd_xl_base_1.0.safetensors is not loaded", ""] {
            #expect(!scrubber.echoes(text), "\(text)")
        }
        #expect(!SecretScrubber(secrets: []).echoes("anything"))
        // Windows are within a secret's words: "Bearer sk" is not a piece of "Bearer sk-…".
        #expect(!SecretScrubber(secrets: ["Bearer " + Self.key]).echoes("send Bearer skeleton keys"))
        // A secret too short for a window is masked whole, never looked for in pieces.
        #expect(!SecretScrubber(secrets: ["1234"]).echoes("request 41234 failed"))
    }
}
