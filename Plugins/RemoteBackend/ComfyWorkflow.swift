import BadgeKit
import Foundation

/// A ComfyUI workflow in API format (what ComfyUI's "Export (API)" writes: an
/// object of nodes by id, each with `class_type` and `inputs`), and where the
/// config says badge's values go in it ("6.inputs.text"). Read and checked
/// when the config is read, so `badge config validate` catches a wrong file,
/// the UI format, or a mapping to a node or input that is not there.
struct ComfyWorkflow: Sendable {
    /// What badge fills in.
    enum Slot: String, Sendable, CaseIterable {
        case prompt, negativePrompt, seed, width, height, image, denoise
    }

    struct Target: Sendable, Hashable {
        var node: String
        var input: String
    }

    static let maxFileBytes = 4 << 20
    static let exportHint = "in ComfyUI, turn on the dev mode options (Settings → Comfy → Dev Mode) and use Workflow → Export (API) (older versions: \"Save (API Format)\"); Plugins/Examples/comfyui/README.md shows how"

    let path: String
    let graph: JSONNode
    let targets: [Slot: Target]

    /// The checkpoint files the workflow loads (CheckpointLoaderSimple's `ckpt_name`).
    var checkpoints: [String] {
        guard case let .object(nodes) = graph.value else { return [] }
        return nodes.compactMap { member -> String? in
            guard case let .object(fields) = member.value.value,
                  case let .string(kind)? = fields.first(where: { $0.key == "class_type" })?.value.value, kind == "CheckpointLoaderSimple",
                  case let .object(inputs)? = fields.first(where: { $0.key == "inputs" })?.value.value,
                  case let .string(name)? = inputs.first(where: { $0.key == "ckpt_name" })?.value.value
            else { return nil }
            return name
        }
    }

    /// Every node: its id, its class and its inputs that are values (not links to another node's output).
    var nodes: [(id: String, classType: String, values: [(name: String, value: JSONNode)])] {
        guard case let .object(members) = graph.value else { return [] }
        return members.compactMap { member in
            guard case let .object(fields) = member.value.value,
                  case let .string(kind)? = fields.first(where: { $0.key == "class_type" })?.value.value else { return nil }
            var values: [(name: String, value: JSONNode)] = []
            if case let .object(inputs)? = fields.first(where: { $0.key == "inputs" })?.value.value {
                for input in inputs {
                    if case .array = input.value.value { continue }
                    values.append((input.key, input.value))
                }
            }
            return (member.key, kind, values)
        }
    }

    /// Whether badge fills this node's input itself (the prompt, the seed, the uploaded picture...).
    func fills(node: String, input: String) -> Bool {
        targets.values.contains { $0.node == node && $0.input == input }
    }

    /// Reads the workflow `file` names (relative to `base`) and checks `mapping` against it.
    /// `required`: the slots this workflow must have a place for.
    static func load(_ file: ConfigValue, mapping: ConfigValue?, required: [Slot], base: URL) throws -> ComfyWorkflow {
        let path = BadgeConfig.resolvePath(try file.nonEmptyString(), relativeTo: base).path
        let data: Data
        let opened: stat
        do {
            let file = try RegularFile(path)
            data = try file.readAll(limit: maxFileBytes)
            opened = file.status
        } catch {
            throw file.error("cannot read the workflow \(path): \(error)", hint: "export the workflow from ComfyUI in API format and give its path")
        }
        // What the server runs, with the key: as trusted as the configuration that names it.
        if let distrust = FileTrust.distrust(of: path, opened: opened) {
            let (message, hint) = distrust.words(path: path, what: "workflow \(path)")
            throw file.error(message, hint: hint)
        }
        let graph = try JSONParser.parse(data, file: path)
        guard case let .object(nodes) = graph.value else {
            throw BadgeError(.config, "the workflow is \(graph.kindName), not a ComfyUI workflow in API format", path: path,
                             location: graph.location, hint: exportHint)
        }
        let keys = Set(nodes.map(\.key))
        if keys.contains("nodes") && keys.contains("links") {
            throw BadgeError(.config, "this is a ComfyUI workflow in the UI format (it has \"nodes\" and \"links\"); badge needs the API format",
                             path: path, location: graph.location, hint: exportHint)
        }
        for node in nodes {
            guard case let .object(fields) = node.value.value,
                  case .string? = fields.first(where: { $0.key == "class_type" })?.value.value,
                  case .object? = fields.first(where: { $0.key == "inputs" })?.value.value
            else {
                throw BadgeError(.config, "node \"\(node.key)\" has no \"class_type\" and \"inputs\": this is not a workflow in API format",
                                 path: path, location: node.value.location, hint: exportHint)
            }
        }
        if nodes.isEmpty {
            throw BadgeError(.config, "the workflow has no nodes", path: path, location: graph.location, hint: exportHint)
        }

        var targets: [Slot: Target] = [:]
        if let mapping {
            let object = try mapping.object()
            try object.allowOnly(Slot.allCases.map(\.rawValue))
            for member in object.members {
                let value = object.value(member.key)!
                let text = try value.nonEmptyString()
                let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                guard parts.count == 3, parts[1] == "inputs", !parts[0].isEmpty, !parts[2].isEmpty else {
                    throw value.error("\(ConfigExcerpt.quoted(text)) is not a place in the workflow", hint: "write it as NODE.inputs.NAME, e.g. \"6.inputs.text\"")
                }
                let ids = nodes.map(\.key).sorted { (Int($0) ?? .max, $0) < (Int($1) ?? .max, $1) }
                guard let node = nodes.first(where: { $0.key == parts[0] }) else {
                    throw value.error("the workflow \(path) has no node \"\(parts[0])\"", hint: "its nodes are: " + ids.joined(separator: ", "))
                }
                guard case let .object(fields) = node.value.value,
                      case let .object(inputs)? = fields.first(where: { $0.key == "inputs" })?.value.value,
                      case let .string(kind)? = fields.first(where: { $0.key == "class_type" })?.value.value
                else { continue }
                guard inputs.contains(where: { $0.key == parts[2] }) else {
                    throw value.error("node \"\(parts[0])\" (\(kind)) in \(path) has no input \"\(parts[2])\"",
                                      hint: "its inputs are: " + inputs.map(\.key).sorted().joined(separator: ", "))
                }
                targets[Slot(rawValue: member.key)!] = Target(node: parts[0], input: parts[2])
            }
        }
        for slot in required where targets[slot] == nil {
            throw (mapping ?? file).error("say where the \(slot.rawValue) goes in \(URL(fileURLWithPath: path).lastPathComponent)",
                                          hint: "e.g. \"\(slot.rawValue)\": \"6.inputs.text\" (a node id of the workflow, \"inputs\", an input name)")
        }
        return ComfyWorkflow(path: path, graph: graph, targets: targets)
    }

    /// The workflow with `values` put where the mapping says; slots without a value keep the workflow's own.
    func filled(_ values: [Slot: JSONNode.Value]) -> JSONNode.Value {
        var workflow = graph.value
        for (slot, target) in targets {
            guard let value = values[slot] else { continue }
            workflow[target.node]?["inputs"]?[target.input] = value
        }
        return workflow
    }
}
