import BadgeKit
import BadgeTestSupport
@testable import ExecBackend
import Foundation
import Testing

/// The result line, read as docs/PLUGINS.md specifies it: strictly, with a
/// message for each way of getting it wrong.
@Suite(.threadsOfTheirOwn)
struct ExecProtocolTests {
    @Test func successKeepsWhatItUnderstandsAndTheRestAsText() throws {
        let outcome = try ExecProtocol.generateOutcome(
            #"{"ok": true, "metadata": {"model": "m 1", "seed": 18446744073709551615, "revisedPrompt": "r", "steps": 20, "fast": true, "note": "n"}}"#)
        #expect(outcome == .success(.init(model: "m 1", seed: .max, revisedPrompt: "r", extra: ["steps": "20", "fast": "true", "note": "n"])))
        #expect(try ExecProtocol.generateOutcome(#"{"ok": true}"#) == .success(.init()))
    }

    @Test func failureCarriesTheMessageAndTheHint() throws {
        #expect(try ExecProtocol.generateOutcome(#"{"ok": false, "error": "no model", "hint": "download it"}"#)
            == .failure(message: "no model", hint: "download it"))
    }

    @Test(arguments: [
        ("", "its result line is not JSON"),
        ("[1, 2]", "its result line is an array, not a JSON object"),
        (#"{"status": "done"}"#, "its result has no \"ok\": true or false"),
        (#"{"ok": "yes"}"#, "its result has no \"ok\": true or false"),
        (#"{"ok": false}"#, "its result says \"ok\": false without an \"error\" message"),
        (#"{"ok": true, "metadata": []}"#, "its result's \"metadata\" is not an object"),
        (#"{"ok": true, "metadata": {"seed": -1}}"#, "its metadata.seed -1 is not a whole number from 0 to 18446744073709551615"),
        (#"{"ok": true, "metadata": {"layers": {"a": 1}}}"#, "its metadata.layers is an object; metadata values are strings, numbers or booleans"),
        (#"{"ok": true, "metadata": {"bad key": "x"}}"#, "its metadata key \"bad key\" is not a plain name (letters, digits, '.', '_', '-')"),
        (#"{"protocol": 2, "ok": true}"#, "it answered in protocol 2; badge speaks protocol 1"),
    ])
    func violationsSayWhatIsWrong(line: String, message: String) {
        #expect(throws: ExecProtocol.Violation.self) { try ExecProtocol.generateOutcome(line) }
        do {
            _ = try ExecProtocol.generateOutcome(line)
        } catch {
            #expect(error.message.hasPrefix(message), "\(error.message)")
        }
    }

    @Test func availabilityAnswers() throws {
        #expect(try ExecProtocol.availabilityOutcome(#"{"available": true}"#) == .available)
        #expect(try ExecProtocol.availabilityOutcome(#"{"available": false, "reason": "no GPU"}"#) == .unavailable(reason: "no GPU", hint: nil))
        #expect(throws: ExecProtocol.Violation.self) { try ExecProtocol.availabilityOutcome(#"{"available": false}"#) }
        #expect(throws: ExecProtocol.Violation.self) { try ExecProtocol.availabilityOutcome(#"{"ok": true}"#) }
    }

    @Test func theResultIsTheLastNonEmptyLine() {
        #expect(ExecGenerator.resultLine(Data("loading...\n{\"ok\": true}\n\n  \n".utf8)) == #"{"ok": true}"#)
        #expect(ExecGenerator.resultLine(Data("\n \n".utf8)) == nil)
    }

    @Test func theRequestIsOneLineOfJSON() throws {
        let data = ExecProtocol.generateRequest(
            BadgeRequest(prompt: "two\nlines \u{2028} and \"quotes\"", style: nil, size: 64, seed: 9), options: ["k": "v"],
            output: URL(fileURLWithPath: "/tmp/w/image.png"))
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.hasSuffix("}\n") && text.dropLast().contains("\n") == false)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["prompt"] as? String == "two\nlines \u{2028} and \"quotes\"")
        #expect(object["style"] is NSNull && object["options"] as? [String: String] == ["k": "v"])
        #expect(String(decoding: ExecProtocol.availabilityRequest(), as: UTF8.self) == "{\"protocol\": 1, \"kind\": \"availability\"}\n")
    }
}
