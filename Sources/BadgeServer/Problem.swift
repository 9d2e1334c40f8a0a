import BadgeKit
import Foundation
import HTTPTypes
import Hummingbird

/// An answer that is not the one asked for, as JSON that says what was wrong
/// and what to do: `{"error": {"code", "message", "hint", ...}}`. Thrown by
/// handlers and middleware alike; the router turns it into its response.
struct Problem: Error, HTTPResponseError {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    var hint: String? = nil
    var parameter: String? = nil
    var allowed: String? = nil
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, code: String, _ message: String, hint: String? = nil, parameter: String? = nil,
         allowed: String? = nil, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.hint = hint
        self.parameter = parameter
        self.allowed = allowed
        self.headers = headers
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        Reply.problem(status, code: code, message, hint: hint, parameter: parameter, allowed: allowed, headers: headers)
    }

    /// 404: no route has `path`.
    static func nothing(at path: String, hint: String? = nil) -> Problem {
        Problem(.notFound, code: "not-found", "there is nothing at \(ServeSettings.quoted(path))", hint: hint)
    }

    /// 503 with Retry-After: the render queue is full.
    static func busy(retryAfter seconds: Int) -> Problem {
        Problem(.serviceUnavailable, code: "busy", "every render slot is taken and the queue is full",
                hint: "try again in \(seconds) s", headers: [.retryAfter: String(seconds)])
    }
}

/// badge's own errors answer with the status their kind calls for, here alone.
extension BadgeError: HTTPResponseError {
    public var status: HTTPResponse.Status {
        switch code {
        case .usage, .unknownBackend, .config: .badRequest
        case .notFound: .notFound
        case .cancelled: .conflict
        case .backendUnavailable: .serviceUnavailable
        case .timeout: .gatewayTimeout
        default: .internalServerError
        }
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Reply.problem(status, code: code.rawValue, OutsideText.printable(message, keepingNewlines: false),
                      hint: hint.map { OutsideText.printable($0, keepingNewlines: false) })
    }
}

/// Any other error a handler lets go (a file system's, a cancellation) is
/// a `BadgeError`, and so answers as one.
struct ErrorAnswer<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            throw error
        } catch {
            throw BadgeError.wrap(error, message: "the studio could not do that")
        }
    }
}

/// 429 with Retry-After: every studio job slot holds a set still being made.
extension Studio.Full: HTTPResponseError {
    package var status: HTTPResponse.Status { .tooManyRequests }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        Reply.problem(status, code: "busy", "\(running) sets of candidates are being made already",
                      hint: "cancel one, or wait for one to finish", headers: [.retryAfter: "5"])
    }
}
