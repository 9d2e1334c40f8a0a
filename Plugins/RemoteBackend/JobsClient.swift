import BadgeKit
import Foundation
import Logging

/// Asynchronous APIs: submit a job, poll it until it ends or the deadline
/// passes, then fetch its output (Replicate-style predictions; servers such as
/// stable-diffusion.cpp's that queue their work). A job badge gives up on (it
/// was cancelled, the deadline passed, polling failed) is cancelled on the
/// server where the API has a cancel endpoint.
struct JobsClient {
    let generator: RemoteGenerator
    let http: any HTTPTransport

    var options: RemoteOptions { generator.options }

    enum Status {
        case running
        case succeeded(RemoteImage)
        case failed(String)
    }

    func run(_ request: BadgeRequest, credentials: [(name: String, value: String)]) async throws -> Data {
        let body = try Self.body(request, options: options)
        let submitURL = url(options.submitPath, id: nil)
        let submit = options.post(to: submitURL, json: body, accept: "application/json", credentials: credentials)
        // A submit that is under way finishes even if badge is cancelled meanwhile: the
        // server may have made the job already, and only its answer says which one to cancel.
        let submitted = try await generator.sendWithRetries(submit, via: http, finishingInFlight: true)
        guard (200..<300).contains(submitted.status) else { throw generator.serverError(submitted, url: Redact.url(submitURL)) }
        let context = ResponseContext(backend: generator.name, url: Redact.url(submitURL))
        let job = try JSONBody.decode(JobAnswer.self, from: submitted, context: context)
        guard let id = job.id?.text ?? job.jobID else {
            throw BadgeError(.generationFailed, "the server accepted the job but gave it no \"id\"", backend: generator.name, path: context.url)
        }
        // The id goes into the status and cancel URLs: "../../admin/wipe" would become GET /admin/wipe, with the key.
        guard ServerID.isValid(id) else {
            throw BadgeError(.generationFailed,
                             "the server gave the job an id badge will not put in a URL: \"\(OutsideText.printable(String(id.prefix(80)), keepingNewlines: false))\"",
                             backend: generator.name, path: context.url,
                             hint: "an id is 1 to 128 letters, digits, '-' and '_'; nothing more was sent to the server")
        }
        generator.logger.debug("job submitted", metadata: ["backend": "\(generator.name)", "id": "\(Redact.scrub(id, secrets: generator.secrets))"])
        if Task.isCancelled {
            await cancelJob(id, credentials: credentials)
            throw CancellationError()
        }

        let deadline = PollDeadline(after: options.timeout)
        var status = try Self.status(of: job, context: context)
        var wait = options.pollInterval
        do {
            while case .running = status {
                guard let nap = deadline.wait(wait) else {
                    throw BadgeError(.timeout, "the job \(id) did not finish within \(options.timeout)", backend: generator.name,
                                     path: context.url, hint: "raise timeoutSeconds for this backend, or try again later")
                }
                try await Task.sleep(for: nap)
                let statusURL = url(options.statusPath, id: id)
                let polled = try await generator.sendWithRetries(
                    HTTPRequest(url: statusURL, headers: [("Accept", "application/json")] + credentials,
                                connectTimeout: options.connectTimeout, timeout: deadline.pollTimeout(), idleTimeout: options.idleTimeout,
                                maxResponseBytes: options.maxResponseBytes, allowsInsecureHTTP: options.allowsInsecureHTTP,
                                caCertificates: options.caCertificates),
                    via: http)
                guard (200..<300).contains(polled.status) else { throw generator.serverError(polled, url: Redact.url(statusURL)) }
                status = try Self.status(of: try JSONBody.decode(JobAnswer.self, from: polled, context: context), context: context)
                wait = RetryPolicy.serverDelay(polled, now: generator.now()).map { max($0, options.pollInterval) } ?? options.pollInterval
            }
        } catch {
            // Whatever ends our interest in the job (Ctrl-C, the deadline, a
            // server that stopped answering), it should not go on running there.
            await cancelJob(id, credentials: credentials)
            throw error
        }
        switch status {
        case .running:
            throw BadgeError(.generationFailed, "the job \(id) is still running", backend: generator.name)
        case let .failed(message):
            throw BadgeError(.generationFailed, "the job \(id) failed: \(message)",
                             backend: generator.name, path: context.url)
        case let .succeeded(.bytes(data)):
            return data
        case let .succeeded(.url(url)):
            return try await generator.download(url, via: http)
        }
    }

    /// The submit's body: `bodyTemplate` filled in for `request`.
    static func body(_ request: BadgeRequest, options: RemoteOptions) throws -> Data {
        try JSONBody.encode(RawDialect.fill(options.bodyTemplate!, request: request))
    }

    private func url(_ path: String, id: String?) -> URL {
        let filled = id.map { path.replacingOccurrences(of: "{id}", with: $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? $0) } ?? path
        return filled.isEmpty ? options.baseURL : options.baseURL.appendingPathComponent(filled)
    }

    /// Best effort, and never cancelled itself: the caller is already going away.
    private func cancelJob(_ id: String, credentials: [(name: String, value: String)]) async {
        guard let path = options.cancelPath else { return }
        let request = options.post(to: url(path, id: id), json: Data("{}".utf8), accept: "application/json", credentials: credentials)
        let http = self.http
        let logger = generator.logger
        let name = generator.name
        let id = Redact.scrub(id, secrets: generator.secrets)
        await Task.detached {
            var shortened = request
            shortened.timeout = .seconds(5)
            do {
                _ = try await http.send(shortened)
                logger.info("job cancelled on the server", metadata: ["backend": "\(name)", "id": "\(id)"])
            } catch {
                logger.warning("could not cancel the job on the server", metadata: ["backend": "\(name)", "id": "\(id)"])
            }
        }.value
    }

    static func status(of job: JobAnswer, context: ResponseContext) throws -> Status {
        let state = (job.status ?? job.state ?? "").lowercased()
        switch state {
        case "succeeded", "completed", "complete", "done", "success", "finished":
            guard let image = output(job.output ?? job.result ?? job.images) else {
                throw BadgeError(.generationFailed, "the job finished without an image in its output", backend: context.backend, path: context.url)
            }
            return .succeeded(image)
        case "failed", "error", "canceled", "cancelled", "aborted":
            return .failed(job.error?.message ?? "status \(state)")
        case "", "starting", "queued", "pending", "processing", "running", "in_progress", "generating":
            return .running
        default:
            return .running
        }
    }

    /// An output field: a URL, a data URL, base64, or a list or object holding one.
    static func output(_ value: JSONNode.Value?) -> RemoteImage? {
        switch value {
        case let .array(items)?:
            return items.lazy.compactMap { output($0.value) }.first
        case .object?:
            return output(value?["url"] ?? value?["image"] ?? value?["b64_json"] ?? value?["images"] ?? value?["data"])
        case let .string(text)?:
            if text.hasPrefix("data:") { return StrictBase64.decode(String(text.drop { $0 != "," }.dropFirst())).map(RemoteImage.bytes) }
            if let url = URL(string: text), let scheme = url.scheme, ["http", "https", "file", "ftp"].contains(scheme.lowercased()) {
                return .url(url)
            }
            return StrictBase64.decode(text).map(RemoteImage.bytes)
        default:
            return nil
        }
    }
}
