import Foundation

/// A place in a text file: 1-based line and column (in characters), and the
/// 0-based byte offset.
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var offset: Int

    public init(line: Int, column: Int, offset: Int) {
        self.line = line
        self.column = column
        self.offset = offset
    }

    public var description: String { "\(line):\(column)" }

    /// Line 1, column 1: where a value that was read from no file (one built
    /// in code, or decoded) is placed.
    package static let documentStart = SourceLocation(line: 1, column: 1, offset: 0)
}

/// A JSON value that remembers where it stood in its file, so configuration
/// errors can point at the line, the column and the key.
package struct JSONNode: Sendable, Hashable {
    package enum Value: Sendable, Hashable {
        case null
        case bool(Bool)
        /// The number and its literal text (kept so integers stay exact).
        case number(Double, literal: String)
        case string(String)
        case array([JSONNode])
        case object([JSONMember])
    }

    package var value: Value
    package var location: SourceLocation

    package init(_ value: Value, at location: SourceLocation = .documentStart) {
        self.value = value
        self.location = location
    }

    /// What a user would call this kind of value in an error message.
    package var kindName: String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

extension JSONNode {
    /// An object's member `key` (its last, should the object not be a parsed
    /// one), or nil: not there, or not an object. Setting it replaces the
    /// member's value, or adds the member at the object's end; setting nil
    /// removes it. Setting a member of what is not an object does nothing.
    package subscript(key: String) -> JSONNode? {
        get {
            guard case let .object(members) = value else { return nil }
            return members.last { $0.key == key }?.value
        }
        set {
            guard case var .object(members) = value else { return }
            guard let newValue else {
                members.removeAll { $0.key == key }
                value = .object(members)
                return
            }
            if let index = members.lastIndex(where: { $0.key == key }) {
                members[index].value = newValue
            } else {
                members.append(JSONMember(key: key, keyLocation: newValue.location, value: newValue))
            }
            value = .object(members)
        }
    }
}

extension JSONNode.Value {
    /// A whole number, written as its digits.
    package static func number<Integer: BinaryInteger>(_ value: Integer) -> Self {
        .number(Double(value), literal: String(value))
    }

    /// A number that may have a fraction; its literal is Swift's shortest
    /// text that reads back as the same Double. A finite value only.
    package static func number(_ value: Double) -> Self {
        .number(value, literal: "\(value)")
    }

    /// An object's member `key` (its last, should the object not be a parsed
    /// one), or nil: not there, or not an object. Setting it replaces the
    /// member's value where it stands, or adds the member at the object's
    /// end; setting nil removes it. Setting a member of what is not an object
    /// does nothing.
    package subscript(key: String) -> Self? {
        get {
            guard case let .object(members) = self else { return nil }
            return members.last { $0.key == key }?.value.value
        }
        set {
            guard case var .object(members) = self else { return }
            guard let newValue else {
                members.removeAll { $0.key == key }
                self = .object(members)
                return
            }
            if let index = members.lastIndex(where: { $0.key == key }) {
                members[index].value.value = newValue
            } else {
                members.append(JSONMember(key: key, keyLocation: .documentStart, value: JSONNode(newValue)))
            }
            self = .object(members)
        }
    }

    /// The value as a message quotes it: a string's text, anything else as
    /// compact JSON with sorted keys.
    package var text: String {
        if case let .string(s) = self { return s }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
    }
}

/// A value as JSONEncoder and JSONDecoder see it, for JSON that badge passes
/// on or reads without a type of its own (a ComfyUI workflow, a
/// `bodyTemplate` filled in, a jobs API's output).
///
/// Encoding: a number whose literal is a whole number that fits an Int64 or
/// a UInt64 is written as those digits, any other as its Double; an object is
/// written as a dictionary (a key given twice keeps its last value), so an
/// encoder with `.sortedKeys` orders its keys by their bytes.
///
/// Decoding tries each kind in turn: every JSON value is one of them. Whole
/// numbers stay exact (their digits are the literal); an object's members
/// come sorted by key, since a decoder does not say their order; every node
/// stands at `documentStart`. A value inside more than `JSONParser.maxDepth`
/// arrays and objects, counted from the top of the document, is refused.
/// How many values and bytes the decoder is given is bounded by its caller
/// (`JSONBudget`, a byte limit).
extension JSONNode.Value: Codable {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard decoder.codingPath.count <= JSONParser.maxDepth else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "nesting deeper than \(JSONParser.maxDepth) levels")
        }
        if container.decodeNil() {
            self = .null
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let object = try? container.decode([String: Self].self) {
            self = .object(object.sorted { $0.key < $1.key }.map { key, value in
                JSONMember(key: key, keyLocation: .documentStart, value: JSONNode(value))
            })
        } else if let array = try? container.decode([Self].self) {
            self = .array(array.map { JSONNode($0) })
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let whole = try? container.decode(Int64.self) {
            self = .number(whole)
        } else if let whole = try? container.decode(UInt64.self) {
            self = .number(whole)
        } else {
            self = .number(try container.decode(Double.self))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .bool(b): try container.encode(b)
        case let .number(n, literal):
            if let whole = Int64(literal) {
                try container.encode(whole)
            } else if let whole = UInt64(literal) {
                try container.encode(whole)
            } else {
                try container.encode(n)
            }
        case let .string(s): try container.encode(s)
        case let .array(items): try container.encode(items.map(\.value))
        case let .object(members):
            var object: [String: Self] = [:]
            for member in members { object[member.key] = member.value.value }
            try container.encode(object)
        }
    }
}

extension JSONNode.Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int64) { self = .number(value) }
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(arrayLiteral elements: Self...) { self = .array(elements.map { JSONNode($0) }) }
    /// Members in the order written.
    package init(dictionaryLiteral elements: (String, Self)...) {
        self = .object(elements.map { JSONMember(key: $0.0, keyLocation: .documentStart, value: JSONNode($0.1)) })
    }
}

package struct JSONMember: Sendable, Hashable {
    package var key: String
    package var keyLocation: SourceLocation
    package var value: JSONNode

    package init(key: String, keyLocation: SourceLocation, value: JSONNode) {
        self.key = key
        self.keyLocation = keyLocation
        self.value = value
    }
}

/// A strict RFC 8259 parser. Unlike Foundation's decoders it reports the line
/// and column of every error, and it refuses what they silently accept:
/// duplicate keys, trailing commas, comments, and bytes that are not UTF-8.
package struct JSONParser {
    package static let maxDepth = 128
    /// The most values one document may hold (every object, array, member
    /// value and element). A parsed value costs ~140 bytes: 60 MB of `[0,0,…]`
    /// took 4.3 GB before parsing stopped at the first value past this.
    package static let maxNodes = 1_000_000

    private let bytes: [UInt8]
    private let file: String?
    private var index = 0
    private var line: Int
    private var lineStart = 0
    private var depth = 0
    private var nodes = 0
    private let nodeLimit: Int
    /// Where the bytes stand in their file (a line of JSON Lines): positions,
    /// those inside messages too, are the file's.
    private let firstLine: Int
    private let baseOffset: Int

    private init(bytes: [UInt8], file: String?, nodeLimit: Int, firstLine: Int = 1, baseOffset: Int = 0) {
        self.bytes = bytes
        self.file = file
        self.nodeLimit = nodeLimit
        self.firstLine = firstLine
        self.baseOffset = baseOffset
        self.line = firstLine
    }

    /// Parses one JSON document. `file` is used in error messages.
    package static func parse(_ data: Data, file: String? = nil) throws -> JSONNode {
        var used = 0
        return try parse(data, file: file, maxNodes: maxNodes, used: &used)
    }

    /// Parses one JSON document of at most `maxNodes` values, adding the
    /// values it holds to `used` (JSON Lines share one budget across lines).
    /// A document that starts at `line` and byte `offset` of its file (a line
    /// of JSON Lines) has its positions counted from there.
    package static func parse(
        _ data: Data, file: String?, maxNodes: Int, used: inout Int, line: Int = 1, offset: Int = 0
    ) throws -> JSONNode {
        var parser = JSONParser(bytes: [UInt8](data), file: file, nodeLimit: maxNodes - used, firstLine: line, baseOffset: offset)
        // What was parsed counts, a document that fails included: past the limit, `used` is too.
        defer { used += parser.nodes }
        return try parser.parseDocument()
    }

    package static func parse(_ text: String, file: String? = nil) throws -> JSONNode {
        try parse(Data(text.utf8), file: file)
    }

    // MARK: - Positions

    /// The column last worked out, so the next one on the same line is
    /// counted on from there: the parser moves forward, so every byte of a
    /// line is counted once, however many values the line holds.
    private final class ColumnMark {
        var lineStart = -1
        var offset = 0
        var column = 1
    }

    private let mark = ColumnMark()

    private func location(at offset: Int) -> SourceLocation {
        // Columns count characters, not bytes: skip UTF-8 continuation bytes.
        var column = 1
        var i = lineStart
        if mark.lineStart == lineStart && mark.offset <= offset {
            column = mark.column
            i = mark.offset
        }
        while i < offset && i < bytes.count {
            if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        mark.lineStart = lineStart
        mark.offset = i
        mark.column = column
        return SourceLocation(line: line, column: column, offset: baseOffset + offset)
    }

    private var here: SourceLocation { location(at: index) }

    private func fail(_ message: String, at loc: SourceLocation? = nil, hint: String? = nil) -> BadgeError {
        BadgeError(.config, message, path: file, location: loc ?? here, hint: hint)
    }

    private func describe(_ byte: UInt8) -> String {
        switch byte {
        case 0x20...0x7E: return "'\(Character(Unicode.Scalar(byte)))'"
        default: return String(format: "byte 0x%02X", byte)
        }
    }

    // MARK: - Grammar

    private mutating func parseDocument() throws -> JSONNode {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
            lineStart = 3
        }
        try validateUTF8()
        skipWhitespace()
        guard index < bytes.count else {
            throw fail("the file is empty", hint: "a configuration is a JSON object: {}")
        }
        let node = try parseValue()
        skipWhitespace()
        if index < bytes.count {
            throw fail(
                "unexpected \(describe(bytes[index])) after the end of the JSON value",
                hint: "a JSON file holds exactly one value; remove what follows it")
        }
        return node
    }

    private func validateUTF8() throws {
        var i = index
        var lineNo = firstLine
        var lineBegin = index
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x0A {
                lineNo += 1
                lineBegin = i + 1
                i += 1
                continue
            }
            if b < 0x80 {
                i += 1
                continue
            }
            let length: Int
            switch b {
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: length = 0
            }
            var ok = length > 0 && i + length <= bytes.count
            if ok {
                for k in 1..<length where bytes[i + k] & 0xC0 != 0x80 { ok = false }
            }
            if ok, length == 3 {
                let scalar = (UInt32(b & 0x0F) << 12) | (UInt32(bytes[i + 1] & 0x3F) << 6)
                ok = scalar >= 0x800 && !(0xD800...0xDFFF).contains(scalar)
            }
            if ok, length == 4 {
                let scalar = (UInt32(b & 0x07) << 18) | (UInt32(bytes[i + 1] & 0x3F) << 12)
                ok = scalar >= 0x10000 && scalar <= 0x10FFFF
            }
            if !ok {
                var column = 1
                for j in lineBegin..<i where bytes[j] & 0xC0 != 0x80 { column += 1 }
                throw BadgeError(
                    .config, String(format: "invalid UTF-8 (byte 0x%02X at byte offset %d)", b, baseOffset + i),
                    path: file, location: SourceLocation(line: lineNo, column: column, offset: baseOffset + i),
                    hint: "save the file as UTF-8")
            }
            i += length
        }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D:
                index += 1
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            default:
                return
            }
        }
    }

    private mutating func parseValue() throws -> JSONNode {
        guard index < bytes.count else {
            throw fail("unexpected end of file where a value was expected")
        }
        nodes += 1
        if nodes > nodeLimit {
            throw fail("the file holds more than \(Self.maxNodes) JSON values; badge reads no more",
                       hint: "split it (a batch manifest can also run in shards: --shard K/N)")
        }
        let start = here
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return JSONNode(.string(try parseString()), at: start)
        case UInt8(ascii: "t"): try expectWord("true"); return JSONNode(.bool(true), at: start)
        case UInt8(ascii: "f"): try expectWord("false"); return JSONNode(.bool(false), at: start)
        case UInt8(ascii: "n"): try expectWord("null"); return JSONNode(.null, at: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "/"):
            throw fail("comments are not allowed in JSON", hint: "remove the comment")
        case UInt8(ascii: "'"):
            throw fail("strings must use double quotes (\"), not single quotes")
        default:
            if let word = bareWord() { throw bareWordFailure(word) }
            throw fail("unexpected \(describe(bytes[index])) where a value was expected")
        }
    }

    private mutating func expectWord(_ word: String) throws {
        let found = bareWord() ?? ""
        guard found == word else { throw bareWordFailure(found, near: word) }
        index += word.utf8.count
    }

    /// The letters, digits and underscores from here on: a word written
    /// where a value was expected (`nul`, `True`, `yes`). Only those bytes,
    /// so it prints as it is; at most 40 of them.
    private func bareWord() -> String? {
        var end = index
        while end < bytes.count, isIdentifierByte(bytes[end]) { end += 1 }
        guard end > index else { return nil }
        let word = String(decoding: bytes[index..<min(end, index + 40)], as: UTF8.self)
        return end - index > 40 ? word + "…" : word
    }

    /// What is wrong with `word` where a value was expected: a misspelt
    /// `true`, `false` or `null` (`near` is the one its first letter began),
    /// one in capitals, another language's null, or text without its quotes.
    private func bareWordFailure(_ word: String, near literal: String? = nil) -> BadgeError {
        let lower = word.lowercased()
        if ["true", "false", "null"].contains(lower) {
            return fail("'\(word)' is not JSON; it is written in lower case: \(lower)")
        }
        if ["none", "nil", "undefined"].contains(lower) {
            return fail("'\(word)' is not JSON; no value is written null")
        }
        if let literal, literal.hasPrefix(word) || word.hasPrefix(literal) {
            return fail("invalid literal '\(word)'; expected '\(literal)'")
        }
        return fail("unexpected '\(word)' where a value was expected",
                    hint: "text is written in double quotes: \"\(word)\"")
    }

    private func isIdentifierByte(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x5F
    }

    private mutating func enterContainer() throws {
        depth += 1
        if depth > Self.maxDepth {
            throw fail("nesting deeper than \(Self.maxDepth) levels")
        }
    }

    private mutating func parseObject() throws -> JSONNode {
        let start = here
        try enterContainer()
        index += 1  // {
        var members: [JSONMember] = []
        var seen: [String: SourceLocation] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return JSONNode(.object([]), at: start)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else {
                throw fail("unexpected end of file: the object opened at line \(start.line), column \(start.column) is not closed")
            }
            if bytes[index] == UInt8(ascii: "}") {
                throw fail("trailing comma before '}'", hint: "remove the comma after the last member")
            }
            guard bytes[index] == UInt8(ascii: "\"") else {
                if bytes[index] == UInt8(ascii: "/") {
                    throw fail("comments are not allowed in JSON", hint: "remove the comment")
                }
                throw fail("expected a key in double quotes, found \(describe(bytes[index]))")
            }
            let keyLocation = here
            let key = try parseString()
            if let first = seen[key] {
                throw fail(
                    "duplicate key \(ConfigExcerpt.quoted(key)) (first defined at line \(first.line), column \(first.column))",
                    at: keyLocation, hint: "keep one of the two")
            }
            seen[key] = keyLocation
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw fail("expected ':' after the key \(ConfigExcerpt.quoted(key))")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            members.append(JSONMember(key: key, keyLocation: keyLocation, value: value))
            skipWhitespace()
            guard index < bytes.count else {
                throw fail("unexpected end of file: the object opened at line \(start.line), column \(start.column) is not closed")
            }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                depth -= 1
                return JSONNode(.object(members), at: start)
            }
            throw fail("expected ',' or '}' after the value of \(ConfigExcerpt.quoted(key)), found \(describe(bytes[index]))",
                       hint: bytes[index] == UInt8(ascii: "\"") ? "a comma is missing" : nil)
        }
    }

    private mutating func parseArray() throws -> JSONNode {
        let start = here
        try enterContainer()
        index += 1  // [
        var items: [JSONNode] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return JSONNode(.array([]), at: start)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else {
                throw fail("unexpected end of file: the array opened at line \(start.line), column \(start.column) is not closed")
            }
            if bytes[index] == UInt8(ascii: "]") {
                throw fail("trailing comma before ']'", hint: "remove the comma after the last element")
            }
            items.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else {
                throw fail("unexpected end of file: the array opened at line \(start.line), column \(start.column) is not closed")
            }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return JSONNode(.array(items), at: start)
            }
            throw fail("expected ',' or ']' in the array, found \(describe(bytes[index]))")
        }
    }

    private mutating func parseString() throws -> String {
        let start = here
        index += 1  // opening quote
        var out = [UInt8]()
        while true {
            guard index < bytes.count else {
                throw fail("unexpected end of file inside the string that starts here", at: start)
            }
            let b = bytes[index]
            switch b {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                try parseEscape(into: &out)
            case 0x00..<0x20:
                throw fail(b == 0x0A
                    ? "line break inside a string (is a closing quote missing?)"
                    : String(format: "control character 0x%02X inside a string", b),
                    hint: b == 0x0A ? nil : "write it as an escape such as \\n or \\u00XX")
            default:
                out.append(b)
                index += 1
            }
        }
    }

    private mutating func parseEscape(into out: inout [UInt8]) throws {
        guard index < bytes.count else { throw fail("unexpected end of file in an escape") }
        let b = bytes[index]
        index += 1
        switch b {
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "/"): out.append(0x2F)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw fail("a high surrogate \\u escape is not followed by a low surrogate")
                }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid low surrogate in a \\u escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw fail("a lone low surrogate in a \\u escape")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
            out.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            index -= 2  // point at the backslash
            throw fail("invalid escape \\\(Character(Unicode.Scalar(b)))",
                       hint: "valid escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX")
        }
    }

    private mutating func parseHex4() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count, let digit = hexValue(bytes[index]) else {
                throw fail("a \\u escape needs four hex digits")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private func hexValue(_ b: UInt8) -> UInt32? {
        switch b {
        case 0x30...0x39: return UInt32(b - 0x30)
        case 0x41...0x46: return UInt32(b - 0x41 + 10)
        case 0x61...0x66: return UInt32(b - 0x61 + 10)
        default: return nil
        }
    }

    private mutating func parseNumber() throws -> JSONNode {
        let start = here
        let begin = index
        func isDigit(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= 0x30 && bytes[i] <= 0x39 }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard isDigit(index) else { throw fail("invalid number", at: start) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if isDigit(index) { throw fail("numbers may not have leading zeros", at: start) }
        } else {
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else { throw fail("a decimal point must be followed by digits", at: start) }
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard isDigit(index) else { throw fail("an exponent must have digits", at: start) }
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count, isIdentifierByte(bytes[index]) {
            throw fail("invalid number", at: start)
        }
        let literal = String(decoding: bytes[begin..<index], as: UTF8.self)
        guard let value = Double(literal), value.isFinite else {
            throw fail("the number \(ConfigExcerpt.of(literal)) is out of range", at: start)
        }
        return JSONNode(.number(value, literal: literal), at: start)
    }
}

/// Writes a `JSONNode` back as pretty-printed JSON, keys in their file order.
package enum JSONWriter {
    package static func write(_ node: JSONNode, indent: String = "  ") -> String {
        var out = ""
        write(node, level: 0, indent: indent, into: &out)
        out.append("\n")
        return out
    }

    private static func write(_ node: JSONNode, level: Int, indent: String, into out: inout String) {
        let pad = String(repeating: indent, count: level + 1)
        let closePad = String(repeating: indent, count: level)
        switch node.value {
        case .null: out += "null"
        case let .bool(b): out += b ? "true" : "false"
        case let .number(_, literal): out += literal
        case let .string(s): out += quote(s)
        case let .array(items):
            if items.isEmpty { out += "[]"; return }
            out += "[\n"
            for (i, item) in items.enumerated() {
                out += pad
                write(item, level: level + 1, indent: indent, into: &out)
                out += i == items.count - 1 ? "\n" : ",\n"
            }
            out += closePad + "]"
        case let .object(members):
            if members.isEmpty { out += "{}"; return }
            out += "{\n"
            for (i, member) in members.enumerated() {
                out += pad + quote(member.key) + ": "
                write(member.value, level: level + 1, indent: indent, into: &out)
                out += i == members.count - 1 ? "\n" : ",\n"
            }
            out += closePad + "}"
        }
    }

    package static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04X", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// A value from a file quoted in an error: at most about 80 characters of it,
/// and how long it is when it is longer. A 100 KB number is not echoed whole.
public enum ConfigExcerpt {
    public static let limit = 80

    public static func of(_ text: String) -> String {
        guard text.count > limit else { return text }
        return String(text.prefix(limit)) + "… (\(text.count) characters)"
    }

    /// `text` in double quotes, cut as `of` cuts it (the count outside the quotes).
    public static func quoted(_ text: String) -> String {
        guard text.count > limit else { return JSONWriter.quote(text) }
        return JSONWriter.quote(String(text.prefix(limit)) + "…") + " (\(text.count) characters)"
    }
}
