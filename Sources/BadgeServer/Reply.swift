import BadgeKit
import Foundation
import HTTPTypes
import Hummingbird

/// The answers the server gives: JSON, PNG, HTML, and errors as JSON that say
/// what was wrong and what to do, in the words the CLI uses.
enum Reply {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        if fields[.cacheControl] == nil { fields[.cacheControl] = "no-store" }
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// A PNG (a HEAD gets its headers from `headOnly`).
    static func png(_ data: Data, etag: String?, cacheControl: String, fileName: String? = nil) -> Response {
        png(ByteBuffer(bytes: data), etag: etag, cacheControl: cacheControl, fileName: fileName)
    }

    static func png(_ body: ByteBuffer, etag: String?, cacheControl: String, fileName: String? = nil) -> Response {
        var headers: HTTPFields = [.contentType: "image/png", .cacheControl: cacheControl, .contentLength: String(body.readableBytes)]
        if let etag { headers[.eTag] = etag }
        if let fileName { headers[.contentDisposition] = "attachment; filename=\"\(fileName)\"" }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }

    /// An SVG badge: sniffing off, and a policy under which nothing in it
    /// could run or load, were anything active in it (SVGCheck makes sure
    /// nothing is): no script, no fetch, inline presentation only.
    static func svg(_ body: ByteBuffer, etag: String, cacheControl: String, fileName: String? = nil) -> Response {
        var headers: HTTPFields = [
            .contentType: "image/svg+xml", .cacheControl: cacheControl, .contentLength: String(body.readableBytes), .eTag: etag,
            .xContentTypeOptions: "nosniff",
            .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; script-src 'none'; sandbox",
        ]
        if let fileName { headers[.contentDisposition] = "attachment; filename=\"\(fileName)\"" }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }

    /// A GET's answer to a HEAD: its headers, with the length GET would send, and no body.
    static func headOnly(_ response: Response) -> Response {
        var response = response
        let length = response.headers[.contentLength] ?? response.body.contentLength.map(String.init)
        // Setting the body sets its length (0) as the Content-Length: the GET's goes back after.
        response.body = .init()
        if let length { response.headers[.contentLength] = length }
        return response
    }

    /// Whether `If-None-Match` already names `etag` (a list, or `*`).
    static func notModified(_ request: Request, etag: String) -> Bool {
        guard let header = request.headers[.ifNoneMatch] else { return false }
        return header.split(separator: ",").contains { tag in
            let tag = tag.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }

    struct Problem: Encodable {
        struct Body: Encodable {
            var code: String
            var message: String
            var hint: String?
            var parameter: String?
            var allowed: String?
        }
        var error: Body
    }

    static func problem(
        _ status: HTTPResponse.Status, code: String, _ message: String, hint: String? = nil, parameter: String? = nil,
        allowed: String? = nil, headers: HTTPFields = [:]
    ) -> Response {
        json(Problem(error: .init(code: code, message: message, hint: hint, parameter: parameter, allowed: allowed)), status: status, headers: headers)
    }

    /// 404: no route has `path`.
    static func nothing(at path: String, hint: String? = nil) -> Response {
        problem(.notFound, code: "not-found", "there is nothing at \(ServeSettings.quoted(path))", hint: hint)
    }

    /// 503 with Retry-After: the render queue is full.
    static func busy(retryAfter seconds: Int) -> Response {
        problem(.serviceUnavailable, code: "busy", "every render slot is taken and the queue is full",
                hint: "try again in \(seconds) s", headers: [.retryAfter: String(seconds)])
    }

    /// 429 with Retry-After: every studio job slot holds a set still being made.
    static func studioFull(running: Int) -> Response {
        problem(.tooManyRequests, code: "busy", "\(running) sets of candidates are being made already",
                hint: "cancel one, or wait for one to finish", headers: [.retryAfter: "5"])
    }

    /// A `BadgeError` as JSON, with the status its kind calls for.
    static func failure(_ error: BadgeError) -> Response {
        let status: HTTPResponse.Status
        switch error.code {
        case .usage, .unknownBackend, .config: status = .badRequest
        case .notFound: status = .notFound
        case .cancelled: status = .conflict
        case .backendUnavailable: status = .serviceUnavailable
        case .timeout: status = .gatewayTimeout
        default: status = .internalServerError
        }
        let hint = error.hint.map { OutsideText.printable($0, keepingNewlines: false) }
        return problem(status, code: error.code.rawValue, OutsideText.printable(error.message, keepingNewlines: false), hint: hint)
    }
}
