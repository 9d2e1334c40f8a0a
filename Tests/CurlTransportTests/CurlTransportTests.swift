import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import CurlTransport
import Foundation
import Testing

@Suite(.threadsOfTheirOwn, .serialized)
struct CurlTransportTests {
    let transport = CurlTransport()

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/http_fixture.py")

    private func withServer(_ body: (FixtureServer) async throws -> Void) async throws {
        let server = try FixtureServer(script: Self.script)
        defer { server.stop() }
        try await body(server)
    }

    @Test func getsABodyAndItsHeaders() async throws {
        try await withServer { server in
            let response = try await transport.send(HTTPRequest(url: server.url("/ok")))
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "hello")
            #expect(response.header("x-test") == "fixture")
        }
    }

    /// A server whose certificate a private CA signed (Tests/Data/tls): refused
    /// against the system's CAs, with the hint to set caFile; trusted when the
    /// request carries that CA's PEM bytes, as a backend's caFile gives them.
    @Test func aPrivateCAIsTrustedOnlyWhenItsCertificatesAreGiven() async throws {
        let tls = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Data/tls").standardizedFileURL
        let server = try FixtureServer(script: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/https_fixture.py"))
        defer { server.stop() }
        let url = URL(string: "https://127.0.0.1:\(server.port)/ok")!
        do {
            _ = try await transport.send(HTTPRequest(url: url))
            Issue.record("a certificate signed by a CA the system does not know must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .network && error.message == "the TLS connection could not be verified", "\(error)")
            #expect(error.hint == "if the server uses a private CA, set caFile for this backend")
        }
        let pem = try Data(contentsOf: tls.appendingPathComponent("ca.pem"))
        let response = try await transport.send(HTTPRequest(url: url, caCertificates: pem))
        #expect(response.status == 200 && response.body == Data("ok".utf8))
    }

    /// Servers see which badge asked: "badge/<version>", as a product token has no spaces.
    @Test func sendsBadgesVersionAsItsUserAgent() async throws {
        try await withServer { server in
            let response = try await transport.send(HTTPRequest(url: server.url("/ok")))
            #expect(response.header("x-user-agent-seen") == "badge/\(BadgeMetadata.version)")
        }
    }

    @Test func postsABinaryBodyIntact() async throws {
        try await withServer { server in
            let payload = Data((0..<300_000).map { UInt8($0 % 251) })
            let response = try await transport.send(HTTPRequest(
                method: "POST", url: server.url("/echo"), headers: [("Content-Type", "application/octet-stream")], body: payload))
            #expect(response.status == 200)
            #expect(response.body == payload)
        }
    }

    @Test func reportsServerErrorsAsResponses() async throws {
        try await withServer { server in
            let response = try await transport.send(HTTPRequest(url: server.url("/status/503")))
            #expect(response.status == 503)
            #expect(response.header("Retry-After") == "7")
        }
    }

    @Test func refusesPlainHTTPBeyondLoopbackAndOtherSchemes() async throws {
        // Refused by policy, before any connection: not a failed connection's error.
        let refusals = [
            ("http://example.com/x", "refusing plain http to example.com: only loopback may use http"),
            ("http://10.0.0.1/x", "refusing plain http to 10.0.0.1: only loopback may use http"),
            ("file:///etc/passwd", "refusing the URL scheme \"file\""),
            ("ftp://127.0.0.1/x", "refusing the URL scheme \"ftp\""),
        ]
        for (url, message) in refusals {
            let error = await #expect(throws: BadgeError.self) {
                _ = try await transport.send(HTTPRequest(url: URL(string: url)!))
            }
            #expect(error?.code == .network && error?.message == message && error?.path == url, "\(url): \(String(describing: error))")
        }
        // The refusal of plain http says how to allow it.
        let insecure = await #expect(throws: BadgeError.self) {
            _ = try await transport.send(HTTPRequest(url: URL(string: "http://example.com/x")!))
        }
        #expect(insecure?.hint?.contains(#"set "allowInsecureHTTP": true"#) == true, "\(String(describing: insecure))")
    }

    @Test func theIdleTimerStartsOnlyWithTheFirstByte() async throws {
        try await withServer { server in
            // 1.5 s of "thinking" before the first byte is fine with a 1 s idle limit...
            let slow = try await transport.send(HTTPRequest(
                url: server.url("/slow-first-byte?delay=1.5"), timeout: .seconds(10), idleTimeout: .seconds(1)))
            #expect(String(decoding: slow.body, as: UTF8.self) == "late but whole")
            // ...but a stream that stalls after it started is cut off (by the idle timer, as its message says).
            do {
                _ = try await transport.send(HTTPRequest(url: server.url("/stall"), timeout: .seconds(20), idleTimeout: .seconds(1)))
                Issue.record("a stalled stream must fail")
            } catch let error as BadgeError {
                #expect(error.code == .timeout)
                #expect(error.message.contains("stalled"), "\(error)")
            }
        }
    }

    @Test func theTotalTimeoutHolds() async throws {
        try await withServer { server in
            do {
                _ = try await transport.send(HTTPRequest(url: server.url("/slow-first-byte?delay=5"), timeout: .milliseconds(700)))
                Issue.record("must time out")
            } catch let error as BadgeError {
                #expect(error.code == .timeout)
                // The server sends nothing for 5 s: no byte of an answer came within the 0.7 s.
                #expect(error.message == "no answer within the time limit", "\(error)")
                #expect(error.path == server.url("/slow-first-byte?delay=5").absoluteString, "\(error)")
                #expect(error.hint == "raise timeoutSeconds for this backend, or try again later", "\(error)")
            }
        }
    }

    @Test func aChunkedBodyOverTheCapIsStoppedAsItArrives() async throws {
        try await withServer { server in
            do {
                _ = try await transport.send(HTTPRequest(url: server.url("/big-chunked?chunks=128"), maxResponseBytes: 1 << 20))
                Issue.record("an 8 MiB chunked body must not pass a 1 MiB cap")
            } catch let error as BadgeError {
                #expect(error.code == .network)
                #expect(error.message.contains("larger than 1048576 bytes"))
            }
            let small = try await transport.send(HTTPRequest(url: server.url("/big-chunked?chunks=4"), maxResponseBytes: 1 << 20))
            #expect(small.body.count == 4 * 65536)
        }
    }

    @Test func redirectsAreNotFollowedUnlessAskedAndNeverToHTTP() async throws {
        try await withServer { server in
            let unfollowed = try await transport.send(HTTPRequest(url: server.url("/redirect-http")))
            #expect(unfollowed.status == 302)
            do {
                _ = try await transport.send(HTTPRequest(url: server.url("/redirect-http"), maxRedirects: 3))
                Issue.record("a redirect to plain http must be refused")
            } catch let error as BadgeError {
                #expect(error.code == .network)
                #expect(error.message == "refused a redirect to a URL that is not https")
            }
        }
    }

    /// An answer that is not HTTP, or whose headers run past what curl
    /// takes, is named for what it is (not a redirect, not memory), and is
    /// not a network error a retry would mend.
    /// A connection closed after the request and before any answer is a
    /// network error, the kind a backend's retries are for, and it comes from
    /// one request: libcurl does not send it again on its own, so a backend's
    /// `retries` counts every request the server sees.
    @Test func aConnectionClosedBeforeAnyAnswerIsANetworkErrorFromOneRequest() async throws {
        try await withServer { server in
            do {
                let response = try await transport.send(HTTPRequest(url: server.url("/drop")))
                Issue.record("answered \(response.status)")
            } catch let error as BadgeError {
                #expect(error.code == .network && error.message == "the request failed", "\(error)")
                #expect(error.cause == "Server returned nothing (no headers, no data)", "\(error)")
            }
            #expect(try server.get("/dropped") == Data("1".utf8))
            // The next request, on a new connection, is answered.
            #expect(try await transport.send(HTTPRequest(url: server.url("/ok"))).status == 200)
        }
    }

    /// A POST goes out once even when the answer to it would be lost on a
    /// kept-alive connection: libcurl sends a request again by itself when a
    /// reused connection dies before any answer, and a POST that queued a run
    /// would then run twice. A POST gets a connection of its own; GETs, which
    /// may be sent again, keep reusing theirs.
    @Test func aPostIsNeverSentTwiceBehindTheCallersBack() async throws {
        try await withServer { server in
            #expect(try await transport.send(HTTPRequest(url: server.url("/connection"))).body == Data("1".utf8))
            #expect(try await transport.send(HTTPRequest(url: server.url("/connection"))).body == Data("2".utf8),
                    "a GET reuses the kept-alive connection")
            let response = try await transport.send(HTTPRequest(method: "POST", url: server.url("/drop-if-reused"), body: Data("run".utf8)))
            #expect(response.status == 200 && response.body == Data("run".utf8))
            // "2,1" would be the POST on the reused connection, dropped, and sent again unasked.
            let seen = String(decoding: try server.get("/reused-posts"), as: UTF8.self)
            #expect(seen == "1", "the server saw the POST as request(s) \(seen) of their connections")
            #expect(try await transport.send(HTTPRequest(url: server.url("/connection"))).status == 200)
        }
    }

    @Test func anAnswerThatIsNotHTTPOrHasGiantHeadersIsNamed() async throws {
        try await withServer { server in
            for (path, message) in [("/not-http", "the server's answer is not HTTP: its first line is no HTTP status line"),
                                    ("/giant-header", "the server's answer has more header lines than curl takes (100 KB)")] {
                do {
                    let response = try await transport.send(HTTPRequest(url: server.url(path)))
                    Issue.record("\(path): answered \(response.status)")
                } catch let error as BadgeError {
                    #expect(error.code == .generationFailed, "\(path): \(error)")
                    #expect(error.message == message, "\(path): \(error)")
                }
            }
        }
    }

    @Test func manyTransfersOverlapTheirWaits() async throws {
        try await withServer { server in
            // The server answers only when all 16 are in flight at once: transfers run one
            // after another would each wait out the barrier's 30 s and hear 504.
            try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        try await transport.send(HTTPRequest(url: server.url("/barrier?n=16"), timeout: .seconds(90), idleTimeout: .seconds(90)))
                    }
                }
                for try await response in group {
                    #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
                }
            }
        }
    }

    @Test func cancellationStopsATransferPromptly() async throws {
        try await withServer { server in
            // The server stalls for 300 s and the limits are longer still: only the cancellation ends it.
            let task = Task {
                try await transport.send(HTTPRequest(url: server.url("/stall?seconds=300"), timeout: .seconds(600), idleTimeout: .seconds(600)))
            }
            // Cancelled once the transfer is under way: the server has sent its first bytes.
            try await waitUntil("the stalled transfer to begin", timeout: .seconds(120)) {
                (try? server.get("/stalled")).map { String(decoding: $0, as: UTF8.self) } == "1"
            }
            let clock = ContinuousClock()
            let started = clock.now
            task.cancel()
            await #expect(throws: CancellationError.self) { _ = try await task.value }
            // A bound on a hang (a transfer that ignored the cancellation runs 300 s), not a speed check.
            #expect(clock.now - started < .seconds(60))
            // The transport still works afterwards.
            let ok = try await transport.send(HTTPRequest(url: server.url("/ok")))
            #expect(ok.status == 200)
        }
    }

    @Test func aRefusedConnectionSaysSo() async throws {
        // A port nobody listens on: bind one, learn it, close it.
        let server = try FixtureServer(script: Self.script)
        let port = server.port
        server.stop()
        do {
            _ = try await transport.send(HTTPRequest(url: URL(string: "http://127.0.0.1:\(port)/ok")!, connectTimeout: .seconds(2)))
            Issue.record("must fail")
        } catch let error as BadgeError {
            #expect(error.code == .network)
            #expect(error.message == "cannot connect")
            #expect(error.path?.contains("127.0.0.1:\(port)") == true)
        }
    }
}
