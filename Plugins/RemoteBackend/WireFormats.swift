import BadgeKit
import Foundation

// The bodies badge sends to each API and the parts of the answers it reads.
// Keys are the wire names; unset optional fields are left out, never sent as
// null; an answer's fields that badge does not read are not decoded.

// MARK: - OpenAI images

/// POST /images/generations (CreateImageRequest).
struct OpenAIGenerationRequest: Encodable {
    var prompt: String
    var n: Int
    var size: String
    var model: String?
    var quality: String?
    var background: String?
    var outputFormat: String?

    enum CodingKeys: String, CodingKey {
        case prompt, n, size, model, quality, background
        case outputFormat = "output_format"
    }
}

/// The answer to a generation or an edit: `data`, one item per image.
struct OpenAIImagesAnswer: Decodable {
    struct Item: Decodable {
        var b64JSON: String?
        var url: String?
        var revisedPrompt: String?

        enum CodingKeys: String, CodingKey {
            case url
            case b64JSON = "b64_json"
            case revisedPrompt = "revised_prompt"
        }
    }

    var data: [Item]?
}

/// An error answer's own words, from the first of these that is a string:
/// `error.message` (with ComfyUI's `error.details`), `error`, `detail`, `message`.
struct ServerErrorAnswer: Decodable {
    var said: String?

    private enum Key: String, CodingKey {
        case error, message, details, detail
    }

    init(from decoder: any Decoder) throws {
        let object = try decoder.container(keyedBy: Key.self)
        if let error = try? object.nestedContainer(keyedBy: Key.self, forKey: .error),
           let message = try? error.decode(String.self, forKey: .message) {
            // ComfyUI says which node in `details` ("Node ID '#4'"), apart from its message.
            let details = (try? error.decode(String.self, forKey: .details)) ?? ""
            said = !details.isEmpty && !message.contains(details) ? message + " (" + String(details.prefix(300)) + ")" : message
        } else {
            said = [Key.error, .detail, .message].lazy.compactMap { try? object.decode(String.self, forKey: $0) }.first
        }
    }
}

// MARK: - AUTOMATIC1111

/// POST /sdapi/v1/txt2img, and /img2img with `init_images` and `denoising_strength`.
struct Automatic1111Request: Encodable {
    var prompt: String
    var width: Int
    var height: Int
    var seed: Int
    var batchSize: Int?
    var negativePrompt: String?
    var steps: Int?
    var cfgScale: Double?
    var samplerName: String?
    var initImages: [String]?
    var denoisingStrength: Double?

    enum CodingKeys: String, CodingKey {
        case prompt, width, height, seed, steps
        case batchSize = "batch_size"
        case negativePrompt = "negative_prompt"
        case cfgScale = "cfg_scale"
        case samplerName = "sampler_name"
        case initImages = "init_images"
        case denoisingStrength = "denoising_strength"
    }
}

/// The images in base64, and `info`: a JSON text that may say the seeds used.
struct Automatic1111Answer: Decodable {
    var images: [String]?
    var info: Tolerant<String>?
}

/// What badge reads of an A1111 answer's `info` text.
struct Automatic1111Info: Decodable {
    var allSeeds: [UInt64]?

    enum CodingKeys: String, CodingKey {
        case allSeeds = "all_seeds"
    }
}

// MARK: - Jobs (Replicate-style predictions)

/// A job as a submit or a poll answers it.
struct JobAnswer: Decodable {
    /// A job id, as a string or a whole number.
    struct ID: Decodable {
        var text: String

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self.text = text
            } else if let number = try? container.decode(Int64.self) {
                text = String(number)
            } else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected a string or a whole number")
            }
        }
    }

    /// Why a job failed: `error` as a string, or an object's `message`; nil in any other form.
    struct Failure: Decodable {
        var message: String?

        private enum Key: String, CodingKey {
            case message
        }

        init(from decoder: any Decoder) throws {
            if let text = try? decoder.singleValueContainer().decode(String.self) {
                message = text
            } else {
                message = try? decoder.container(keyedBy: Key.self).decode(String.self, forKey: .message)
            }
        }
    }

    var id: ID?
    var jobID: String?
    var status: String?
    var state: String?
    var output: JSONNode.Value?
    var result: JSONNode.Value?
    var images: JSONNode.Value?
    var error: Failure?

    enum CodingKeys: String, CodingKey {
        case id, status, state, output, result, images, error
        case jobID = "job_id"
    }
}

// MARK: - ComfyUI

/// POST /prompt: the filled workflow, badge's client id and the run's id (ComfyUI takes a client's).
struct ComfyPromptRequest: Encodable {
    var prompt: JSONNode.Value
    var clientID: String
    var promptID: String

    enum CodingKeys: String, CodingKey {
        case prompt
        case clientID = "client_id"
        case promptID = "prompt_id"
    }
}

/// POST /interrupt for one run.
struct ComfyInterruptRequest: Encodable {
    var promptID: String

    enum CodingKeys: String, CodingKey {
        case promptID = "prompt_id"
    }
}

/// POST /queue: remove these runs.
struct ComfyDeleteRequest: Encodable {
    var delete: [String]
}

/// The answer to POST /prompt: the run's id, or why the workflow was refused.
struct ComfyPromptAnswer: Decodable {
    /// One node's validation errors.
    struct NodeErrors: Decodable {
        struct Reason: Decodable {
            struct Extra: Decodable {
                var inputName: String?

                enum CodingKeys: String, CodingKey {
                    case inputName = "input_name"
                }
            }

            var message: String?
            var details: String?
            var extraInfo: Extra?

            enum CodingKeys: String, CodingKey {
                case message, details
                case extraInfo = "extra_info"
            }
        }

        var classType: String?
        var errors: [Reason]?

        enum CodingKeys: String, CodingKey {
            case errors
            case classType = "class_type"
        }
    }

    struct Summary: Decodable {
        var message: String?
    }

    var promptID: String?
    var nodeErrors: [String: NodeErrors]?
    var error: Tolerant<Summary>?

    enum CodingKeys: String, CodingKey {
        case error
        case promptID = "prompt_id"
        case nodeErrors = "node_errors"
    }
}

/// The answer to POST /upload/image: the name the server filed the picture under.
struct ComfyUploadAnswer: Decodable {
    var name: String?
    var subfolder: String?
}

/// GET /history/{id}: the entry of the run whose id `runID` in the decoder's
/// userInfo names, if the server has it; other entries are not decoded.
struct ComfyHistoryAnswer: Decodable {
    static let runID = CodingUserInfoKey(rawValue: "badge.comfyui.runID")!

    struct Run: Decodable {
        var status: Status?
        var outputs: [String: Output]?
    }

    struct Status: Decodable {
        var statusText: String?
        var completed: Bool?
        /// `[event, data]` pairs; read only to say why a run failed.
        var messages: Tolerant<[Message]>?

        enum CodingKeys: String, CodingKey {
            case completed, messages
            case statusText = "status_str"
        }
    }

    struct Message: Decodable {
        var event: String?
        var failure: Failure?

        init(from decoder: any Decoder) throws {
            var pair = try decoder.unkeyedContainer()
            event = pair.nextIfWellFormed(String.self)
            failure = pair.nextIfWellFormed(Failure.self)
        }
    }

    /// An `execution_error`'s data.
    struct Failure: Decodable {
        var nodeID: JSONNode.Value?
        var nodeType: JSONNode.Value?
        var exceptionMessage: JSONNode.Value?

        enum CodingKeys: String, CodingKey {
            case nodeID = "node_id"
            case nodeType = "node_type"
            case exceptionMessage = "exception_message"
        }
    }

    /// One output node's results.
    struct Output: Decodable {
        var images: [Image]?
    }

    struct Image: Decodable {
        var filename: String?
        var subfolder: String?
        var type: String?
    }

    var run: Run?

    init(from decoder: any Decoder) throws {
        let id = decoder.userInfo[Self.runID] as? String ?? ""
        run = try decoder.container(keyedBy: AnyKey.self).decodeIfPresent(Run.self, forKey: AnyKey(id))
    }
}

/// GET /queue: the ids of the runs executing and waiting, and the client that queued each.
struct ComfyQueueAnswer: Decodable {
    /// `[number, id, workflow, extra data, outputs]`; an item of another form has no id.
    struct Item: Decodable {
        struct Extra: Decodable {
            var clientID: String?

            enum CodingKeys: String, CodingKey {
                case clientID = "client_id"
            }
        }

        var id: String?
        var clientID: String?

        init(from decoder: any Decoder) throws {
            var item = try decoder.unkeyedContainer()
            _ = item.nextIfWellFormed(Skipped.self)
            id = item.nextIfWellFormed(String.self)
            _ = item.nextIfWellFormed(Skipped.self)
            clientID = item.nextIfWellFormed(Extra.self)?.clientID
        }
    }

    /// Each list as a whole: one that is not a list of arrays is read as empty.
    var running: Tolerant<[Item]>?
    var pending: Tolerant<[Item]>?

    /// The items executing and waiting.
    var items: (running: [Item], pending: [Item]) { (running?.value ?? [], pending?.value ?? []) }

    enum CodingKeys: String, CodingKey {
        case running = "queue_running"
        case pending = "queue_pending"
    }
}

/// GET /system_stats: ComfyUI answers with an object that has `system`.
struct ComfySystemStats: Decodable {
    var hasSystem: Bool

    private enum Key: String, CodingKey {
        case system
    }

    init(from decoder: any Decoder) throws {
        hasSystem = try decoder.container(keyedBy: Key.self).contains(.system)
    }
}

/// GET /object_info: of the node classes `classes` in the decoder's userInfo
/// names, those the server has, each with the values its list inputs allow.
struct ComfyObjectInfo: Decodable {
    static let classes = CodingUserInfoKey(rawValue: "badge.comfyui.classes")!

    /// A node class: its inputs (required and optional) by name.
    struct NodeClass: Decodable {
        var inputs: [String: Input] = [:]

        private enum Key: String, CodingKey {
            case input, required, optional
        }

        init(from decoder: any Decoder) throws {
            let object = try decoder.container(keyedBy: Key.self)
            guard let input = try? object.nestedContainer(keyedBy: Key.self, forKey: .input) else { return }
            let required = (try? input.decode([String: Input].self, forKey: .required)) ?? [:]
            let optional = (try? input.decode([String: Input].self, forKey: .optional)) ?? [:]
            inputs = required.merging(optional) { first, _ in first }
        }
    }

    /// An input's allowed values, when it takes one of a list: older servers
    /// write `[[names...], {...}]`, newer `["COMBO", {"options": [names...]}]`.
    struct Input: Decodable {
        var allowed: [String]?

        private enum Key: String, CodingKey {
            case options
        }

        init(from decoder: any Decoder) throws {
            guard var spec = try? decoder.unkeyedContainer(), !spec.isAtEnd else { return }
            if let names = try? spec.decode([String].self) {
                allowed = names
            } else if (try? spec.decode(String.self)) == "COMBO", !spec.isAtEnd {
                allowed = try? spec.nestedContainer(keyedBy: Key.self).decode([String].self, forKey: .options)
            }
        }
    }

    var classes: [String: NodeClass] = [:]

    init(from decoder: any Decoder) throws {
        let wanted = decoder.userInfo[Self.classes] as? Set<String> ?? []
        let object = try decoder.container(keyedBy: AnyKey.self)
        for name in wanted {
            // A class that is not an object is one the server does not have.
            if let spec = try? object.decodeIfPresent(NodeClass.self, forKey: AnyKey(name)) { classes[name] = spec }
        }
    }
}
