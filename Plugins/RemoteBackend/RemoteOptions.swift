import BadgeKit
import Foundation

/// A remote backend's configuration, read strictly from its config object.
struct RemoteOptions: Sendable {
    enum API: String, Sendable, CaseIterable {
        case openai, automatic1111, comfyui, raw, jobs
    }

    var api: API
    /// The server's base URL as the OpenAI SDKs take it (with /v1 for OpenAI-compatible servers).
    var baseURL: URL
    var model: String?
    /// The environment variable that holds the key; the key itself is never in a file.
    var apiKeyEnv: String?
    /// For HTTP Basic auth (AUTOMATIC1111 --api-auth): a user name and the variable holding the password.
    var username: String?
    var passwordEnv: String?
    var timeout: Duration
    var connectTimeout: Duration
    var idleTimeout: Duration
    var retries: Int
    /// A server's Retry-After beyond this is not waited for: badge gives up at once and says when to retry.
    var maxRetryAfter: Duration
    var maxResponseBytes: Int
    var allowsInsecureHTTP: Bool
    /// The PEM certificates of `caFile`, read once when the configuration is
    /// (its path starts at the configuration file's directory), and handed to
    /// libcurl as bytes: no path is opened per connection.
    var caCertificates: Data?
    /// The most a `caFile` may hold (a system's whole bundle is ~220 KB).
    static let maxCAFileBytes = 4 << 20
    /// Hosts besides the base URL's that result URLs may point at (a CDN);
    /// "*.example.com" admits its subdomains. https only.
    var resultHosts: [String] = []
    /// Raw and jobs dialects: the JSON body, with "{prompt}", "{size}" and "{seed}" filled in.
    var bodyTemplate: JSONNode?
    /// Jobs dialect: where to submit, poll and cancel ("{id}" is the job's id), and how often to poll.
    var submitPath = "predictions"
    var statusPath = "predictions/{id}"
    var cancelPath: String? = "predictions/{id}/cancel"
    var pollInterval: Duration = .seconds(2)
    // OpenAI dialect: sent only when set.
    var imageSize: String?
    var quality: String?
    var background: String?
    var outputFormat: String?
    // AUTOMATIC1111 dialect.
    var negativePrompt: String?
    var steps: Int?
    var cfgScale: Double?
    var sampler: String?
    /// ComfyUI: the workflow for words alone, and the one for a source picture, each with its mapping.
    var workflow: ComfyWorkflow?
    var img2imgWorkflow: ComfyWorkflow?
    /// AUTOMATIC1111 img2img: how far the result may stray from the source picture (0...1).
    var denoisingStrength: Double?
    /// OpenAI and AUTOMATIC1111: the most images one request asks for (`generate --choose`);
    /// nil: the API's own limit (OpenAI 10, dall-e-3 1; AUTOMATIC1111 4).
    var imagesPerRequest: Int?

    static let keys = [
        "type", "api", "url", "model", "apiKeyEnv", "username", "passwordEnv", "timeoutSeconds",
        "connectTimeoutSeconds", "idleTimeoutSeconds", "retries", "maxRetryAfterSeconds", "maxResponseBytes",
        "allowInsecureHTTP", "imageSize", "quality", "background", "outputFormat", "negativePrompt", "steps",
        "cfgScale", "sampler", "denoisingStrength", "imagesPerRequest", "caFile", "bodyTemplate", "submitPath", "statusPath", "cancelPath", "pollIntervalSeconds",
        "resultHosts", "workflow", "inputs", "img2imgWorkflow", "img2imgInputs",
    ]

    /// `base`: where relative paths (a workflow's) start when the config has no file.
    init(_ config: ConfigObject, base: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)) throws {
        try config.allowOnly(Self.keys)
        api = API(rawValue: try config.require("api", hint: "one of: openai, automatic1111, comfyui, raw, jobs").oneOf(API.allCases.map(\.rawValue)))!
        let urlValue = try config.require("url", hint: "the server's base URL, e.g. https://api.openai.com/v1")
        let urlText = try urlValue.nonEmptyString()
        guard let url = URL(string: urlText.hasSuffix("/") ? String(urlText.dropLast()) : urlText),
              let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil
        else {
            throw urlValue.error("\(ConfigExcerpt.quoted(urlText)) is not an http(s) URL", hint: "e.g. https://api.openai.com/v1 or http://127.0.0.1:7860")
        }
        if url.user != nil || url.password != nil {
            throw urlValue.error("the URL contains credentials", hint: "put the key in an environment variable and name it with apiKeyEnv")
        }
        baseURL = url
        model = try config.string("model")
        apiKeyEnv = try config.value("apiKeyEnv")?.nonEmptyString()
        username = try config.string("username")
        passwordEnv = try config.value("passwordEnv")?.nonEmptyString()
        timeout = .seconds(try config.int("timeoutSeconds", in: 1...3600) ?? 180)
        connectTimeout = .seconds(try config.int("connectTimeoutSeconds", in: 1...300) ?? 15)
        idleTimeout = .seconds(try config.int("idleTimeoutSeconds", in: 1...3600) ?? 60)
        retries = try config.int("retries", in: 0...10) ?? 2
        maxRetryAfter = .seconds(try config.int("maxRetryAfterSeconds", in: 0...3600) ?? 60)
        maxResponseBytes = try config.int("maxResponseBytes", in: 1024...(1 << 30)) ?? (64 << 20)
        allowsInsecureHTTP = try config.bool("allowInsecureHTTP") ?? false
        // Paths in a config file start at its directory, as an exec plugin's do.
        let directory = config.file.map { URL(fileURLWithPath: $0).deletingLastPathComponent() } ?? base
        if let ca = config.value("caFile") {
            let path = BadgeConfig.resolvePath(try ca.nonEmptyString(), relativeTo: directory).path
            let pem: Data
            let opened: stat
            do {
                let file = try RegularFile(path)
                pem = try file.readAll(limit: Self.maxCAFileBytes)
                opened = file.status
            } catch {
                throw ca.error("cannot read the CA file \(path): \(error)",
                               hint: "give the path of a PEM bundle (relative paths start at the configuration file's directory)")
            }
            // Whoever could write it could add a CA of theirs, and read the key on its way.
            if let distrust = FileTrust.distrust(of: path, opened: opened) {
                let (message, hint) = distrust.words(path: path, what: "CA file \(path)")
                throw ca.error(message, hint: hint)
            }
            // OpenSSL reads CERTIFICATE, TRUSTED CERTIFICATE and X509 CERTIFICATE blocks.
            guard ["CERTIFICATE", "TRUSTED CERTIFICATE", "X509 CERTIFICATE"].contains(where: { pem.range(of: Data("-----BEGIN \($0)-----".utf8)) != nil }) else {
                throw ca.error("the CA file \(path) holds no PEM certificate (no -----BEGIN CERTIFICATE----- line)",
                               hint: "give the path of a PEM bundle, such as the private CA's certificate")
            }
            caCertificates = pem
        }
        if let hosts = config.value("resultHosts") {
            resultHosts = try hosts.stringArray()
            for (i, host) in resultHosts.enumerated() {
                let bare = host.hasPrefix("*.") ? String(host.dropFirst(2)) : host
                guard !bare.isEmpty, bare.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }), bare.contains(where: { $0 != "." }) else {
                    throw try hosts.array()[i].error("\(ConfigExcerpt.quoted(host)) is not a host name", hint: "e.g. \"images.example.com\" or \"*.blob.core.windows.net\"")
                }
            }
        }
        if let template = config.value("bodyTemplate") {
            _ = try template.object()
            bodyTemplate = template.node
        }
        if let path = config.value("submitPath") { submitPath = try path.string() }
        if let path = config.value("statusPath") {
            statusPath = try path.nonEmptyString()
            guard statusPath.contains("{id}") else { throw path.error("must contain {id}", hint: "e.g. \"predictions/{id}\"") }
        }
        if let path = config.value("cancelPath") {
            if case .null = path.node.value { cancelPath = nil } else { cancelPath = try path.nonEmptyString() }
        }
        if let interval = config.value("pollIntervalSeconds") {
            pollInterval = .milliseconds(Int(try interval.double(in: 0.05...600) * 1000))
        }
        if (api == .raw || api == .jobs) && bodyTemplate == nil {
            bodyTemplate = JSONNode(.object([JSONMember(key: "inputs", keyLocation: config.node.location,
                                                        value: JSONNode(.string("{prompt}"), at: config.node.location))]),
                                    at: config.node.location)
        }
        imageSize = try config.value("imageSize")?.nonEmptyString()
        quality = try config.value("quality")?.oneOf(["auto", "low", "medium", "high", "standard", "hd"])
        background = try config.value("background")?.oneOf(["auto", "transparent", "opaque"])
        outputFormat = try config.value("outputFormat")?.oneOf(["png", "jpeg", "webp"])
        negativePrompt = try config.string("negativePrompt")
        steps = try config.int("steps", in: 1...500)
        cfgScale = try config.value("cfgScale")?.double(in: 0...50)
        sampler = try config.value("sampler")?.nonEmptyString()
        denoisingStrength = try config.value("denoisingStrength")?.double(in: 0...1)
        if let value = config.value("imagesPerRequest") {
            guard api == .openai || api == .automatic1111 else {
                throw value.error("\"imagesPerRequest\" applies only to \"api\": \"openai\" and \"automatic1111\"",
                                  hint: "the \(api.rawValue) API makes one image a request; remove the key")
            }
            imagesPerRequest = try config.int("imagesPerRequest", in: 1...OpenAIDialect.maxCount)
        }
        let comfyKeys = ["workflow", "inputs", "img2imgWorkflow", "img2imgInputs"]
        if api == .comfyui {
            workflow = try ComfyWorkflow.load(
                try config.require("workflow", hint: "the path of a workflow exported from ComfyUI in API format"),
                mapping: config.value("inputs"), required: [.prompt], base: directory)
            if let file = config.value("img2imgWorkflow") {
                img2imgWorkflow = try ComfyWorkflow.load(file, mapping: config.value("img2imgInputs"), required: [.prompt, .image], base: directory)
            } else if let stray = config.value("img2imgInputs") {
                throw stray.error("img2imgInputs without img2imgWorkflow", hint: "add \"img2imgWorkflow\": the workflow used with --source")
            }
            if config.value("pollIntervalSeconds") == nil { pollInterval = .seconds(1) }
        } else if let key = comfyKeys.first(where: { config.value($0) != nil }) {
            throw config.value(key)!.error("\"\(key)\" applies only to \"api\": \"comfyui\"", hint: "remove it, or set \"api\": \"comfyui\"")
        }
        if (username == nil) != (passwordEnv == nil) {
            throw BadgeError(.config, "username and passwordEnv go together", path: config.file,
                             location: config.node.location, keyPath: config.keyPath,
                             hint: "set both for HTTP Basic auth, or neither")
        }
    }
}
