import BadgeKit
import CCurl
import Foundation

/// One exchange in flight: its easy handle, what has arrived so far, and the
/// continuation to resume. Touched only by the loop thread once submitted
/// (the callbacks run on that thread too), except the cancellation flag.
final class Transfer: @unchecked Sendable {
    private let cancelLock = NSLock()
    private var cancelled = false

    /// Any thread may ask; the loop thread acts on it, whether the transfer
    /// is already running or has not reached the loop yet.
    func requestCancel() { cancelLock.withLock { cancelled = true } }
    var isCancelRequested: Bool { cancelLock.withLock { cancelled } }

    let request: HTTPRequest
    let options: CurlTransport.Options
    var continuation: CheckedContinuation<HTTPResponse, any Error>?
    var easy: UnsafeMutableRawPointer?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// A multipart body: curl owns its copy of every part until it is freed here.
    private var mime: OpaquePointer?

    var body = Data()
    var headerLines: [String] = []
    /// Why a callback aborted the transfer (body cap, stall).
    var abortReason: BadgeError?
    var lastProgressBytes: curl_off_t = 0
    var firstByteAt: ContinuousClock.Instant?
    var lastByteAt: ContinuousClock.Instant?

    init(request: HTTPRequest, options: CurlTransport.Options) {
        self.request = request
        self.options = options
    }

    deinit { cleanup() }

    func cleanup() {
        if let easy { badge_curl_easy_cleanup(easy) }
        easy = nil
        if let headerList { badge_curl_slist_free_all(headerList) }
        headerList = nil
        if let mime { badge_curl_mime_free(mime) }
        mime = nil
    }

    /// Resumes the caller once; later calls do nothing.
    func finish(_ result: Result<HTTPResponse, any Error>) {
        guard let continuation else { return }
        self.continuation = nil
        cleanup()
        continuation.resume(with: result)
    }

    /// Marks that bytes arrived now (headers or body).
    func receivedBytes() {
        let now = ContinuousClock.now
        if firstByteAt == nil { firstByteAt = now }
        lastByteAt = now
    }

    /// Creates and configures the easy handle; nil with an error if curl refuses an option.
    func makeHandle() throws -> UnsafeMutableRawPointer {
        guard let easy = badge_curl_easy_init() else {
            throw BadgeError(.network, "libcurl could not create a transfer")
        }
        self.easy = easy
        let r = request
        let https = r.url.scheme?.lowercased() == "https"
        var codes: [CURLcode] = []
        codes.append(badge_curl_setopt_string(easy, CURLOPT_URL, r.url.absoluteString))
        codes.append(badge_curl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, https ? "https" : "http,https"))
        codes.append(badge_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        codes.append(badge_curl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1))
        codes.append(badge_curl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2))
        if let pem = r.caCertificates ?? options.caCertificates {
            // libcurl copies the bytes (CURL_BLOB_COPY): they need to live only for this call.
            codes.append(pem.withUnsafeBytes { raw -> CURLcode in
                var blob = curl_blob(data: UnsafeMutableRawPointer(mutating: raw.baseAddress), len: raw.count, flags: UInt32(CURL_BLOB_COPY))
                return badge_curl_setopt_pointer(easy, CURLOPT_CAINFO_BLOB, &blob)
            })
        }
        codes.append(badge_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(r.connectTimeout)))
        codes.append(badge_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(r.timeout)))
        codes.append(badge_curl_setopt_string(easy, CURLOPT_USERAGENT, options.userAgent))
        codes.append(badge_curl_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, ""))
        if !r.isIdempotent {
            // libcurl sends a request again, unasked, when a connection it reused turns out
            // to be closed before any answer ("Connection died, retrying a fresh connect"),
            // although the server may have acted on the first copy. On a connection of its
            // own the request goes out once, and a lost answer is an error badge sees.
            codes.append(badge_curl_setopt_long(easy, CURLOPT_FRESH_CONNECT, 1))
        }
        codes.append(badge_curl_setopt_off_t(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(r.maxResponseBytes)))
        if r.maxRedirects > 0 {
            codes.append(badge_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1))
            codes.append(badge_curl_setopt_long(easy, CURLOPT_MAXREDIRS, r.maxRedirects))
            codes.append(badge_curl_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "https"))
        } else {
            codes.append(badge_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0))
        }

        for header in r.headers {
            headerList = badge_curl_slist_append(headerList, "\(header.name): \(header.value)")
        }
        // curl adds "Expect: 100-continue" to large POSTs; servers of models rarely want it.
        headerList = badge_curl_slist_append(headerList, "Expect:")
        codes.append(badge_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList))

        switch r.method.uppercased() {
        case "GET":
            codes.append(badge_curl_setopt_long(easy, CURLOPT_HTTPGET, 1))
        case "POST" where r.form != nil:
            codes.append(contentsOf: try attachForm(r.form ?? [], to: easy))
        case "POST":
            let body = r.body ?? Data()
            codes.append(badge_curl_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
            // COPYPOSTFIELDS: curl keeps its own copy, so the Data may go away.
            codes.append(body.withUnsafeBytes { raw in
                badge_curl_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
            })
        case let method:
            codes.append(badge_curl_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method))
            if method == "HEAD" { codes.append(badge_curl_setopt_long(easy, CURLOPT_NOBODY, 1)) }
        }

        let context = Unmanaged.passUnretained(self).toOpaque()
        codes.append(badge_curl_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION, { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            let n = size * count
            transfer.receivedBytes()
            if transfer.body.count + n > transfer.request.maxResponseBytes {
                transfer.abortReason = BadgeError(
                    .network, "the response is larger than \(transfer.request.maxResponseBytes) bytes",
                    path: transfer.request.url.absoluteString, hint: "the server sent more than any image needs; check the URL")
                return 0
            }
            if let data { transfer.body.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: n) }
            return n
        }))
        codes.append(badge_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, context))
        codes.append(badge_curl_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION, { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            let n = size * count
            transfer.receivedBytes()
            guard let data else { return n }
            let line = String(decoding: UnsafeRawBufferPointer(start: data, count: n), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            // A new status line starts a new response (a redirect, a 100 Continue).
            if line.hasPrefix("HTTP/") { transfer.headerLines.removeAll() } else if !line.isEmpty { transfer.headerLines.append(line) }
            return n
        }))
        codes.append(badge_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, context))
        codes.append(badge_curl_setopt_long(easy, CURLOPT_NOPROGRESS, 0))
        codes.append(badge_curl_setopt_xferinfo_callback(easy, { context, _, downloaded, _, _ in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            if downloaded > transfer.lastProgressBytes {
                transfer.lastProgressBytes = downloaded
                transfer.receivedBytes()
            }
            // The idle timer runs only once the server has started answering.
            if let last = transfer.lastByteAt, ContinuousClock.now - last > transfer.request.idleTimeout {
                transfer.abortReason = BadgeError(
                    .timeout, "the response stalled for more than \(transfer.request.idleTimeout) after it had started",
                    path: transfer.request.url.absoluteString, hint: "the server stopped sending; try again later")
                return 1
            }
            return 0
        }))
        codes.append(badge_curl_setopt_pointer(easy, CURLOPT_XFERINFODATA, context))

        if let bad = codes.first(where: { $0 != CURLE_OK }) {
            throw BadgeError(.network, "libcurl refused an option", cause: String(cString: badge_curl_easy_strerror(bad)))
        }
        return easy
    }

    /// Builds the multipart/form-data body with curl's MIME API: curl writes
    /// the boundary and the Content-Type header, and copies every part's bytes.
    private func attachForm(_ parts: [HTTPFormPart], to easy: UnsafeMutableRawPointer) throws -> [CURLcode] {
        guard let mime = badge_curl_mime_init(easy) else {
            throw BadgeError(.network, "libcurl could not create a multipart body")
        }
        self.mime = mime
        var codes: [CURLcode] = []
        for part in parts {
            guard let handle = badge_curl_mime_addpart(mime) else {
                throw BadgeError(.network, "libcurl could not add a part to a multipart body")
            }
            codes.append(badge_curl_mime_name(handle, part.name))
            codes.append(part.data.withUnsafeBytes { raw -> CURLcode in
                guard let base = raw.baseAddress, raw.count > 0 else { return badge_curl_mime_data(handle, "", 0) }
                return badge_curl_mime_data(handle, base.assumingMemoryBound(to: CChar.self), raw.count)
            })
            if let filename = part.filename { codes.append(badge_curl_mime_filename(handle, filename)) }
            if let type = part.contentType { codes.append(badge_curl_mime_type(handle, type)) }
        }
        codes.append(badge_curl_setopt_pointer(easy, CURLOPT_MIMEPOST, UnsafeMutableRawPointer(mime)))
        return codes
    }

    /// Turns curl's verdict into a response or a BadgeError a user can act on.
    func complete(_ code: CURLcode) -> Result<HTTPResponse, any Error> {
        if let abortReason { return .failure(abortReason) }
        let where_ = request.url.absoluteString
        guard code == CURLE_OK else {
            let cause = String(cString: badge_curl_easy_strerror(code))
            var responseStatus = 0
            if let easy { _ = badge_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &responseStatus) }
            let error: BadgeError
            switch code {
            case CURLE_OPERATION_TIMEDOUT:
                error = BadgeError(.timeout, firstByteAt == nil ? "no answer within the time limit" : "the response did not finish within the time limit",
                                   path: where_, cause: cause, hint: "raise timeoutSeconds for this backend, or try again later")
            case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
                error = BadgeError(.network, "cannot resolve the host", path: where_, cause: cause, hint: "check the URL and the network")
            case CURLE_COULDNT_CONNECT:
                error = BadgeError(.network, "cannot connect", path: where_, cause: cause, hint: "is the server running and the URL right?")
            case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CONNECT_ERROR:
                error = BadgeError(.network, "the TLS connection could not be verified", path: where_, cause: cause,
                                   hint: "if the server uses a private CA, set caFile for this backend")
            case CURLE_TOO_MANY_REDIRECTS:
                error = BadgeError(.network, "too many redirects (more than \(request.maxRedirects))", path: where_, cause: cause)
            case CURLE_UNSUPPORTED_PROTOCOL where (300..<400).contains(responseStatus):
                error = BadgeError(.network, "refused a redirect to a URL that is not https", path: where_, cause: cause)
            case CURLE_UNSUPPORTED_PROTOCOL, CURLE_WEIRD_SERVER_REPLY:
                // curl's word for an answer whose first line is no HTTP status line (HTTP/0.9, or none at all).
                error = BadgeError(.generationFailed, "the server's answer is not HTTP: its first line is no HTTP status line",
                                   path: where_, cause: cause, hint: "check that the URL's host and port are the model's HTTP service")
            case CURLE_OUT_OF_MEMORY:
                // The body goes to badge's buffer as it arrives: what curl holds itself is the
                // headers, and it refuses them past 100 KB as a failed allocation.
                error = BadgeError(.generationFailed, "the server's answer has more header lines than curl takes (100 KB)",
                                   path: where_, cause: cause, hint: "the server is not answering as an image model does")
            case CURLE_FILESIZE_EXCEEDED:
                error = BadgeError(.network, "the response is larger than \(request.maxResponseBytes) bytes", path: where_, cause: cause)
            default:
                error = BadgeError(.network, "the request failed", path: where_, cause: cause)
            }
            return .failure(error)
        }
        var status = 0
        if let easy { _ = badge_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status) }
        let headers = headerLines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]).trimmingCharacters(in: .whitespaces),
                    String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        return .success(HTTPResponse(status: status, headers: headers, body: body))
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }
}
