import BadgeKit
import Foundation

/// JSON in and out of the remote APIs: request bodies encoded from their
/// types, answers decoded into theirs. badge's own parser (line:column) is for
/// configs and manifests; a server's answer is bounded and decoded here.
enum JSONBody {
    /// Sorted keys, slashes unescaped: one request is always the same bytes.
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// The answer as `T`, decoded only when it holds at most
    /// `JSONBudget.maxServerValues` values (the bytes are bounded by
    /// maxResponseBytes as they arrive). A failure names the field at fault.
    static func decode<T: Decodable>(
        _ type: T.Type, from response: HTTPResponse, context: ResponseContext, userInfo: [CodingUserInfoKey: any Sendable] = [:]
    ) throws -> T {
        guard JSONBudget.fits(response.body) else {
            throw BadgeError(.generationFailed,
                             "the server's answer holds more than \(JSONBudget.maxServerValues) JSON values (\(response.body.count) bytes); badge reads no more",
                             backend: context.backend, path: context.url,
                             hint: "an image API answers with a few values and the image; check that url points at the right API")
        }
        do {
            return try decoder(userInfo).decode(T.self, from: response.body)
        } catch let error as DecodingError {
            if error.context.codingPath.isEmpty, !error.isKeyNotFound {
                // Foundation says only "not valid JSON": badge's own parser says what and where.
                let kind = response.header("content-type") ?? "no content type"
                let what: String
                if response.body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "<") {
                    what = "a web page (\(kind), \(response.body.count) bytes), not the API's JSON"
                } else {
                    do {
                        let node = try JSONParser.parse(response.body)
                        if case .object = node.value {
                            what = "a JSON object badge cannot read (\(kind), \(response.body.count) bytes): \(error.context.debugDescription)"
                        } else {
                            what = "not a JSON object but \(node.kindName) (\(kind), \(response.body.count) bytes)"
                        }
                    } catch let parse as BadgeError {
                        what = "not JSON (\(kind), \(response.body.count) bytes): \(parse.message)\(parse.location.map { " at \($0)" } ?? "")"
                    }
                }
                throw BadgeError(.generationFailed, "the server's answer is " + what, backend: context.backend, path: context.url,
                                 hint: "check that url points at the API, not a web page")
            }
            throw BadgeError(.generationFailed, describe(error), backend: context.backend, path: context.url)
        }
    }

    /// `T` from `data`, or nil when it is not JSON of that shape or holds more than the budget's values.
    static func decodeIfValid<T: Decodable>(_ type: T.Type, from data: Data, userInfo: [CodingUserInfoKey: any Sendable] = [:]) -> T? {
        guard JSONBudget.fits(data) else { return nil }
        return try? decoder(userInfo).decode(T.self, from: data)
    }

    private static func decoder(_ userInfo: [CodingUserInfoKey: any Sendable]) -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.userInfo = userInfo
        return decoder
    }

    /// What is wrong with an answer, naming the field: `the answer's "data[0].url" is a number, not a string`.
    static func describe(_ error: DecodingError) -> String {
        switch error {
        case let .keyNotFound(key, context):
            return "the answer has no \"\(path(context.codingPath + [key]))\""
        case let .valueNotFound(type, context):
            return "the answer's \"\(path(context.codingPath))\" is null, not \(kind(type))"
        case let .typeMismatch(type, context):
            let found = found(in: context.debugDescription).map { " \($0)," } ?? ""
            return "the answer's \"\(path(context.codingPath))\" is\(found) not \(kind(type))"
        default:
            let context = error.context
            return "the answer's \"\(path(context.codingPath))\" is not valid: \(context.debugDescription.prefix(120))"
        }
    }

    /// `data[0].url`: keys joined by dots, array positions in brackets. A key
    /// can be the server's own (a node id), so control characters are dropped.
    static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue, key.stringValue == "Index \(index)" {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + OutsideText.printable(String(key.stringValue.prefix(80)), keepingNewlines: false)
            }
        }
        return text
    }

    /// What a user calls a value of `type` (a keyed container asks for a Dictionary, an unkeyed one for an Array).
    static func kind(_ type: Any.Type) -> String {
        if type is String.Type { return "a string" }
        if type is Bool.Type { return "a boolean" }
        if type is any Numeric.Type { return "a number" }
        let name = String(describing: type)
        if name.hasPrefix("Array<") { return "an array" }
        if name.hasPrefix("Dictionary<") { return "an object" }
        return name
    }

    /// The kind of value the decoder found, from its description ("... but found a number instead.").
    private static func found(in description: String) -> String? {
        guard let start = description.range(of: "but found "), let end = description.range(of: " instead", range: start.upperBound..<description.endIndex)
        else { return nil }
        switch description[start.upperBound..<end.lowerBound] {
        case "string", "a string": return "a string"
        case "number", "a number": return "a number"
        case "bool", "a bool", "a boolean": return "a boolean"
        case "array", "an array": return "an array"
        case "dictionary", "a dictionary", "an object": return "an object"
        case "null": return "null"
        default: return nil
        }
    }
}

extension DecodingError {
    var isKeyNotFound: Bool {
        if case .keyNotFound = self { return true }
        return false
    }

    var context: Context {
        switch self {
        case let .typeMismatch(_, context), let .valueNotFound(_, context), let .keyNotFound(_, context), let .dataCorrupted(context):
            return context
        @unknown default:
            return Context(codingPath: [], debugDescription: "\(self)")
        }
    }
}

/// Any key of a JSON object (a node id, a prompt id, a class name).
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

/// A value an answer may or may not carry in the expected form, nil when it
/// does not: for what badge reads only if it can (A1111's `info`, ComfyUI's
/// messages), never for what it needs.
struct Tolerant<Value: Decodable>: Decodable {
    var value: Value?

    init(from decoder: any Decoder) throws {
        value = try? Value(from: decoder)
    }
}

extension UnkeyedDecodingContainer {
    /// The next element as `T`, or nil when it is not one or there is none; moves past it either way.
    mutating func nextIfWellFormed<T: Decodable>(_ type: T.Type) -> T? {
        guard !isAtEnd else { return nil }
        return (try? decode(Tolerant<T>.self))?.value
    }
}

/// A place in an array that is passed over, whatever it holds.
struct Skipped: Decodable {
    init(from decoder: any Decoder) throws {}
}

/// The keys of a JSON object, without decoding their values.
struct ObjectKeys: Decodable {
    var keys: Set<String>

    init(from decoder: any Decoder) throws {
        keys = Set(try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue))
    }
}
