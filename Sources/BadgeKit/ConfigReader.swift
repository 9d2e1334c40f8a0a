import Foundation

/// A JSON value being read as configuration: it knows its file and its key
/// path, so every complaint names file, line:column and key.
public struct ConfigValue: Sendable {
    package let node: JSONNode
    public let keyPath: String
    public let file: String?

    package init(node: JSONNode, keyPath: String, file: String?) {
        self.node = node
        self.keyPath = keyPath
        self.file = file
    }

    public var location: SourceLocation { node.location }

    /// An error located at this value.
    public func error(_ message: String, hint: String? = nil) -> BadgeError {
        BadgeError(.config, message, path: file, location: node.location, keyPath: keyPath, hint: hint)
    }

    private func typeError(_ expected: String) -> BadgeError {
        error("expected \(expected), found \(node.kindName)")
    }

    public func string() throws -> String {
        guard case let .string(s) = node.value else { throw typeError("a string") }
        return s
    }

    public func nonEmptyString() throws -> String {
        let s = try string()
        guard !s.trimmingCharacters(in: .whitespaces).isEmpty else { throw error("must not be empty") }
        return s
    }

    public func bool() throws -> Bool {
        guard case let .bool(b) = node.value else { throw typeError("true or false") }
        return b
    }

    public func int(in range: ClosedRange<Int>? = nil) throws -> Int {
        guard case let .number(value, literal) = node.value else { throw typeError("a whole number") }
        guard let int = Int(literal) ?? (value.rounded() == value && abs(value) < 9e15 ? Int(value) : nil) else {
            throw error("expected a whole number, found \(ConfigExcerpt.of(literal))")
        }
        if let range, !range.contains(int) {
            throw error("\(int) is out of range", hint: "use a value from \(range.lowerBound) to \(range.upperBound)")
        }
        return int
    }

    /// A 64-bit whole number written as a JSON integer (`7676146793421657753`) or as a
    /// string of its decimal digits (`"7676146793421657753"`), the form badge writes:
    /// readers that parse numbers as doubles (JavaScript, jq 1.6) keep a string exact.
    public func uint64() throws -> UInt64 {
        let literal: String, shown: String
        switch node.value {
        case let .number(_, text): (literal, shown) = (text, ConfigExcerpt.of(text))
        case let .string(text): (literal, shown) = (text, ConfigExcerpt.quoted(text))
        default: throw typeError("a whole number (or a string of its digits)")
        }
        guard let v = LosslessUInt64.parse(literal) else {
            throw error("expected a whole number from 0 to \(UInt64.max), found \(shown)",
                        hint: "write 64-bit numbers such as seeds as strings, e.g. \"seed\": \"7676146793421657753\"")
        }
        return v
    }

    public func double(in range: ClosedRange<Double>? = nil) throws -> Double {
        guard case let .number(value, _) = node.value else { throw typeError("a number") }
        if let range, !range.contains(value) {
            throw error("\(value) is out of range", hint: "use a value from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// One of a fixed set of strings, with the set named in the error.
    public func oneOf(_ choices: [String]) throws -> String {
        let s = try string()
        guard choices.contains(s) else {
            let suggestion = ConfigObject.closest(to: s, in: choices).map { "did you mean \"\($0)\"? " } ?? ""
            throw error("\(ConfigExcerpt.quoted(s)) is not one of \(choices.map { "\"\($0)\"" }.joined(separator: ", "))",
                        hint: suggestion.isEmpty ? nil : suggestion.trimmingCharacters(in: .whitespaces))
        }
        return s
    }

    public func object() throws -> ConfigObject {
        guard case let .object(members) = node.value else { throw typeError("an object") }
        return ConfigObject(members: members, node: node, keyPath: keyPath, file: file)
    }

    public func array() throws -> [ConfigValue] {
        guard case let .array(items) = node.value else { throw typeError("an array") }
        return items.enumerated().map { i, item in
            ConfigValue(node: item, keyPath: "\(keyPath)[\(i)]", file: file)
        }
    }

    public func stringArray(nonEmpty: Bool = false) throws -> [String] {
        let items = try array()
        if nonEmpty && items.isEmpty { throw error("must not be an empty array") }
        return try items.map { try $0.string() }
    }

    /// An object whose values are all strings (an environment, headers).
    public func stringMap() throws -> [String: String] {
        let object = try object()
        var map: [String: String] = [:]
        for key in object.keys { map[key] = try object.require(key).string() }
        return map
    }
}

/// A JSON object being read as configuration. Reading is strict: call
/// `allowOnly(_:)` with the keys the schema knows and every other key is an
/// error that suggests the nearest known one.
public struct ConfigObject: Sendable {
    package let members: [JSONMember]
    package let node: JSONNode
    public let keyPath: String
    public let file: String?

    package init(members: [JSONMember], node: JSONNode, keyPath: String, file: String?) {
        self.members = members
        self.node = node
        self.keyPath = keyPath
        self.file = file
    }

    /// An empty object, as if written `{}` at `keyPath`.
    public static func empty(keyPath: String, file: String? = nil) -> ConfigObject {
        let node = JSONNode(.object([]), at: SourceLocation(line: 1, column: 1, offset: 0))
        return ConfigObject(members: [], node: node, keyPath: keyPath, file: file)
    }

    public var keys: [String] { members.map(\.key) }

    public func childPath(_ key: String) -> String {
        let plain = !key.isEmpty && key.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-"
        }
        if !plain { return "\(keyPath)[\(JSONWriter.quote(ConfigExcerpt.of(key)))]" }
        if key.count > ConfigExcerpt.limit { return "\(keyPath)[\(JSONWriter.quote(ConfigExcerpt.of(key)))]" }
        return keyPath.isEmpty ? key : "\(keyPath).\(key)"
    }

    public func value(_ key: String) -> ConfigValue? {
        guard let member = members.first(where: { $0.key == key }) else { return nil }
        return value(of: member)
    }

    /// The value of one of `members`, without looking for it by key.
    package func value(of member: JSONMember) -> ConfigValue {
        ConfigValue(node: member.value, keyPath: childPath(member.key), file: file)
    }

    public func require(_ key: String, hint: String? = nil) throws -> ConfigValue {
        guard let value = value(key) else {
            throw BadgeError(.config, "the required key \"\(key)\" is missing", path: file,
                             location: node.location, keyPath: keyPath, hint: hint)
        }
        return value
    }

    /// Refuses keys outside `allowed`, pointing at the first unknown key.
    public func allowOnly(_ allowed: [String]) throws {
        for member in members where !allowed.contains(member.key) {
            var hint = "known keys here: \(allowed.sorted().joined(separator: ", "))"
            if let near = Self.closest(to: member.key, in: allowed) { hint = "did you mean \"\(near)\"? " + hint }
            throw BadgeError(.config, "unknown key \(ConfigExcerpt.quoted(member.key))", path: file, location: member.keyLocation,
                             keyPath: childPath(member.key), hint: hint)
        }
    }

    public func string(_ key: String) throws -> String? { try value(key)?.string() }
    public func bool(_ key: String) throws -> Bool? { try value(key)?.bool() }
    public func int(_ key: String, in range: ClosedRange<Int>? = nil) throws -> Int? { try value(key)?.int(in: range) }
    public func object(_ key: String) throws -> ConfigObject? { try value(key)?.object() }

    /// The nearest candidate by edit distance, if it is near enough to be a typo.
    public static func closest(to word: String, in candidates: [String]) -> String? {
        let lower = word.lowercased()
        let scored = candidates.map { ($0, editDistance(lower, $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(2, word.count / 3) else { return nil }
        return best.0
    }

    /// Optimal string alignment distance: Levenshtein's insertions, deletions and
    /// substitutions, and a swap of two neighbours counts as one edit, the commonest
    /// typo ("stlye" is 1 from "style" and 2 from "store"; plain Levenshtein says 2 and 2).
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)
                }
            }
            beforePrevious = previous
            previous = current
        }
        return previous[b.count]
    }
}
