import BadgeKit
import BadgeTestSupport
import Foundation
import Testing

/// JSONNode's member subscript, which `--experimental-dump-help`'s rewrite
/// (GlobalOptions) edits argument-parser's description with: read, replaced
/// in place, added at the end, removed, and written back.
@Suite(.threadsOfTheirOwn)
struct JSONNodeTests {
    @Test func membersAreReadReplacedAddedAndRemovedInPlace() throws {
        var root = try JSONParser.parse(#"{"a": 1, "b": {"c": [true, null]}, "d": "x"}"#)
        #expect(root["b"]?["c"]?.kindName == "an array")
        #expect(root["missing"] == nil && root["a"]?["c"] == nil)
        root["a"] = try JSONParser.parse(#""one""#)
        root["e"] = try JSONParser.parse("[]")
        root["d"] = nil
        #expect(JSONWriter.write(root) == """
            {
              "a": "one",
              "b": {
                "c": [
                  true,
                  null
                ]
              },
              "e": []
            }

            """)
        // Not an object: nothing is set.
        var array = try JSONParser.parse("[1]")
        array["a"] = root
        #expect(JSONWriter.write(array) == "[\n  1\n]\n")
    }

    /// The literals build nodes at the document's start, members in the order written.
    @Test func literalsBuildValuesInTheOrderWritten() throws {
        let value: JSONNode.Value = ["b": 1, "a": [true, "x", .null], "c": .number(0.5)]
        guard case let .object(members) = value else { Issue.record("not an object: \(value)"); return }
        #expect(members.map(\.key) == ["b", "a", "c"])
        #expect(members.allSatisfy { $0.keyLocation == .documentStart && $0.value.location == .documentStart })
        #expect(JSONNode(value).location == SourceLocation(line: 1, column: 1, offset: 0))
        #expect(JSONWriter.write(JSONNode(value), indent: "") == "{\n\"b\": 1,\n\"a\": [\ntrue,\n\"x\",\nnull\n],\n\"c\": 0.5\n}\n")
    }

    /// Whole numbers of any width keep their digits; other numbers Swift's shortest text.
    @Test func numbersKeepTheirDigits() throws {
        #expect(JSONNode.Value.number(UInt64.max) == .number(Double(UInt64.max), literal: "18446744073709551615"))
        #expect(JSONNode.Value.number(Int64.min) == .number(Double(Int64.min), literal: "-9223372036854775808"))
        #expect(JSONNode.Value.number(512) == .number(512, literal: "512"))
        #expect(JSONNode.Value.number(0.35) == .number(0.35, literal: "0.35"))
        #expect(JSONNode.Value.number(1e300) == .number(1e300, literal: "1e+300"))
        let parsed = try JSONParser.parse(JSONWriter.write(JSONNode(.number(1e300))))
        #expect(parsed.value == .number(1e300, literal: "1e+300"))
    }

    /// The member subscript of a value: read, replaced where it stands, added at the end, removed, through optional chains.
    @Test func aValuesMembersAreReadReplacedAddedAndRemoved() throws {
        var value = try JSONParser.parse(#"{"6": {"inputs": {"text": "x", "clip": ["4", 1]}}, "7": 3}"#).value
        #expect(value["6"]?["inputs"]?["text"] == "x")
        #expect(value["missing"] == nil && value["7"]?["inputs"] == nil)
        value["6"]?["inputs"]?["text"] = "badge"
        value["6"]?["inputs"]?["seed"] = .number(42)
        value["7"]?["inputs"]?["text"] = "not an object: nothing is set"
        value["8"]?["inputs"]?["text"] = "no node: nothing is set"
        value["6"]?["inputs"]?["clip"] = nil
        #expect(JSONWriter.write(JSONNode(value), indent: "") == "{\n\"6\": {\n\"inputs\": {\n\"text\": \"badge\",\n\"seed\": 42\n}\n},\n\"7\": 3\n}\n")
        // A member replaced keeps its place in the file.
        let parsedText = try JSONParser.parse(#"{"a": {"b": 1}}"#)
        var replaced = parsedText.value
        replaced["a"]?["b"] = "two"
        guard case let .object(outer) = replaced, case let .object(inner) = outer[0].value.value else { Issue.record("\(replaced)"); return }
        #expect(inner[0].keyLocation == SourceLocation(line: 1, column: 8, offset: 7))
    }

    /// Encoded through JSONEncoder: whole numbers as their digits (beyond Int64 too), others as Doubles, keys sorted by
    /// their bytes, a key given twice its last value; the text of a message.
    @Test func valuesEncodeWithExactWholeNumbersAndSortedKeys() throws {
        let template = try JSONParser.parse(#"{"b": [1.0, 1e3, 2.5e-7, 18446744073709551615, -0, -12, 0.1], "a": null, "Z": "s/\"\n", "10": true, "9": false}"#)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let encoded = String(decoding: try encoder.encode(template.value), as: UTF8.self)
        #expect(encoded == #"{"10":true,"9":false,"Z":"s/\"\n","a":null,"b":[1,1000,2.5e-07,18446744073709551615,0,-12,0.1]}"#)
        let twice = JSONNode.Value.object([1, 2].map { JSONMember(key: "k", keyLocation: .documentStart, value: JSONNode(.number($0))) })
        #expect(String(decoding: try encoder.encode(twice), as: UTF8.self) == #"{"k":2}"#)
        #expect(JSONNode.Value.string("a/b").text == "a/b")
        #expect(JSONNode.Value.number(3).text == "3")
        let object: JSONNode.Value = ["b": [1], "a": "/"]
        #expect(object.text == #"{"a":"/","b":[1]}"#)
    }

    /// Decoded through JSONDecoder: whole numbers exact, members sorted by key, every node at the document's start;
    /// what no Double holds and nesting past the parser's depth are refused.
    @Test func valuesDecodeExactlyAndBounded() throws {
        let text = #"{"z": [18446744073709551615, -9223372036854775808, 9007199254740993, 0.5], "a": {"s": "9", "t": true, "n": null}}"#
        let value = try JSONDecoder().decode(JSONNode.Value.self, from: Data(text.utf8))
        #expect(value == ["a": ["n": .null, "s": "9", "t": true], "z": [.number(UInt64.max), .number(Int64.min), .number(9_007_199_254_740_993 as Int64), .number(0.5)]])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(JSONNode.Value.self, from: Data("[1e400]".utf8)) }
        func nested(_ levels: Int) -> Data {
            Data((String(repeating: "[", count: levels) + "0" + String(repeating: "]", count: levels)).utf8)
        }
        let deepest = try JSONDecoder().decode(JSONNode.Value.self, from: nested(JSONParser.maxDepth))
        #expect(deepest != .null)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(JSONNode.Value.self, from: nested(JSONParser.maxDepth + 1)) }
        #expect(throws: (any Error).self) { try JSONParser.parse(nested(JSONParser.maxDepth + 1)) }
    }
}
