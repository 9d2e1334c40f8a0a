import BadgeKit
import BadgeTestSupport
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
}
