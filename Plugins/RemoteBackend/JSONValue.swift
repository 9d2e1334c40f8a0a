import BadgeKit
import Foundation

/// A JSON value of any shape, for what badge passes on without a type of its
/// own: a ComfyUI workflow, a `bodyTemplate` filled in, a jobs API's output.
/// Whole numbers stay whole and exact (a seed is a UInt64); other numbers are
/// doubles. Objects are written with sorted keys (`JSONBody.encode`).
enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A whole number that fits an Int64.
    case integer(Int64)
    /// A whole number above Int64.max.
    case unsigned(UInt64)
    /// Any other number.
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// A whole number, as `.integer` when it fits one.
    static func number(_ value: UInt64) -> JSONValue {
        value <= UInt64(Int64.max) ? .integer(Int64(value)) : .unsigned(value)
    }

    /// A node of badge's parser (a config's template, a workflow file). A number
    /// written as a whole number stays one; any other is a double.
    init(_ node: JSONNode) {
        switch node.value {
        case .null: self = .null
        case let .bool(b): self = .bool(b)
        case let .number(n, literal):
            if let whole = Int64(literal) {
                self = .integer(whole)
            } else if let whole = UInt64(literal) {
                self = .unsigned(whole)
            } else {
                self = .double(n)
            }
        case let .string(s): self = .string(s)
        case let .array(items): self = .array(items.map(JSONValue.init))
        case let .object(members):
            // A key given twice keeps its last value, as JSON readers do.
            var object: [String: JSONValue] = [:]
            for member in members { object[member.key] = JSONValue(member.value) }
            self = .object(object)
        }
    }

    /// The value as a message quotes it: a string's text, anything else as compact JSON.
    var text: String {
        if case let .string(s) = self { return s }
        return (try? JSONBody.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
    }
}

extension JSONValue: Codable {
    /// Tries each kind in turn: every JSON value is one of them.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let object = try? container.decode([String: JSONValue].self) {
            self = .object(object)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let whole = try? container.decode(Int64.self) {
            self = .integer(whole)
        } else if let whole = try? container.decode(UInt64.self) {
            self = .unsigned(whole)
        } else {
            self = .double(try container.decode(Double.self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .bool(b): try container.encode(b)
        case let .integer(n): try container.encode(n)
        case let .unsigned(n): try container.encode(n)
        case let .double(n): try container.encode(n)
        case let .string(s): try container.encode(s)
        case let .array(items): try container.encode(items)
        case let .object(members): try container.encode(members)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int64) { self = .integer(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements) { _, last in last })
    }
}
