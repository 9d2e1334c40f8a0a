import BadgeKit
import Foundation
import Logging

/// A backend that asks an image model over HTTP (type `http`). The wire format
/// is the config's `api`; the transport is whatever the environment wires in
/// (libcurl in the CLI). Nothing the server sends is trusted: status, JSON
/// shape, base64 and size are checked, and the image passes the intake before
/// it leaves the workspace.
package struct RemoteGenerator: MultiImageGenerator {
    package static let type = "http"
    /// The wire formats carry no style: `--style` does not apply.
    package var styles: [String]? { [] }

    let name: String
    let options: RemoteOptions
    let http: (any HTTPTransport)?
    let variables: [String: String]
    let logger: Logger
    let now: @Sendable () -> Date
    /// For a source picture: the intake's limits, the decoder that re-encodes it, where a relative path starts.
    var limits: ImageLimits = .default
    var decoder: (any ImageDecoding)?
    var workingDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
    var readStandardInput: @Sendable (Int) throws -> Data = SourcePicture.readStandardInput

    package static func register(in registry: inout BackendRegistry, limits: ImageLimits = .default) {
        registry.register(type, summary: "an image model over HTTP (OpenAI-compatible, AUTOMATIC1111, ComfyUI, raw bytes)") { config, environment in
            var generator = RemoteGenerator(
                name: config.name, options: try RemoteOptions(config.options, base: environment.workingDirectory), http: environment.http,
                variables: environment.variables, logger: environment.logger, now: environment.now)
            generator.limits = limits
            generator.decoder = environment.decoder
            generator.workingDirectory = environment.workingDirectory
            // Only a SaveImage node writes where badge fetches from (PreviewImage's "temp" images are deleted).
            for workflow in [generator.options.workflow, generator.options.img2imgWorkflow].compactMap({ $0 })
            where !workflow.nodes.contains(where: { $0.classType == "SaveImage" }) {
                environment.logger.warning("backend \"\(config.name)\": the workflow \(workflow.path) has no SaveImage node; its runs will end without an image badge can fetch (add one)")
            }
            return generator
        }
    }

    /// The dialects whose APIs take a picture to start from; raw and jobs bodies have no place for one.
    package var readsSource: Bool { [.openai, .automatic1111, .comfyui].contains(options.api) }

    /// AUTOMATIC1111 and ComfyUI read `--option denoising_strength=` (with a source picture).
    package var requestOptionKeys: Set<String>? {
        [.automatic1111, .comfyui].contains(options.api) ? [Automatic1111Dialect.denoisingOption] : []
    }

    /// `denoising_strength` says how far to move from the source picture: none, nothing to act on.
    package var sourceOptionKeys: Set<String> {
        [.automatic1111, .comfyui].contains(options.api) ? [Automatic1111Dialect.denoisingOption] : []
    }

    /// Its keys, and a `denoising_strength` it can take.
    package func checkRequestOptions(_ options: [String: String], backend: String) throws {
        try checkRequestOptionKeys(options, backend: backend)
        do {
            _ = try Automatic1111Dialect.denoisingStrength(BadgeRequest(prompt: "", options: options), options: self.options)
        } catch var error as BadgeError {
            error.backend = backend
            throw error
        }
    }

    /// The square side a source picture is uploaded at: the request's size, and never above the model's.
    func sourceSide(for request: BadgeRequest) -> Int {
        options.api == .openai ? min(request.size, OpenAIDialect.modelSide(options)) : request.size
    }

    var dialect: any Dialect {
        switch options.api {
        case .openai: return OpenAIDialect()
        case .automatic1111: return Automatic1111Dialect()
        // ComfyUI is a conversation of several requests (ComfyClient), jobs one of polls (JobsClient).
        case .raw, .jobs, .comfyui: return RawDialect()
        }
    }

    package func availability() async -> Availability {
        if http == nil {
            return .unavailable(reason: "no HTTP transport is wired in", hint: "this build of badge has no network support")
        }
        for variable in [options.apiKeyEnv, options.passwordEnv].compactMap({ $0 }) where (variables[variable] ?? "").isEmpty {
            return .unavailable(reason: "the environment variable \(variable) is not set",
                                hint: "export \(variable)=... (the key never goes in the config file)")
        }
        return .available
    }

    /// The headers that prove who we are; only ever sent to the configured server.
    private func credentials() -> [(name: String, value: String)] {
        if let env = options.apiKeyEnv, let key = variables[env], !key.isEmpty {
            return [("Authorization", "Bearer \(key)")]
        }
        if let user = options.username, let env = options.passwordEnv, let password = variables[env] {
            return [("Authorization", "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())]
        }
        return []
    }

    /// What must never be printed: the key, the password, and the
    /// Authorization values made of them (a Basic header's base64 too).
    var secrets: [String] {
        let values = [options.apiKeyEnv, options.passwordEnv].compactMap { $0.flatMap { variables[$0] } }
        let headers = credentials().flatMap { [$0.value, String($0.value.drop { $0 != " " }.dropFirst())] }
        return (headers + values).filter { $0.count >= 4 }.sorted { $0.count > $1.count }
    }

    /// Every string this backend hands on that a server chose (its error
    /// message and request id, a job's id and failure, a revised prompt) goes
    /// through here, in this one place: secrets out, control characters out.
    func scrubbed(_ error: BadgeError) -> BadgeError {
        var error = error
        let secrets = secrets
        // Masked first; what is left of an echo once the key's pieces are masked (pieces
        // shorter than a mask, an encoding) takes the server's words out whole.
        error.message = Redact.withholdingEchoes(Redact.scrub(error.message, secrets: secrets), secrets: secrets)
        error.cause = error.cause.map { Redact.withholdingEchoes(Redact.scrub($0, secrets: secrets), secrets: secrets) }
        error.hint = error.hint.map { Redact.withholdingEchoes(Redact.scrub($0, secrets: secrets), secrets: secrets) }
        error.path = error.path.map { Redact.scrub($0, secrets: secrets) }
        return error
    }

    package func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
        try await generate(request, count: 1, in: workspace)[0]
    }

    package func generate(_ request: BadgeRequest, count: Int, in workspace: Workspace) async throws -> [GeneratedImage] {
        do {
            return try await generateUnscrubbed(request, count: count, in: workspace).map { image in
                var image = image
                image.revisedPrompt = image.revisedPrompt.map { Redact.scrub($0, secrets: secrets) }
                return image
            }
        } catch let error as BadgeError {
            throw scrubbed(error)
        }
    }

    /// `count` is at most `imagesPerCall(for:)`; the APIs without a count make one.
    private func generateUnscrubbed(_ request: BadgeRequest, count: Int, in workspace: Workspace) async throws -> [GeneratedImage] {
        let count = max(1, min(count, imagesPerCall(for: request)))
        guard let http else { throw BadgeError(.backendUnavailable, "no HTTP transport is wired in", backend: name) }
        // The source picture is read, checked and re-encoded before anything is sent.
        var source: SourcePicture?
        if let path = request.source {
            guard readsSource else {
                throw BadgeError(.usage, "the \(options.api.rawValue) API takes no source picture", backend: name,
                                 hint: "use an http backend with api openai, automatic1111 or comfyui, or the import backend")
            }
            source = try await SourcePicture.prepare(
                path, side: sourceSide(for: request), limits: limits, decoder: decoder, workingDirectory: workingDirectory,
                backend: name, readStandardInput: readStandardInput)
        } else if let value = request.options[Automatic1111Dialect.denoisingOption] {
            throw BadgeError(.usage, "\(RequestOptionNaming.setting(Automatic1111Dialect.denoisingOption, value)) applies only to a source picture",
                             backend: name, hint: "\(RequestOptionNaming.addSource), or leave the option out")
        }
        try Task.checkCancellation()
        /// Each image's bytes, what the server said of it, and the seed it was made with.
        var answers: [(bytes: Data, revisedPrompt: String?, seed: UInt64?)] = []
        let where_: String
        let seed = seedIsSent(with: source) ? request.seed : nil
        if options.api == .jobs {
            where_ = Redact.url(options.baseURL)
            answers = [(try await JobsClient(generator: self, http: http).run(request, credentials: credentials()), nil, seed)]
        } else if options.api == .comfyui {
            where_ = Redact.url(options.baseURL)
            answers = [(try await ComfyClient(generator: self, http: http, credentials: credentials()).run(request, source: source), nil, seed)]
        } else {
            let httpRequest = try dialect.makeRequest(request, count: count, source: source, options: options, credentials: credentials())
            where_ = Redact.url(httpRequest.url)
            let response = try await sendWithRetries(httpRequest, via: http)
            guard (200..<300).contains(response.status) else { throw serverError(response, url: where_) }
            for (index, answer) in try dialect.readImages(response, count: count, context: ResponseContext(backend: name, url: where_)).enumerated() {
                let bytes: Data
                switch answer.image {
                case let .bytes(data): bytes = data
                case let .url(url): bytes = try await download(url, via: http)
                }
                answers.append((bytes, answer.revisedPrompt, answer.seed ?? seed.map { $0 &+ UInt64(index) }))
            }
        }

        // Decoding the answers gets the time limit afresh, as each HTTP attempt
        // does: a retry's wait and a slow first attempt are not charged to it.
        let decodeDeadline = ContinuousClock.now.advanced(by: options.timeout)
        var images: [GeneratedImage] = []
        for (index, answer) in answers.enumerated() {
            // JPEG and WebP answers are fine: the pipeline's intake checks the image and
            // converts it to the PNG badge. Here only its signature is read, to say
            // which server sent something that is not an image.
            let format: ImageFormat
            switch ImageIntake.sniff(answer.bytes) {
            case let .accepted(sniffed):
                format = sniffed
            case .refused, .unknown:
                let start = answer.bytes.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")
                let which = answers.count == 1 ? "image" : "image \(index + 1) of \(answers.count)"
                throw BadgeError(.invalidImage, "the server's \(which) is not an image (\(answer.bytes.count) bytes starting \(start))",
                                 backend: name, path: where_)
            }
            try Task.checkCancellation()
            let file = try workspace.write(answer.bytes, to: "remote-\(index + 1).\(format.rawValue)", backend: name)
            images.append(GeneratedImage(
                file: file, model: model(with: source), seed: answer.seed, revisedPrompt: answer.revisedPrompt, extra: extra(source),
                bytes: answer.bytes, deadline: decodeDeadline))
        }
        return images
    }

    /// How many images one request asks for: OpenAI's `n` (1 for dall-e-3),
    /// AUTOMATIC1111's `batch_size`, at most the config's `imagesPerRequest`;
    /// one for the APIs without a count (a ComfyUI workflow's batch is its own).
    package func imagesPerCall(for request: BadgeRequest) -> Int {
        switch options.api {
        case .openai: return min(options.imagesPerRequest ?? OpenAIDialect.maxCount, OpenAIDialect.maxCount(model: options.model))
        case .automatic1111: return options.imagesPerRequest ?? Automatic1111Dialect.defaultCount
        case .comfyui, .raw, .jobs: return 1
        }
    }

    /// The model the badge names: the config's, else a ComfyUI workflow's checkpoint, else the API.
    func model(with source: SourcePicture?) -> String {
        if let model = options.model { return model }
        let workflow = source == nil ? options.workflow : options.img2imgWorkflow
        return workflow?.checkpoints.first ?? options.api.rawValue
    }

    /// Whether the request's seed reached the model (A1111 always; ComfyUI where the workflow maps it).
    func seedIsSent(with source: SourcePicture?) -> Bool {
        switch options.api {
        case .automatic1111: return true
        case .comfyui: return (source == nil ? options.workflow : options.img2imgWorkflow)?.targets[.seed] != nil
        default: return false
        }
    }

    /// What the badge's metadata keeps of this run: the API and, with a source
    /// picture, the sha256 of the file as given (never its path or name).
    func extra(_ source: SourcePicture?) -> [String: String] {
        var extra = ["api": options.api.rawValue]
        if let source { extra["source-sha256"] = source.sha256 }
        return extra
    }

    /// Sends, retrying what the policy says is worth retrying.
    /// `finishingInFlight`: a request already sent is answered even if the task is
    /// cancelled meanwhile (its answer may name something the server made); the
    /// waits between retries still end at once on cancellation.
    func sendWithRetries(_ request: HTTPRequest, via http: any HTTPTransport, finishingInFlight: Bool = false) async throws -> HTTPResponse {
        try await sendWithRetries(request, via: http, finishingInFlight: finishingInFlight, unlessDone: nil)!
    }

    /// `sendWithRetries`, asking `done` after every failure (a network error, a
    /// status worth retrying) whether the server did what was asked after all
    /// (an answer lost on the way): then nothing is sent again, and it returns nil.
    func sendWithRetries(
        _ request: HTTPRequest, via http: any HTTPTransport, finishingInFlight: Bool, unlessDone done: (@Sendable () async -> Bool)?
    ) async throws -> HTTPResponse? {
        let policy = RetryPolicy(retries: options.retries, maxRetryAfter: options.maxRetryAfter)
        var attempt = 0
        while true {
            let response: HTTPResponse
            do {
                response = try await finishingInFlight ? Task.detached { try await http.send(request) }.value : http.send(request)
            } catch let error as BadgeError where error.code != .cancelled {
                if let done, await done() { return nil }
                guard RetryPolicy.isRetryable(error) && attempt < policy.retries else { throw error.attributed(to: name) }
                let delay = policy.backoff(attempt: attempt)
                logger.info("retrying after a network error", metadata: ["backend": "\(name)", "cause": "\(error.message)", "in": "\(delay)"])
                try await Task.sleep(for: delay)
                attempt += 1
                continue
            } catch let error as BadgeError {
                throw error.attributed(to: name)
            }
            guard RetryPolicy.isRetryable(status: response.status) else { return response }
            if let done, await done() { return nil }
            let asked = RetryPolicy.serverDelay(response, now: now())
            if let asked, asked > policy.maxRetryAfter {
                let when = now().addingTimeInterval(Double(asked.components.seconds))
                var error = serverError(response, url: Redact.url(request.url))
                let limit = "more than maxRetryAfterSeconds (\(policy.maxRetryAfter.components.seconds) s)"
                error.hint = asked == RetryPolicy.longestServerDelay
                    ? "the server asks to wait for ever, \(limit); try again later"
                    : "the server asks to wait \(asked.components.seconds) s (until \(BadgeMetadata.rfc3339(when, in: .current))), \(limit); try again then"
                throw error
            }
            guard attempt < policy.retries else { return response }
            let delay = asked ?? policy.backoff(attempt: attempt)
            logger.info("retrying", metadata: ["backend": "\(name)", "status": "\(response.status)", "in": "\(delay)"])
            try await Task.sleep(for: delay)
            attempt += 1
        }
    }

    /// The most redirects a result URL may take.
    static let maxResultRedirects = 3

    /// Fetches a result URL: no credentials, and only URLs `checkResultURL`
    /// admits. Redirects are followed here, not by the transport, so each
    /// hop passes the same check before it is requested (at most 3, never
    /// one seen before). A failure says the download failed, never how the
    /// connection went: a server must not learn from badge's errors which
    /// ports of the user's machine answer.
    func download(_ url: URL, via http: any HTTPTransport) async throws -> Data {
        try checkResultURL(url)
        let hint = "result URLs expire; generate again"
        var current = url
        var seen: Set<String> = [url.absoluteString]
        while true {
            let request = HTTPRequest(
                url: current, connectTimeout: options.connectTimeout, timeout: options.timeout, idleTimeout: options.idleTimeout,
                maxResponseBytes: options.maxResponseBytes, maxRedirects: 0, allowsInsecureHTTP: false, caCertificates: options.caCertificates)
            let response: HTTPResponse
            do {
                response = try await http.send(request)
            } catch let error as BadgeError {
                if error.code == .cancelled { throw error.attributed(to: name) }
                // What badge itself refused (too large) is said; how a connection failed is not.
                let refused = error.message.contains("larger than")
                throw BadgeError(.network, refused ? "cannot download the image: " + error.message : "cannot download the image from its result URL",
                                 backend: name, path: Redact.url(current), hint: hint)
            }
            if [301, 302, 303, 307, 308].contains(response.status) {
                let location = response.headers.first { $0.name.lowercased() == "location" }?.value ?? ""
                guard let next = URL(string: location.trimmingCharacters(in: .whitespaces), relativeTo: current)?.absoluteURL,
                      !location.isEmpty else {
                    throw BadgeError(.generationFailed, "the server's result URL redirects without a valid Location", backend: name,
                                     path: Redact.url(current), hint: hint)
                }
                guard seen.count <= Self.maxResultRedirects else {
                    throw BadgeError(.generationFailed, "the server's result URL redirects more than \(Self.maxResultRedirects) times",
                                     backend: name, path: Redact.url(url), hint: hint)
                }
                guard seen.insert(next.absoluteString).inserted else {
                    throw BadgeError(.generationFailed, "the server's result URL redirects in a loop", backend: name,
                                     path: Redact.url(url), hint: hint)
                }
                try checkResultURL(next, redirected: true)
                current = next
                continue
            }
            guard (200..<300).contains(response.status) else {
                throw BadgeError(.generationFailed, "cannot download the image from its result URL", backend: name, path: Redact.url(current), hint: hint)
            }
            return response.body
        }
    }

    /// A result URL names where the server put the image; the server chose
    /// it, so it may point anywhere (a service on the user's own machine).
    /// Admitted: https on the base URL's host and port, or on a host the
    /// config's `resultHosts` lists; plain http only from a loopback server
    /// to its own loopback host and port. Every redirect hop passes it too.
    func checkResultURL(_ url: URL, redirected: Bool = false) throws {
        let scheme = url.scheme?.lowercased() ?? ""
        let host = (url.host ?? "").lowercased()
        let base = options.baseURL
        func refuse(_ message: String, hint: String) -> BadgeError {
            BadgeError(.generationFailed, (redirected ? "the server's result URL redirects to a URL that " : "the server's result URL ") + message,
                       backend: name, path: Redact.url(url), hint: hint)
        }
        guard scheme == "https" || scheme == "http" else {
            throw refuse("uses the scheme \"\(scheme)\"; badge fetches only https", hint: "the server must answer with an https URL or the image itself")
        }
        let baseHost = (base.host ?? "").lowercased()
        let sameOrigin = scheme == base.scheme?.lowercased() && host == baseHost && Self.port(of: url) == Self.port(of: base)
        guard sameOrigin || options.resultHosts.contains(where: { Self.host(host, matches: $0) }) else {
            throw refuse("is not on the configured url's host and port (\(host.isEmpty ? "no host" : host))",
                         hint: "if this server keeps its images on \(host.isEmpty ? "another host" : host), add it to \"resultHosts\" for this backend")
        }
        if scheme == "http" && !(sameOrigin && Self.isLoopback(baseHost)) {
            throw refuse("is plain http; badge fetches only https (http only from a server on this machine, at its own address)",
                         hint: "the server must answer with an https URL or the image itself")
        }
    }

    static func port(of url: URL) -> Int {
        url.port ?? (url.scheme?.lowercased() == "http" ? 80 : 443)
    }

    /// `pattern` is a host name, or "*.example.com" for its subdomains.
    static func host(_ host: String, matches pattern: String) -> Bool {
        let pattern = pattern.lowercased()
        if pattern.hasPrefix("*.") { return host.hasSuffix(String(pattern.dropFirst(1))) }
        return host == pattern
    }

    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if bare == "localhost" || bare == "::1" { return true }
        let parts = bare.split(separator: ".")
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// An error that names the backend, the URL, the status, the server's own
    /// words and its request id (scrubbed with the rest by `scrubbed`).
    func serverError(_ response: HTTPResponse, url: String) -> BadgeError {
        var message = "HTTP \(response.status)"
        if let said = Self.serverMessage(response) { message += ": " + said }
        if let id = response.header("x-request-id") ?? response.header("request-id") { message += " (request id \(id))" }
        let hint: String?
        switch response.status {
        case 401, 403: hint = "check the key in \(options.apiKeyEnv ?? options.passwordEnv ?? "the environment") and its permissions"
        case 300..<400:
            // Where it points, without the query or user (a key may travel there), and cut.
            let location = response.header("location").flatMap { URL(string: String($0.prefix(2048))) }.map(Redact.url)
            hint = "the server sends the request on\(location.map { " to " + String($0.prefix(300)) } ?? ""); "
                + "badge does not follow a redirect with the key: set url to where it points"
        case 404: hint = "check url (\(options.baseURL.absoluteString)) and model"
        case 429: hint = "the server is rate limiting; try again later, or raise retries"
        case 500...: hint = "the server failed; try again later"
        default: hint = nil
        }
        return BadgeError(.generationFailed, message, backend: name, path: url, hint: hint)
    }

    static func serverMessage(_ response: HTTPResponse) -> String? {
        if let said = JSONBody.decodeIfValid(ServerErrorAnswer.self, from: response.body)?.said { return said }
        let text = String(decoding: response.body.prefix(2048), as: UTF8.self)
        if text.range(of: "<html", options: .caseInsensitive) != nil || text.range(of: "<!doctype", options: .caseInsensitive) != nil {
            return "the server answered with an HTML page (\(response.body.count) bytes), not the API's JSON"
        }
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let printable = line.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }
        let short = String(String.UnicodeScalarView(printable)).prefix(200)
        return short.isEmpty ? nil : String(short)
    }
}

extension RemoteGenerator: ProbingGenerator {
    /// Asks the server something cheap (its model list) to learn whether it
    /// answers and accepts the key. Never generates.
    package func probe() async -> Availability {
        let offline = await availability()
        guard offline.isAvailable, let http else { return offline }
        let url: URL
        switch options.api {
        case .openai: url = options.baseURL.appendingPathComponent("models")
        case .automatic1111: url = options.baseURL.appendingPathComponent("sdapi/v1/sd-models")
        case .comfyui: url = options.baseURL.appendingPathComponent("system_stats")
        case .raw, .jobs: url = options.baseURL
        }
        let request = HTTPRequest(
            url: url, headers: credentials(), connectTimeout: options.connectTimeout, timeout: .seconds(15),
            idleTimeout: .seconds(10), maxResponseBytes: 4 << 20, allowsInsecureHTTP: options.allowsInsecureHTTP,
            caCertificates: options.caCertificates)
        do {
            let response = try await http.send(request)
            switch response.status {
            case 401, 403:
                return .unavailable(reason: "the server refused the credentials (HTTP \(response.status))",
                                    hint: "check \(options.apiKeyEnv ?? options.passwordEnv ?? "the key")")
            case 500...:
                return .unavailable(reason: "the server answers HTTP \(response.status)", hint: "try again later")
            case 404 where options.api == .openai || options.api == .automatic1111:
                // Every server of these APIs has the list asked for: the url points elsewhere.
                return .unavailable(reason: "the server has no \(Redact.url(url)) (HTTP 404)",
                                    hint: "check url: the API's base, e.g. \(options.api == .openai ? "https://api.openai.com/v1" : "http://127.0.0.1:7860")")
            default:
                return options.api == .comfyui ? try await probeComfyUI(response, request: request, via: http) : .available
            }
        } catch let error as BadgeError {
            let error = scrubbed(error)
            return .unavailable(reason: "\(error.message) (\(Redact.url(url)))", hint: error.hint)
        } catch {
            return .unavailable(reason: "\(error)", hint: nil)
        }
    }
}

extension RemoteGenerator {
    /// ComfyUI answered `/system_stats`: is it ComfyUI, and can it run the
    /// workflows? `GET /object_info` (once for every backend of that server,
    /// `ObjectInfoMemo`) describes every node class the
    /// server has: each workflow node's `class_type` must be there, and each
    /// input the workflow sets from a list of allowed values (a checkpoint,
    /// a sampler) must be one of them. Inputs badge fills itself are skipped.
    func probeComfyUI(_ stats: HTTPResponse, request: HTTPRequest, via http: any HTTPTransport) async throws -> Availability {
        guard (200..<300).contains(stats.status), JSONBody.decodeIfValid(ComfySystemStats.self, from: stats.body)?.hasSystem == true else {
            return .unavailable(reason: "\(Redact.url(request.url)) does not answer as ComfyUI's /system_stats does (HTTP \(stats.status))",
                                hint: "check url: ComfyUI's address, e.g. http://127.0.0.1:8188")
        }
        let workflows = [options.workflow, options.img2imgWorkflow].compactMap { $0 }
        guard !workflows.isEmpty else { return .available }
        var info = request
        info.url = options.baseURL.appendingPathComponent("object_info")
        info.maxResponseBytes = 64 << 20
        let response = try await ObjectInfoMemo.shared.response(to: info, via: http)
        let wanted = Set(workflows.flatMap { $0.nodes.map(\.classType) })
        guard (200..<300).contains(response.status),
              let classes = JSONBody.decodeIfValid(ComfyObjectInfo.self, from: response.body, userInfo: [ComfyObjectInfo.classes: wanted])?.classes
        else {
            return .unavailable(reason: "ComfyUI did not describe its nodes (\(Redact.url(info.url)), HTTP \(response.status))", hint: nil)
        }
        var problems: [String] = []
        var offered: [String] = []
        for workflow in workflows {
            let file = URL(fileURLWithPath: workflow.path).lastPathComponent
            for node in workflow.nodes {
                let kind = OutsideText.printable(String(node.classType.prefix(80)))
                guard let spec = classes[node.classType] else {
                    problems.append("\(file) node \(node.id) is a \(kind), a node class this server does not have")
                    continue
                }
                for (name, value) in node.values where !workflow.fills(node: node.id, input: name) {
                    guard case let .string(text) = value.value, let allowed = spec.inputs[name]?.allowed, !allowed.contains(text) else { continue }
                    problems.append("\(file) node \(node.id) (\(kind)) sets \(name) to \"\(OutsideText.printable(String(text.prefix(80))))\", which this server does not offer")
                    if offered.isEmpty, !allowed.isEmpty {
                        offered = allowed.prefix(20).map { OutsideText.printable(String($0.prefix(80))) }
                        offered[0] = "\(name): " + offered[0]
                    }
                }
            }
        }
        guard problems.isEmpty else {
            let has = offered.isEmpty ? "" : " (the server has \(offered.joined(separator: ", ")))"
            return .unavailable(reason: "the workflow does not fit this ComfyUI: " + problems.prefix(5).joined(separator: "; "),
                                hint: "install the missing nodes or models (checkpoints go in ComfyUI's models/checkpoints), or change the workflow\(has)")
        }
        return .available
    }
}

/// Keeping secrets out of what badge prints.
enum Redact {
    /// The URL without user info or query (where keys sometimes travel).
    static func url(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "(a URL)" }
        components.user = nil
        components.password = nil
        // "…" added after, not set as the query, which would percent-encode it.
        let hadQuery = components.query != nil
        components.query = nil
        components.fragment = nil
        guard let shown = components.string else { return "(a URL)" }
        return hadQuery ? shown + "?…" : shown
    }

    /// Every secret and piece of one out (`SecretScrubber`: whole, split by
    /// invisible characters, 8 characters of it, a partial echo), then
    /// control characters and bidi overrides.
    static func scrub(_ text: String, secrets: [String]) -> String {
        OutsideText.printable(SecretScrubber(secrets: secrets).scrub(text))
    }

    /// What badge says of a server's answer is its own words up to the first
    /// ": " ("HTTP 401: ", "ComfyUI refused the workflow: "), then the server's.
    /// When those still carry a secret once masked (`scrub` first, then
    /// `SecretScrubber.echoes`), they go whole: a piece too short to mask is
    /// still a piece. When the words
    /// before the colon carry it too (or there is no colon: "HTTP 401 (request
    /// id …)"), the whole text goes.
    static func withholdingEchoes(_ text: String, secrets: [String]) -> String {
        let scrubber = SecretScrubber(secrets: secrets)
        guard scrubber.echoes(text) else { return text }
        let withheld = "(the server's words are left out: they repeat the key, in part or encoded)"
        if let colon = text.range(of: ": "), !scrubber.echoes(String(text[..<colon.lowerBound])) {
            return text[..<colon.upperBound] + withheld
        }
        // The server's words before any colon (a request id, a node's class): nothing of them stays.
        return withheld
    }
}
