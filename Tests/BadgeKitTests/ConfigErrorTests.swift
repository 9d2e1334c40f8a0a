import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// Malformed configurations, each with the line:column and key path a user
/// needs to find the mistake.
@Suite(.threadsOfTheirOwn)
struct ConfigErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var text: String
        var line: Int
        var column: Int
        var keyPath: String?
        var message: String
        var testDescription: String { message }
    }

    static let cases: [Case] = [
        Case(text: "{\n  \"historyLimit\": 5,\n}", line: 3, column: 1, keyPath: nil, message: "trailing comma before '}'"),
        Case(text: "{\"backends\": {\"p\": {\"type\": \"procedural\"}},\n \"x\": [1, 2,]}", line: 2, column: 13, keyPath: nil, message: "trailing comma before ']'"),
        Case(text: "{\n  \"store\": \"/a\",\n  \"store\": \"/b\"\n}", line: 3, column: 3, keyPath: nil, message: "duplicate key \"store\" (first defined at line 2, column 3)"),
        Case(text: "{\"histroyLimit\": 3}", line: 1, column: 2, keyPath: "histroyLimit", message: "unknown key \"histroyLimit\""),
        Case(text: "{\"defaults\": {\n  \"sise\": 512\n}}", line: 2, column: 3, keyPath: "defaults.sise", message: "unknown key \"sise\""),
        Case(text: "{\"historyLimit\": \"20\"}", line: 1, column: 18, keyPath: "historyLimit", message: "expected a whole number, found a string"),
        Case(text: "{\"store\": 42}", line: 1, column: 11, keyPath: "store", message: "expected a string, found a number"),
        Case(text: "{\"backends\": []}", line: 1, column: 14, keyPath: "backends", message: "expected an object, found an array"),
        Case(text: "{\"historyLimit\": -1}", line: 1, column: 18, keyPath: "historyLimit", message: "-1 is out of range"),
        Case(text: "{\"batch\": {\n  \"concurency\": 4\n}}", line: 2, column: 3, keyPath: "batch.concurency", message: "unknown key \"concurency\""),
        Case(text: "{\"batch\": {\"concurrency\": 0}}", line: 1, column: 27, keyPath: "batch.concurrency", message: "0 is out of range"),
        Case(text: "{\"batch\": {\"jobs\": [{\"name\": \"a\"}]}}", line: 1, column: 21, keyPath: nil, message: "job \"a\": the required key \"prompt\" is missing"),
        Case(text: "{\"backends\": {\"p\": {\"type\": \"procedural\", \"concurrency\": \"2\"}}}", line: 1, column: 58, keyPath: "backends.p.concurrency", message: "expected a whole number, found a string"),
        Case(text: "{\"defaults\": {\"size\": 20000}}", line: 1, column: 23, keyPath: "defaults.size", message: "20000 is out of range"),
        Case(text: "{\"defaults\": {\"size\": 512.5}}", line: 1, column: 23, keyPath: "defaults.size", message: "expected a whole number, found 512.5"),
        Case(text: "{\"backends\": {\"p\": {\"caption\": true}}}", line: 1, column: 20, keyPath: "backends.p", message: "the required key \"type\" is missing"),
        Case(text: "{\"backends\": {\"My Backend\": {\"type\": \"procedural\"}}}", line: 1, column: 15, keyPath: "backends[\"My Backend\"]", message: "\"My Backend\" is not a valid backend name"),
        Case(text: "{\"defaults\": {\"backend\": \"nope\"}}", line: 1, column: 26, keyPath: "defaults.backend", message: "no backend is named \"nope\""),
        Case(text: "{\n  // a comment\n}", line: 2, column: 3, keyPath: nil, message: "comments are not allowed in JSON"),
        Case(text: "{'store': '/x'}", line: 1, column: 2, keyPath: nil, message: "expected a key in double quotes, found '''"),
        Case(text: "{\"store\": \"/x}", line: 1, column: 11, keyPath: nil, message: "unexpected end of file inside the string that starts here"),
        Case(text: "{\"backends\": {\n  \"p\": {\"type\": \"procedural\"}\n", line: 3, column: 1, keyPath: nil, message: "the object opened at line 1, column 14 is not closed"),
        Case(text: "{\"store\": \"a\\qb\"}", line: 1, column: 13, keyPath: nil, message: "invalid escape \\q"),
        Case(text: "{\"historyLimit\": 007}", line: 1, column: 18, keyPath: nil, message: "numbers may not have leading zeros"),
        Case(text: "{\"historyLimit\": NaN}", line: 1, column: 18, keyPath: nil, message: "unexpected 'NaN' where a value was expected"),
        Case(text: "{\"store\": nope}", line: 1, column: 11, keyPath: nil, message: "unexpected 'nope' where a value was expected"),
        Case(text: "{\"store\": nope}", line: 1, column: 11, keyPath: nil, message: "text is written in double quotes: \"nope\""),
        Case(text: "{\"historyLimit\": nul}", line: 1, column: 18, keyPath: nil, message: "invalid literal 'nul'; expected 'null'"),
        Case(text: "{\"store\": nullx}", line: 1, column: 11, keyPath: nil, message: "invalid literal 'nullx'; expected 'null'"),
        Case(text: "{\"store\": True}", line: 1, column: 11, keyPath: nil, message: "'True' is not JSON; it is written in lower case: true"),
        Case(text: "{\"store\": None}", line: 1, column: 11, keyPath: nil, message: "'None' is not JSON; no value is written null"),
        Case(text: "{\"store\": \"a\tb\"}", line: 1, column: 13, keyPath: nil, message: "control character 0x09 inside a string"),
        Case(text: "", line: 1, column: 1, keyPath: nil, message: "the file is empty"),
        Case(text: "[]", line: 1, column: 1, keyPath: "", message: "expected an object, found an array"),
        Case(text: "{} {}", line: 1, column: 4, keyPath: nil, message: "after the end of the JSON value"),
        Case(text: "{\"store\": \"/x\" \"historyLimit\": 2}", line: 1, column: 16, keyPath: nil, message: "a comma is missing"),
        Case(text: String(repeating: "[", count: 200), line: 1, column: 129, keyPath: nil, message: "nesting deeper than 128 levels"),
        Case(text: "{\"backends\": {\"a\": {\"type\": \"procedural\", \"fallback\": \"a\"}}}", line: 1, column: 55, keyPath: "backends.a.fallback", message: "the fallbacks go round in a circle"),
    ]

    @Test(arguments: cases)
    func malformedConfigIsLocated(_ c: Case) {
        do {
            _ = try BadgeConfig.parse(Data(c.text.utf8), file: "/etc/badge/config.json")
            Issue.record("accepted: \(c.text)")
        } catch let error as BadgeError {
            #expect(error.code == .config)
            #expect(error.location?.line == c.line && error.location?.column == c.column,
                    "at \(String(describing: error.location)), expected \(c.line):\(c.column): \(error)")
            if let keyPath = c.keyPath { #expect(error.keyPath == keyPath, "\(error)") }
            #expect(error.description.contains(c.message) || (error.hint ?? "").contains(c.message), "\(error)")
            #expect(error.description.hasPrefix("/etc/badge/config.json:\(c.line):\(c.column): "), "\(error)")
        } catch {
            Issue.record("not a BadgeError: \(error)")
        }
    }

    @Test func invalidUTF8IsReportedWithItsByteOffset() {
        var bytes = Array("{\"store\": \"caf".utf8)
        bytes.append(0xE9)
        bytes += Array("\"}".utf8)
        do {
            _ = try BadgeConfig.parse(Data(bytes), file: "c.json")
            Issue.record("accepted invalid UTF-8")
        } catch let error as BadgeError {
            #expect(error.message.contains("byte offset 14"), "\(error)")
            #expect(error.location?.column == 15)
        } catch {
            Issue.record("\(error)")
        }
    }

    /// A configuration's backends are bounded before they are checked, and a
    /// long chain of fallbacks within the bound is checked (each step a
    /// look-up by name: 20,000 backends took 46 s, one list search a step).
    @Test func theBackendsAreBoundedAndALongFallbackChainIsChecked() throws {
        let chain = (0..<10_000).map { i in #""b\#(i)": {"type": "procedural"\#(i < 9_999 ? #", "fallback": "b\#(i + 1)""# : "")}"# }
        let config = try BadgeConfig.parse(Data(("{\"backends\": {" + chain.joined(separator: ", ") + "}}").utf8), file: "c.json")
        #expect(config.fallbackChain(for: "b9990") == (9990..<10_000).map { "b\($0)" })
        let tooMany = (0...10_000).map { #""b\#($0)": {"type": "procedural"}"# }
        do {
            _ = try BadgeConfig.parse(Data(("{\"backends\": {" + tooMany.joined(separator: ", ") + "}}").utf8), file: "c.json")
            Issue.record("10,001 backends must be refused")
        } catch let error as BadgeError {
            #expect(error.message == "the configuration has 10001 backends; badge reads at most 10000", "\(error)")
            #expect(error.location?.line == 1 && error.keyPath == "backends")
        }
    }

    @Test func aByteOrderMarkIsAccepted() throws {
        let config = try BadgeConfig.parse(Data([0xEF, 0xBB, 0xBF] + Array("{\"historyLimit\": 3}".utf8)), file: nil)
        #expect(config.historyLimit == 3)
    }

    @Test func unknownKeysSuggestTheNearestKnownOne() {
        do {
            _ = try BadgeConfig.parse(Data("{\"histroyLimit\": 3}".utf8), file: "c.json")
            Issue.record("accepted the unknown key \"histroyLimit\"")
        } catch let error as BadgeError {
            #expect(error.hint?.hasPrefix("did you mean \"historyLimit\"?") == true, "\(error)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func anUnknownBackendTypeIsLocatedAtItsTypeKey() throws {
        var registry = BackendRegistry()
        registry.register("procedural", summary: "") { _, _ in FakeGenerator(.unavailable("x")) }
        registry.register("import", summary: "") { _, _ in FakeGenerator(.unavailable("x")) }
        let text = "{\"backends\": {\n  \"remote\": {\"type\": \"htp\"}\n}}"
        let config = try BadgeConfig.parse(Data(text.utf8), file: "c.json")
        do {
            _ = try registry.makeAll(config, environment: BadgeEnvironment())
            Issue.record("accepted an unknown type")
        } catch let error as BadgeError {
            #expect(error.description.hasPrefix("c.json:2:22: backends.remote.type: unknown backend type \"htp\""), "\(error)")
            #expect(error.hint?.contains("known types: import, procedural") == true)
        }
    }
}

/// Issue #31: a config error quotes at most about 80 characters of the value.
@Suite(.threadsOfTheirOwn)
struct ConfigExcerptTests {
    @Test func aHugeValueIsQuotedInPart() throws {
        let number = String(repeating: "9", count: 100_000) + ".5"
        let key = String(repeating: "k", count: 5_000)
        let cases = [
            #"{"historyLimit": \#(number)}"#,
            #"{"defaults": {"seed": \#(number)}}"#,
            #"{"\#(key)": 1}"#,
            #"{"backends": {"r": {"type": "http", "fallback": "\#(String(repeating: "u", count: 100_000))"}}}"#,
        ]
        for text in cases {
            do {
                _ = try BadgeConfig.parse(Data(text.utf8), file: "config.json")
                Issue.record("must fail: \(text.prefix(60))")
            } catch let error as BadgeError {
                #expect(error.description.count < 600, "\(error.description.count) characters: \(error.description.prefix(300))")
                #expect(error.description.contains("characters)"), "\(error.description.prefix(300))")
            }
        }
        #expect(ConfigExcerpt.of("short") == "short")
        #expect(ConfigExcerpt.of(String(repeating: "x", count: 81)) == String(repeating: "x", count: 80) + "… (81 characters)")
    }
}
