import BadgeKit
import Foundation
import Logging

/// ComfyUI's HTTP API: the source picture up with `POST /upload/image`, the
/// filled workflow queued with `POST /prompt`, the run followed by polling
/// `GET /history/{id}` (no WebSocket client is in the tree, and polling with
/// a short first wait costs a run milliseconds, not seconds), and the image
/// fetched with `GET /view`. A run badge gives up on (Ctrl-C, the deadline, a
/// failed poll) is interrupted if it is the one executing (`GET /queue` says)
/// and removed from the queue.
struct ComfyClient {
    let generator: RemoteGenerator
    let http: any HTTPTransport
    let credentials: [(name: String, value: String)]

    var options: RemoteOptions { generator.options }
    var name: String { generator.name }

    /// The first wait before asking again, doubled up to `pollInterval`.
    static let firstPoll: Duration = .milliseconds(10)

    func run(_ request: BadgeRequest, source: SourcePicture?) async throws -> Data {
        let workflow: ComfyWorkflow
        var values = Self.values(request, options: options)
        if let source {
            guard let img2img = options.img2imgWorkflow else {
                throw BadgeError(.usage, "backend '\(name)' has no img2img workflow for a source picture", backend: name,
                                 hint: "add \"img2imgWorkflow\" and \"img2imgInputs\" to its config (see Plugins/Examples/comfyui)")
            }
            workflow = img2img
            if let denoise = try Automatic1111Dialect.denoisingStrength(request, options: options) {
                values[.denoise] = .number(denoise)
            }
            values[.image] = .string(try await upload(source))
        } else {
            workflow = options.workflow!
        }

        let clientID = UUID().uuidString.lowercased()
        // badge names the run itself (ComfyUI takes a client's prompt_id), so a POST whose
        // answer is lost can be looked up on the server before it is sent again.
        let promptID = UUID().uuidString.lowercased()
        let body = try JSONBody.encode(ComfyPromptRequest(prompt: workflow.filled(values), clientID: clientID, promptID: promptID))
        let promptURL = url("prompt")
        let context = ResponseContext(backend: name, url: Redact.url(promptURL))
        // A queued run is answered even if badge is cancelled meanwhile: only its id lets it be removed.
        let client = self
        let queued = try await generator.sendWithRetries(
            options.post(to: promptURL, json: body, accept: "application/json", credentials: credentials), via: http, finishingInFlight: true,
            unlessDone: { await client.isQueued(promptID) })
        var id = promptID
        if let queued {
            guard (200..<300).contains(queued.status) else {
                // A workflow that does not validate is refused with each node at fault.
                if let answer = JSONBody.decodeIfValid(ComfyPromptAnswer.self, from: queued.body), let nodeErrors = answer.nodeErrors,
                   !nodeErrors.isEmpty {
                    throw Self.nodeErrorsError(nodeErrors, summary: answer.error?.value?.message, workflow: workflow, context: context)
                }
                throw generator.serverError(queued, url: context.url)
            }
            let answer: ComfyPromptAnswer
            do {
                answer = try JSONBody.decode(ComfyPromptAnswer.self, from: queued, context: context)
            } catch {
                // The server took the workflow, and may have queued it.
                await abandon(promptID, clientID: clientID)
                throw error
            }
            if let nodeErrors = answer.nodeErrors, !nodeErrors.isEmpty {
                // A 200 with node errors still queued the valid outputs ("Output will be ignored"): remove that run first.
                let queuedID = answer.promptID.flatMap { ServerID.isValid($0) ? $0 : nil } ?? promptID
                await abandon(queuedID, clientID: clientID)
                throw Self.nodeErrorsError(nodeErrors, summary: answer.error?.value?.message, workflow: workflow, context: context)
            }
            guard let answered = answer.promptID, ServerID.isValid(answered) else {
                await abandon(promptID, clientID: clientID)
                throw BadgeError(.generationFailed, "ComfyUI queued the workflow but gave no usable \"prompt_id\"", backend: name, path: context.url)
            }
            id = answered
        } else {
            generator.logger.info("comfyui: the answer to POST /prompt was lost, but the run is queued; not sending it again",
                                  metadata: ["backend": "\(name)", "id": "\(promptID)"])
        }
        generator.logger.debug("comfyui run queued", metadata: ["backend": "\(name)", "id": "\(OutsideText.printable(id))"])

        let image: ViewTarget
        do {
            if Task.isCancelled { throw CancellationError() }
            image = try await follow(id)
        } catch {
            // Whatever ends our interest in the run, it should not go on using the server's GPU.
            await abandon(id, clientID: clientID)
            throw error
        }
        let viewURL: URL
        do {
            viewURL = try image.url(base: options.baseURL)
        } catch let error as BadgeError {
            throw error.attributed(to: name)
        }
        let response = try await generator.sendWithRetries(get(viewURL), via: http)
        guard (200..<300).contains(response.status) else { throw generator.serverError(response, url: Redact.url(viewURL)) }
        return response.body
    }

    /// What badge puts in the workflow for `request`, but for a source picture's name and denoise.
    static func values(_ request: BadgeRequest, options: RemoteOptions) -> [ComfyWorkflow.Slot: JSONNode.Value] {
        var values: [ComfyWorkflow.Slot: JSONNode.Value] = [
            // ComfyUI's seeds are 64-bit; JSON readers beyond Python keep 53 bits exactly.
            .prompt: .string(request.prompt), .seed: .number(request.seed % (1 << 53)),
            .width: .number(request.size), .height: .number(request.size),
        ]
        if let negative = options.negativePrompt { values[.negativePrompt] = .string(negative) }
        return values
    }

    // MARK: - Steps

    /// `POST /upload/image`; returns the name a LoadImage node takes, as the
    /// server's answer gives it. The upload is named by the hash of the bytes
    /// sent (one picture at two sizes is two files) and never overwrites: a
    /// server that has another file of that name keeps both and says which.
    func upload(_ source: SourcePicture) async throws -> String {
        let uploadURL = url("upload/image")
        let form = [
            HTTPFormPart(name: "image", data: source.png, filename: "badge-source-\(try BatchHash.sha256(source.png).prefix(24)).png",
                         contentType: "image/png"),
            HTTPFormPart(name: "type", value: "input"),
        ]
        let response = try await generator.sendWithRetries(
            options.post(to: uploadURL, form: form, accept: "application/json", credentials: credentials), via: http)
        let context = ResponseContext(backend: name, url: Redact.url(uploadURL))
        guard (200..<300).contains(response.status) else { throw generator.serverError(response, url: context.url) }
        let answer = try JSONBody.decode(ComfyUploadAnswer.self, from: response, context: context)
        guard let file = answer.name, !file.isEmpty else {
            throw BadgeError(.generationFailed, "ComfyUI took the picture but did not say its name", backend: name, path: context.url)
        }
        let subfolder = answer.subfolder ?? ""
        return subfolder.isEmpty ? file : subfolder + "/" + file
    }

    /// Polls the run's history until it has finished; returns its first output image.
    func follow(_ id: String) async throws -> ViewTarget {
        let deadline = PollDeadline(after: options.timeout)
        let historyURL = url("history/" + id)
        let context = ResponseContext(backend: name, url: Redact.url(historyURL))
        var wait = Self.firstPoll
        while true {
            let response = try await generator.sendWithRetries(get(historyURL, timeout: deadline.pollTimeout()), via: http)
            guard (200..<300).contains(response.status) else { throw generator.serverError(response, url: context.url) }
            let history = try JSONBody.decode(ComfyHistoryAnswer.self, from: response, context: context, userInfo: [ComfyHistoryAnswer.runID: id])
            if let run = history.run, let done = try Self.result(of: run, context: context) {
                return done
            }
            guard let nap = deadline.wait(wait) else {
                throw BadgeError(.timeout, "the ComfyUI run \(OutsideText.printable(id)) did not finish within \(options.timeout)", backend: name,
                                 path: context.url, hint: "raise timeoutSeconds for this backend, or try again later")
            }
            try await Task.sleep(for: nap)
            wait = min(wait * 2, options.pollInterval)
        }
    }

    /// Whether the run `id` is on the server (queued, running or done): asked
    /// after a POST /prompt whose answer did not arrive, before sending it again.
    func isQueued(_ id: String) async -> Bool {
        let client = self
        return await Task.detached {
            if let history = try? await client.http.send(client.get(client.url("history/" + id), timeout: .seconds(5))),
               (200..<300).contains(history.status), JSONBody.decodeIfValid(ObjectKeys.self, from: history.body)?.keys.contains(id) == true {
                return true
            }
            if let queue = try? await client.http.send(client.get(client.url("queue"), timeout: .seconds(5))),
               let items = JSONBody.decodeIfValid(ComfyQueueAnswer.self, from: queue.body)?.items {
                return (items.running + items.pending).contains { $0.id == id }
            }
            return false
        }.value
    }

    /// Best effort, never cancelled itself: interrupts the run if one of this
    /// run's is executing, and deletes from the queue `id` and every item that
    /// carries this run's `clientID` (a copy queued by a retry included).
    func abandon(_ id: String, clientID: String) async {
        let client = self
        await Task.detached {
            var running: [String] = []
            var ours: Set<String> = [id]
            if let queue = try? await client.http.send(client.get(client.url("queue"), timeout: .seconds(5))),
               let items = JSONBody.decodeIfValid(ComfyQueueAnswer.self, from: queue.body)?.items {
                func mine(_ item: ComfyQueueAnswer.Item) -> String? {
                    guard let itemID = item.id else { return nil }
                    return itemID == id || item.clientID == clientID ? itemID : nil
                }
                running = items.running.compactMap(mine)
                ours.formUnion(running + items.pending.compactMap(mine))
            }
            let executing = !running.isEmpty
            for runningID in running {
                guard let body = try? JSONBody.encode(ComfyInterruptRequest(promptID: runningID)) else { continue }
                var interrupt = client.options.post(to: client.url("interrupt"), json: body, accept: "application/json", credentials: client.credentials)
                interrupt.timeout = .seconds(5)
                _ = try? await client.http.send(interrupt)
            }
            if let body = try? JSONBody.encode(ComfyDeleteRequest(delete: ours.sorted())) {
                var delete = client.options.post(to: client.url("queue"), json: body, accept: "application/json", credentials: client.credentials)
                delete.timeout = .seconds(5)
                _ = try? await client.http.send(delete)
            }
            client.generator.logger.info("comfyui run abandoned", metadata: [
                "backend": "\(client.name)", "id": "\(OutsideText.printable(id))", "interrupted": "\(executing)",
            ])
        }.value
    }

    // MARK: - Reading answers

    /// Where a finished run's image is, as `/view` takes it.
    struct ViewTarget: Equatable {
        var filename: String
        var subfolder: String
        var type: String

        /// `/view?filename=&subfolder=&type=`. The server chose these names: one that
        /// leaves the output folder (`..`, an absolute path, a backslash) is refused.
        func url(base: URL) throws -> URL {
            if type == "temp" {
                throw BadgeError(.generationFailed, "the ComfyUI run made only a preview (an image of type \"temp\"), which ComfyUI deletes",
                                 hint: "use a SaveImage node in the workflow, not PreviewImage")
            }
            func escapes(_ text: String) -> Bool {
                text.hasPrefix("/") || text.contains("\\") || text.split(separator: "/").contains("..")
                    || text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
            }
            guard !filename.isEmpty, !filename.contains("/"), !escapes(filename), !escapes(subfolder), type == "output" else {
                throw BadgeError(.generationFailed, "the server's answer points /view outside its output folder (filename \"\(OutsideText.printable(String(filename.prefix(80))))\", subfolder \"\(OutsideText.printable(String(subfolder.prefix(80))))\", type \"\(OutsideText.printable(String(type.prefix(20))))\")",
                                 hint: "badge fetches only images a SaveImage node wrote to ComfyUI's output folder")
            }
            var components = URLComponents(url: base.appendingPathComponent("view"), resolvingAgainstBaseURL: false)!
            components.queryItems = [.init(name: "filename", value: filename), .init(name: "subfolder", value: subfolder), .init(name: "type", value: type)]
            return components.url!
        }
    }

    /// nil while the run is going on; its image once it succeeded; throws when it failed.
    static func result(of run: ComfyHistoryAnswer.Run, context: ResponseContext) throws -> ViewTarget? {
        let state = run.status?.statusText
        let messages = run.status?.messages?.value ?? []
        if state == "error" {
            let failure = messages.first { $0.event == "execution_error" }?.failure
            let interrupted = messages.contains { $0.event == "execution_interrupted" }
            var message = interrupted ? "the ComfyUI run was interrupted" : "the ComfyUI run failed"
            if let failure {
                let node = OutsideText.printable(String((failure.nodeID?.text ?? "?").prefix(80)))
                let kind = OutsideText.printable(String((failure.nodeType?.text ?? "?").prefix(80)))
                message += " in node \(node) (\(kind)): " + OutsideText.printable(String((failure.exceptionMessage?.text ?? "no message").prefix(300)))
            }
            throw BadgeError(.generationFailed, message, backend: context.backend, path: context.url)
        }
        guard run.status?.completed == true || state == "success" else { return nil }
        let outputs = run.outputs ?? [:]
        let ids = outputs.keys.sorted { (Int($0) ?? .max, $0) < (Int($1) ?? .max, $1) }
        for node in ids {
            for image in outputs[node]?.images ?? [] where (image.type ?? "output") == "output" {
                return ViewTarget(filename: image.filename ?? "", subfolder: image.subfolder ?? "", type: image.type ?? "output")
            }
        }
        // An image of another type only (a PreviewImage's "temp"), or one pointing elsewhere, is refused by `url`.
        for node in ids {
            if let image = outputs[node]?.images?.first {
                return ViewTarget(filename: image.filename ?? "", subfolder: image.subfolder ?? "", type: image.type ?? "")
            }
        }
        throw BadgeError(.generationFailed, "the ComfyUI run finished without an image", backend: context.backend, path: context.url,
                         hint: "the workflow needs a SaveImage node")
    }

    /// ComfyUI's validation errors, as `POST /prompt` reports them: each node with the input at fault.
    /// `summary`: the answer's own `error.message`.
    static func nodeErrorsError(
        _ nodeErrors: [String: ComfyPromptAnswer.NodeErrors], summary: String?, workflow: ComfyWorkflow, context: ResponseContext
    ) -> BadgeError {
        var lines: [String] = []
        for node in nodeErrors.keys.sorted() {
            let entry = nodeErrors[node]!
            let kind = entry.classType ?? "?"
            for error in entry.errors ?? [.init()] {
                let input = error.extraInfo?.inputName
                let said = [error.message, error.details].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ": ")
                lines.append("node \(node) (\(kind))" + (input.map { ", input \"\($0)\"" } ?? "") + ": " + (said.isEmpty ? "invalid" : said))
            }
        }
        let text = OutsideText.printable(String(((summary.map { $0 + ": " } ?? "") + lines.joined(separator: "; ")).prefix(1000)))
        return BadgeError(.generationFailed, "ComfyUI refused the workflow: " + text, backend: context.backend, path: context.url,
                          hint: "check \(workflow.path) and that its models are installed on the server")
    }

    // MARK: - Requests

    func url(_ path: String) -> URL { options.baseURL.appendingPathComponent(path) }

    func get(_ url: URL, timeout: Duration? = nil) -> HTTPRequest {
        HTTPRequest(url: url, headers: [("Accept", "application/json, image/*")] + credentials,
                    connectTimeout: options.connectTimeout, timeout: timeout ?? options.timeout, idleTimeout: options.idleTimeout,
                    maxResponseBytes: options.maxResponseBytes, allowsInsecureHTTP: options.allowsInsecureHTTP, caCertificates: options.caCertificates)
    }
}
