import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
@testable import RemoteBackend

/// Issue #24: what a server says reaches the user scrubbed in one place (no
/// key, no control characters), and a server cannot send badge to fetch from
/// other services on the user's machine or learn which of them answer.
@Suite(.threadsOfTheirOwn)
struct HostileServerTests {
    private func withHarness(_ body: (RemoteHarness) async throws -> Void) async throws {
        let harness = try RemoteHarness()
        defer { harness.stop() }
        try await body(harness)
    }

    static func hasControls(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) }
    }

    /// A server that echoed Authorization in x-request-id got
    /// "(request id req-Bearer sk-...)" into the error and a batch manifest.
    @Test func aKeyEchoedInTheRequestIdAndEscapesInTheMessageAreScrubbed() async throws {
        try await withHarness { h in
            do {
                _ = try await h.run(mode: "echo-key-in-request-id", options: ["retries": "0"])
                Issue.record("an HTTP 400 must fail")
            } catch let error as BadgeError {
                #expect(!error.description.contains(RemoteHarness.key), "\(error)")
                #expect(error.message == "HTTP 400: ]0;pwned[2Jrefused 31mfor you (request id req-********)", "\(error)")
                #expect(!Self.hasControls(error.description), "\(error.description.unicodeScalars.map(\.value))")
            }
            #expect(h.currentBadge == h.previousBadge)
        }
    }

    /// The same escapes with no key echoed: the server's words are shown, their controls taken out.
    @Test func escapesInAServersMessageAreTakenOut() async throws {
        try await withHarness { h in
            do {
                _ = try await h.run(mode: "escapes-in-message", options: ["retries": "0"])
                Issue.record("an HTTP 400 must fail")
            } catch let error as BadgeError {
                #expect(error.message == "HTTP 400: ]0;pwned[2Jrefused 31mfor you (request id req-[31m42)", "\(error)")
                #expect(!Self.hasControls(error.description), "\(error.description.unicodeScalars.map(\.value))")
            }
        }
    }

    @Test func aRevisedPromptLosesItsControlCharacters() async throws {
        try await withHarness { h in
            let outcome = try await h.run(mode: "escapes-in-revised-prompt")
            #expect(outcome.metadata.revisedPrompt == "calm[2J]0;pwned sea")
            #expect(try h.store.current()?.metadata.revisedPrompt == "calm[2J]0;pwned sea")
        }
    }

    /// A result URL on another port of the server's own loopback host is a
    /// request to some other local service: refused before any connection.
    @Test func aResultURLOnAnotherPortIsRefusedUnfetched() async throws {
        try await withHarness { h in
            do {
                _ = try await h.run(mode: "url-other-port", options: ["retries": "0"])
                Issue.record("a result URL on another port must be refused")
            } catch let error as BadgeError {
                #expect(error.message == "the server's result URL is not on the configured url's host and port (127.0.0.1)", "\(error)")
                #expect(error.hint?.contains("resultHosts") == true)
            }
            let requests = try await h.received()
            #expect(!requests.contains { ($0["path"] as? String) == "/admin" })
        }
    }

    /// A host the config admits is fetched, but how its connection failed
    /// (here: TLS to a plain-http port) is not echoed.
    @Test func aFailedDownloadSaysNothingOfTheConnection() async throws {
        try await withHarness { h in
            do {
                _ = try await h.run(mode: "url-https-localhost", options: ["retries": "0", "resultHosts": #"["localhost"]"#])
                Issue.record("https to a plain-http port must fail")
            } catch let error as BadgeError {
                #expect(error.message == "cannot download the image from its result URL", "\(error)")
                #expect(error.cause == nil, "\(error)")
                #expect(error.path == "https://localhost:\(h.server.port)/files/badge.png")
            }
        }
    }

    /// Plain http to loopback only when the configured server is itself on
    /// loopback; other hosts only when resultHosts names them.
    @Test func resultURLsFollowTheBaseURL() throws {
        let h = try RemoteHarness()
        defer { h.stop() }
        func generator(url: String, resultHosts: String? = nil) throws -> RemoteGenerator {
            var options = ["url": "\"\(url)\""]
            if let resultHosts { options["resultHosts"] = resultHosts }
            let config = try h.config(mode: "ok", options: options)
            return try #require(try h.backend(config, environment: h.environment()).generator as? RemoteGenerator)
        }
        let cloud = try generator(url: "https://api.example.com/v1", resultHosts: #"["*.blob.example.net", "cdn.example.org"]"#)
        let refused = ["http://127.0.0.1:8080/x.png", "http://api.example.com/x.png", "https://127.0.0.1/x.png",
                       "https://api.example.com:8443/x.png", "https://blob.example.net.evil.com/x.png", "ftp://api.example.com/x"]
        for url in refused {
            let error = #expect(throws: BadgeError.self, "\(url)") { try cloud.checkResultURL(URL(string: url)!) }
            #expect(error?.code == .generationFailed && error?.message.hasPrefix("the server's result URL ") == true,
                    "\(url): \(String(describing: error))")
            // Plain http on the url's own host is another origin (its scheme and port differ).
            let reason = url.hasPrefix("ftp:") ? "uses the scheme \"ftp\"" : "is not on the configured url's host and port"
            #expect(error?.message.contains(reason) == true, "\(url): \(String(describing: error))")
        }
        for url in ["https://api.example.com/files/x.png", "https://img.blob.example.net/x.png", "https://CDN.example.org/x.png"] {
            #expect(throws: Never.self, "\(url)") { try cloud.checkResultURL(URL(string: url)!) }
        }
        let local = try generator(url: "http://127.0.0.1:7860")
        #expect(throws: Never.self) { try local.checkResultURL(URL(string: "http://127.0.0.1:7860/file=out.png")!) }
        for url in ["http://127.0.0.1:22/", "http://localhost:7860/x.png"] {
            let error = #expect(throws: BadgeError.self) { try local.checkResultURL(URL(string: url)!) }
            #expect(error?.message.hasPrefix("the server's result URL is not on the configured url's host and port") == true,
                    "\(url): \(String(describing: error))")
        }
        #expect {
            try generator(url: "https://api.example.com/v1", resultHosts: #"["exa mple.com"]"#)
        } throws: { error in
            (error as? BadgeError)?.keyPath == "backends.remote.resultHosts[0]"
        }
    }
}
