import BadgeKit
import Foundation

/// The exec protocol, version 1 (docs/PLUGINS.md is its specification): one
/// JSON request on the program's standard input, one JSON result line on its
/// standard output. Only this file knows the wire format.
enum ExecProtocol {
    static let version = 1

    // MARK: - Requests

    static func generateRequest(_ request: BadgeRequest, options: [String: String], output: URL) -> Data {
        encode([
            ("protocol", number(version)),
            ("kind", .string("generate")),
            ("prompt", .string(request.prompt)),
            ("size", number(request.size)),
            ("style", request.style.map { .string($0) } ?? .null),
            ("seed", .number(Double(request.seed), literal: String(request.seed))),
            ("options", .object(options.keys.sorted().map { member($0, .string(options[$0]!)) })),
            ("output", .string(output.path)),
        ])
    }

    static func availabilityRequest() -> Data {
        encode([("protocol", number(version)), ("kind", .string("availability"))])
    }

    /// The same fields as environment variables, for plugins in languages
    /// where parsing JSON is a chore (a shell script). The JSON stays authoritative.
    static func environment(_ request: BadgeRequest?, output: URL?) -> [String: String] {
        var env = ["BADGE_PROTOCOL": String(version), "BADGE_KIND": request == nil ? "availability" : "generate"]
        if let request, let output {
            env["BADGE_PROMPT"] = request.prompt
            env["BADGE_SIZE"] = String(request.size)
            env["BADGE_SEED"] = String(request.seed)
            env["BADGE_STYLE"] = request.style ?? ""
            env["BADGE_OUTPUT"] = output.path
        }
        return env
    }

    // MARK: - Results

    /// What a generate request's result line says.
    enum Outcome: Equatable {
        case success(Metadata)
        case failure(message: String, hint: String?)
    }

    /// `metadata` of a successful result: the keys badge understands, and the rest kept as text.
    struct Metadata: Equatable {
        var model: String?
        var seed: UInt64?
        var revisedPrompt: String?
        var extra: [String: String] = [:]
    }

    /// A result line that breaks the protocol; the message says how.
    struct Violation: Error, Equatable {
        var message: String
    }

    static let maxExtraKeys = 32
    static let maxExtraValueLength = 2000

    static func generateOutcome(_ line: String) throws(Violation) -> Outcome {
        let object = try resultObject(line)
        guard case let .bool(ok)? = object["ok"] else {
            throw Violation(message: "its result has no \"ok\": true or false")
        }
        if !ok {
            guard case let .string(message)? = object["error"], !message.isEmpty else {
                throw Violation(message: "its result says \"ok\": false without an \"error\" message")
            }
            return .failure(message: message, hint: string(object["hint"]))
        }
        var metadata = Metadata()
        switch object["metadata"] {
        case nil, .null?: break
        case let .object(members)?:
            for member in members {
                switch (member.key, member.value.value) {
                case ("model", .string(let s)): metadata.model = s
                case ("revisedPrompt", .string(let s)): metadata.revisedPrompt = s
                case ("seed", .number(_, let literal)):
                    guard let seed = UInt64(literal) else {
                        throw Violation(message: "its metadata.seed \(literal) is not a whole number from 0 to \(UInt64.max)")
                    }
                    metadata.seed = seed
                case ("seed", .string(let text)):
                    guard let seed = LosslessUInt64.parse(text) else {
                        throw Violation(message: "its metadata.seed \"\(text)\" is not a whole number from 0 to \(UInt64.max)")
                    }
                    metadata.seed = seed
                case (let key, .string(let s)): metadata.extra[key] = s
                case (let key, .number(_, let literal)): metadata.extra[key] = literal
                case (let key, .bool(let b)): metadata.extra[key] = String(b)
                case (let key, _):
                    throw Violation(message: "its metadata.\(key) is \(member.value.kindName); metadata values are strings, numbers or booleans")
                }
            }
        default:
            throw Violation(message: "its result's \"metadata\" is not an object")
        }
        if metadata.extra.count > maxExtraKeys {
            throw Violation(message: "its metadata has \(metadata.extra.count) extra keys; at most \(maxExtraKeys) are kept")
        }
        for (key, value) in metadata.extra {
            guard key.wholeMatch(of: /[A-Za-z0-9][A-Za-z0-9._-]{0,63}/) != nil else {
                throw Violation(message: "its metadata key \"\(key)\" is not a plain name (letters, digits, '.', '_', '-')")
            }
            metadata.extra[key] = String(value.prefix(maxExtraValueLength))
        }
        return .success(metadata)
    }

    static func availabilityOutcome(_ line: String) throws(Violation) -> Availability {
        let object = try resultObject(line)
        guard case let .bool(available)? = object["available"] else {
            throw Violation(message: "its availability answer has no \"available\": true or false")
        }
        if available { return .available }
        guard let reason = string(object["reason"]), !reason.isEmpty else {
            throw Violation(message: "its availability answer says \"available\": false without a \"reason\"")
        }
        return .unavailable(reason: reason, hint: string(object["hint"]))
    }

    // MARK: - JSON

    private static func resultObject(_ line: String) throws(Violation) -> [String: JSONNode.Value] {
        let node: JSONNode
        do {
            node = try JSONParser.parse(line)
        } catch {
            throw Violation(message: "its result line is not JSON (\(describe(error)))")
        }
        guard case let .object(members) = node.value else {
            throw Violation(message: "its result line is \(node.kindName), not a JSON object")
        }
        var object: [String: JSONNode.Value] = [:]
        for member in members { object[member.key] = member.value.value }
        if case let .number(_, literal)? = object["protocol"], literal != String(version) {
            throw Violation(message: "it answered in protocol \(literal); badge speaks protocol \(version)")
        }
        return object
    }

    private static func describe(_ error: any Error) -> String {
        (error as? BadgeError)?.message ?? String(describing: error)
    }

    private static func string(_ value: JSONNode.Value?) -> String? {
        if case let .string(s)? = value { return s }
        return nil
    }

    private static let origin = SourceLocation(line: 1, column: 1, offset: 0)

    private static func number(_ n: Int) -> JSONNode.Value { .number(Double(n), literal: String(n)) }

    private static func member(_ key: String, _ value: JSONNode.Value) -> JSONMember {
        JSONMember(key: key, keyLocation: origin, value: JSONNode(value, at: origin))
    }

    /// One line of compact JSON, ending in a newline.
    private static func encode(_ members: [(String, JSONNode.Value)]) -> Data {
        let node = JSONNode(.object(members.map { member($0.0, $0.1) }), at: origin)
        // With no indent the writer's only newlines are between tokens (strings escape theirs).
        let text = JSONWriter.write(node, indent: "").replacingOccurrences(of: ",\n", with: ", ")
            .replacingOccurrences(of: "\n", with: "")
        return Data((text + "\n").utf8)
    }
}
