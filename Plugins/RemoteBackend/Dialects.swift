import BadgeKit
import Foundation

extension RemoteOptions {
    /// A JSON POST with this backend's limits. Never follows a redirect: it carries the key.
    func post(to url: URL, json: Data, accept: String, credentials: [(name: String, value: String)]) -> HTTPRequest {
        HTTPRequest(
            method: "POST", url: url, headers: [("Content-Type", "application/json"), ("Accept", accept)] + credentials,
            body: json, connectTimeout: connectTimeout, timeout: timeout, idleTimeout: idleTimeout,
            maxResponseBytes: maxResponseBytes, maxRedirects: 0, allowsInsecureHTTP: allowsInsecureHTTP, caCertificates: caCertificates)
    }

    /// A multipart/form-data POST with this backend's limits; the transport
    /// writes the boundary and the Content-Type. Never follows a redirect.
    func post(to url: URL, form: [HTTPFormPart], accept: String, credentials: [(name: String, value: String)]) -> HTTPRequest {
        HTTPRequest(
            method: "POST", url: url, headers: [("Accept", accept)] + credentials,
            connectTimeout: connectTimeout, timeout: timeout, idleTimeout: idleTimeout,
            maxResponseBytes: maxResponseBytes, maxRedirects: 0, allowsInsecureHTTP: allowsInsecureHTTP, caCertificates: caCertificates, form: form)
    }
}

/// What a server answered with: image bytes, or a URL to fetch them from.
enum RemoteImage {
    case bytes(Data)
    case url(URL)
}

/// One image of an answer, and what the server said of it.
struct RemoteAnswer {
    var image: RemoteImage
    var revisedPrompt: String?
    /// The seed the server says it used, when it says.
    var seed: UInt64?
}

/// One API's wire format: how to ask, and how to read the answer.
protocol Dialect: Sendable {
    /// Asks for `count` images (1 unless the API takes a count: `RemoteGenerator.imagesPerCall`).
    /// `source`: the user's picture, prepared (`SourcePicture`), for dialects that start from one.
    func makeRequest(
        _ request: BadgeRequest, count: Int, source: SourcePicture?, options: RemoteOptions, credentials: [(name: String, value: String)]
    ) throws -> HTTPRequest
    /// Reads a 2xx response: at least one image and at most `count`, in the
    /// server's order. Throws a BadgeError naming what is wrong with it.
    func readImages(_ response: HTTPResponse, count: Int, context: ResponseContext) throws -> [RemoteAnswer]
}

/// What error messages need to say where an answer came from.
struct ResponseContext {
    var backend: String
    var url: String
}

/// Strict base64: the standard alphabet, correct padding, no junk. Foundation's
/// decoder alone would take some malformed inputs.
enum StrictBase64 {
    static func decode(_ text: String) -> Data? {
        let cleaned = text.filter { $0 != "\n" && $0 != "\r" }
        guard !cleaned.isEmpty, cleaned.count % 4 == 0,
              cleaned.utf8.allSatisfy({ ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 43 || $0 == 47 || $0 == 61 }),
              !cleaned.dropLast(2).contains("=")
        else { return nil }
        return Data(base64Encoded: cleaned)
    }
}

/// POST {url}/images/generations, as OpenAI, LocalAI, sd-server, vLLM-Omni and Ollama take it;
/// with a source picture, POST {url}/images/edits (multipart/form-data, the picture as `image`).
struct OpenAIDialect: Dialect {
    /// The most images one request may ask for (CreateImageRequest's `n`).
    static let maxCount = 10

    /// How many images one request to `model` may ask for: dall-e-3 makes one.
    static func maxCount(model: String?) -> Int {
        (model ?? "").lowercased().hasPrefix("dall-e-3") ? 1 : maxCount
    }

    func makeRequest(
        _ request: BadgeRequest, count: Int, source: SourcePicture?, options: RemoteOptions, credentials: [(name: String, value: String)]
    ) throws -> HTTPRequest {
        if let source { return edit(request, count: count, source: source, options: options, credentials: credentials) }
        let body = OpenAIGenerationRequest(
            prompt: request.prompt, n: count, size: options.imageSize ?? "1024x1024", model: options.model, quality: options.quality,
            background: options.background, outputFormat: options.outputFormat)
        return options.post(
            to: options.baseURL.appendingPathComponent("images/generations"), json: try JSONBody.encode(body),
            accept: "application/json", credentials: credentials)
    }

    /// CreateImageEditRequest: the same fields as a generation, as form fields,
    /// and the picture as the file `image`. Unset fields are left out.
    func edit(
        _ request: BadgeRequest, count: Int, source: SourcePicture, options: RemoteOptions, credentials: [(name: String, value: String)]
    ) -> HTTPRequest {
        var form = [
            HTTPFormPart(name: "image", data: source.png, filename: "source.png", contentType: "image/png"),
            HTTPFormPart(name: "prompt", value: request.prompt),
        ]
        if let model = options.model { form.append(HTTPFormPart(name: "model", value: model)) }
        form.append(HTTPFormPart(name: "n", value: String(count)))
        form.append(HTTPFormPart(name: "size", value: options.imageSize ?? "1024x1024"))
        if let quality = options.quality { form.append(HTTPFormPart(name: "quality", value: quality)) }
        if let background = options.background { form.append(HTTPFormPart(name: "background", value: background)) }
        if let format = options.outputFormat { form.append(HTTPFormPart(name: "output_format", value: format)) }
        return options.post(to: options.baseURL.appendingPathComponent("images/edits"), form: form,
                            accept: "application/json", credentials: credentials)
    }

    /// The side of the square a source picture is uploaded at, at most: the shorter
    /// side of `imageSize` (e.g. 1024 for "1536x1024"), 1024 when it is unset or "auto".
    static func modelSide(_ options: RemoteOptions) -> Int {
        let parts = (options.imageSize ?? "").lowercased().split(separator: "x").compactMap { Int($0) }
        return parts.count == 2 ? max(64, parts.min()!) : 1024
    }

    func readImages(_ response: HTTPResponse, count: Int, context: ResponseContext) throws -> [RemoteAnswer] {
        let answer = try JSONBody.decode(OpenAIImagesAnswer.self, from: response, context: context)
        guard let data = answer.data else {
            throw BadgeError(.generationFailed, "the answer has no \"data\" array", backend: context.backend, path: context.url)
        }
        guard !data.isEmpty else {
            throw BadgeError(.generationFailed, "the server returned no image (\"data\" is empty)", backend: context.backend,
                             path: context.url, hint: "the prompt may have been refused; try rewording it")
        }
        return try data.prefix(count).enumerated().map { index, item in
            // Which image of the answer, when it has more than one.
            let which = data.count == 1 ? "" : " data[\(index)]"
            if let b64 = item.b64JSON {
                guard let bytes = StrictBase64.decode(b64) else {
                    throw BadgeError(.generationFailed, "the image in\(which) \"b64_json\" is not valid base64", backend: context.backend, path: context.url)
                }
                return RemoteAnswer(image: .bytes(bytes), revisedPrompt: item.revisedPrompt)
            }
            if let text = item.url {
                guard let url = URL(string: text), url.scheme != nil else {
                    throw BadgeError(.generationFailed, "the image URL\(which) \"\(text.prefix(80))\" is not a URL", backend: context.backend, path: context.url)
                }
                return RemoteAnswer(image: .url(url), revisedPrompt: item.revisedPrompt)
            }
            throw BadgeError(.generationFailed, "the image\(which) has neither \"b64_json\" nor \"url\"", backend: context.backend, path: context.url)
        }
    }
}

/// POST /sdapi/v1/txt2img, as AUTOMATIC1111, Forge and sd-server take it; with a source
/// picture, POST /sdapi/v1/img2img (`init_images` in base64, `denoising_strength`).
struct Automatic1111Dialect: Dialect {
    /// The `--option` that overrides `denoisingStrength` for one request.
    static let denoisingOption = "denoising_strength"

    /// The most images one request asks for (`batch_size`) unless the config's
    /// `imagesPerRequest` says: a batch is made at once, in the GPU's memory.
    static let defaultCount = 4

    func makeRequest(
        _ request: BadgeRequest, count: Int, source: SourcePicture?, options: RemoteOptions, credentials: [(name: String, value: String)]
    ) throws -> HTTPRequest {
        var body = Automatic1111Request(
            prompt: request.prompt, width: request.size, height: request.size,
            // Seeds above Int32 are folded: A1111 takes a 32-bit seed.
            seed: Int(request.seed % UInt64(Int32.max)),
            // A batch's images take the seeds seed, seed + 1, ... (A1111's own rule).
            batchSize: count > 1 ? count : nil,
            negativePrompt: options.negativePrompt, steps: options.steps, cfgScale: options.cfgScale, samplerName: options.sampler)
        var path = "sdapi/v1/txt2img"
        if let source {
            path = "sdapi/v1/img2img"
            body.initImages = [source.png.base64EncodedString()]
            body.denoisingStrength = try Self.denoisingStrength(request, options: options) ?? 0.75
        }
        return options.post(
            to: options.baseURL.appendingPathComponent(path), json: try JSONBody.encode(body),
            accept: "application/json", credentials: credentials)
    }

    /// `--option denoising_strength=` for this request, else the config's `denoisingStrength`;
    /// nil when neither says (A1111 then gets its default, 0.75; a ComfyUI workflow keeps its own).
    static func denoisingStrength(_ request: BadgeRequest, options: RemoteOptions) throws -> Double? {
        guard let text = request.options[denoisingOption] else { return options.denoisingStrength }
        guard let value = Double(text), (0...1).contains(value) else {
            throw BadgeError(.usage, "\(RequestOptionNaming.setting(denoisingOption, text)): expected a number from 0 to 1",
                             hint: "0 keeps the picture as it is, 1 ignores it; e.g. \(RequestOptionNaming.setting(denoisingOption, "0.6"))")
        }
        return value
    }

    func readImages(_ response: HTTPResponse, count: Int, context: ResponseContext) throws -> [RemoteAnswer] {
        let answer = try JSONBody.decode(Automatic1111Answer.self, from: response, context: context)
        guard let images = answer.images else {
            throw BadgeError(.generationFailed, "the answer has no \"images\" array", backend: context.backend, path: context.url)
        }
        guard !images.isEmpty else {
            throw BadgeError(.generationFailed, "the server returned no image (\"images\" is empty)", backend: context.backend, path: context.url)
        }
        let seeds = Self.seeds(answer.info?.value)
        // A batch's answer may end with a grid of its images when the server is set to make one: only the first `count` are the images.
        return try images.prefix(count).enumerated().map { index, text in
            // Some forks prefix a data URL.
            let payload = text.hasPrefix("data:") ? String(text.drop { $0 != "," }.dropFirst()) : text
            guard let bytes = StrictBase64.decode(payload) else {
                throw BadgeError(.generationFailed, "the image in \"images[\(index)]\" is not valid base64", backend: context.backend, path: context.url)
            }
            return RemoteAnswer(image: .bytes(bytes), seed: seeds.count == images.prefix(count).count ? seeds[index] : nil)
        }
    }

    /// The seeds the server used, from the answer's `info` (a JSON text with
    /// `all_seeds`, whole numbers from 0); empty when it does not say.
    static func seeds(_ info: String?) -> [UInt64] {
        guard let info, info.utf8.count <= 1 << 20 else { return [] }
        return JSONBody.decodeIfValid(Automatic1111Info.self, from: Data(info.utf8))?.allSeeds ?? []
    }
}

/// POST a JSON body built from `bodyTemplate` and receive the image bytes
/// themselves (Hugging Face inference style).
struct RawDialect: Dialect {
    func makeRequest(
        _ request: BadgeRequest, count: Int, source: SourcePicture?, options: RemoteOptions, credentials: [(name: String, value: String)]
    ) throws -> HTTPRequest {
        let template = options.bodyTemplate ?? JSONNode(.object([]))
        let body = Self.fill(template, request: request)
        return options.post(
            to: options.baseURL, json: try JSONBody.encode(body),
            accept: "image/png, image/*", credentials: credentials)
    }

    func readImages(_ response: HTTPResponse, count: Int, context: ResponseContext) throws -> [RemoteAnswer] {
        let type = response.header("content-type")?.lowercased() ?? ""
        if type.hasPrefix("application/json") {
            let said = RemoteGenerator.serverMessage(response) ?? "no message"
            throw BadgeError(.generationFailed, "the server answered with JSON instead of an image: \(said)",
                             backend: context.backend, path: context.url)
        }
        return [RemoteAnswer(image: .bytes(response.body))]
    }

    /// Replaces "{prompt}" inside strings; a string that is exactly "{size}" or
    /// "{seed}" becomes that number.
    static func fill(_ node: JSONNode, request: BadgeRequest) -> JSONNode.Value {
        switch node.value {
        case let .string(s):
            if s == "{size}" { return .number(request.size) }
            if s == "{seed}" { return .number(request.seed) }
            return .string(s.replacingOccurrences(of: "{prompt}", with: request.prompt))
        case let .array(items):
            return .array(items.map { JSONNode(fill($0, request: request), at: $0.location) })
        case let .object(members):
            return .object(members.map { member in
                var filled = member
                filled.value.value = fill(member.value, request: request)
                return filled
            })
        case .null, .bool, .number:
            return node.value
        }
    }
}
