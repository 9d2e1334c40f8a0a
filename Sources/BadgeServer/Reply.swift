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

    /// One of the studio's files: revalidated by its tag each time it is used.
    static func asset(_ file: StudioAssets.File, request: Request) -> Response {
        if notModified(request, etag: file.etag) {
            return Response(status: .notModified, headers: [.eTag: file.etag, .cacheControl: "no-cache"])
        }
        return Response(status: .ok, headers: [.contentType: file.type, .cacheControl: "no-cache", .eTag: file.etag],
                        body: .init(byteBuffer: file.body))
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

    /// Whether `If-None-Match` already names `etag` (a list, or `*`).
    static func notModified(_ request: Request, etag: String) -> Bool {
        guard let header = request.headers[.ifNoneMatch] else { return false }
        // A browser sends back the one tag it was given.
        if header == etag { return true }
        return header.utf8.split(separator: UInt8(ascii: ",")).contains { tag in
            let tag = tag.drop { $0 == 32 || $0 == 9 }.reversed().drop { $0 == 32 || $0 == 9 }.reversed()
            let text = String(decoding: tag, as: UTF8.self)
            return text == "*" || text == etag || text == "W/" + etag
        }
    }

    /// What a `Problem` or a `BadgeError` answers.
    struct ProblemJSON: Encodable {
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
        json(ProblemJSON(error: .init(code: code, message: message, hint: hint, parameter: parameter, allowed: allowed)), status: status, headers: headers)
    }
}
