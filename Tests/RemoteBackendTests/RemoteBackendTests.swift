import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
@testable import RemoteBackend

@Suite(.threadsOfTheirOwn, .serialized)
struct RemoteBackendTests {
    private func withHarness(_ body: (RemoteHarness) async throws -> Void) async throws {
        let harness = try RemoteHarness()
        defer { harness.stop() }
        try await body(harness)
    }

    @Test func openAIAnswerBecomesTheBadge() async throws {
        try await withHarness { h in
            let outcome = try await h.run(mode: "ok")
            #expect(outcome.metadata.backend == "remote")
            #expect(outcome.metadata.backendType == "http")
            #expect(outcome.metadata.model == "test-model")
            #expect(outcome.metadata.revisedPrompt == "a revised prompt")
            #expect(try BadgeMetadata.read(from: h.store.badgeURL)?.revisedPrompt == "a revised prompt")
            let requests = try await h.received()
            let request = try #require(requests.first { ($0["mode"] as? String) == "ok" })
            let body = try #require(request["body"] as? [String: Any])
            #expect(body["prompt"] as? String == "A pair of dumbbells")
            #expect(body["model"] as? String == "test-model")
            #expect(body["n"] as? Int == 1)
            // Unset fields are left out, never sent as null.
            #expect(body["quality"] == nil && body["background"] == nil && body["output_format"] == nil)
            #expect(request["authorization"] as? String == "Bearer \(RemoteHarness.key)")
            #expect((request["violations"] as? [String])?.isEmpty == true, "schema violations: \(request["violations"] ?? "")")
        }
    }

    @Test func optionalFieldsAreSentWhenSetAndMatchTheSchema() async throws {
        try await withHarness { h in
            _ = try await h.run(mode: "ok", options: [
                "quality": #""high""#, "background": #""opaque""#, "outputFormat": #""png""#, "imageSize": #""1024x1024""#,
            ])
            let request = try #require(try await h.received().last)
            let body = try #require(request["body"] as? [String: Any])
            #expect(body["quality"] as? String == "high")
            #expect(body["background"] as? String == "opaque")
            #expect(body["output_format"] as? String == "png")
            #expect((request["violations"] as? [String])?.isEmpty == true, "schema violations: \(request["violations"] ?? "")")
        }
    }

    /// The fake checks OpenAI bodies against the published schema closed to the
    /// properties it defines, and refuses any other as the API does; a raw body
    /// posted to the same path shows the check is not a formality.
    @Test func theFakeRefusesAPropertyOpenAIDoesNotKnow() async throws {
        try await withHarness { h in
            let url = "\"http://127.0.0.1:\(h.server.port)/ok/v1/images/generations\""
            do {
                _ = try await h.run(mode: "ok", api: "raw", options: [
                    "url": url, "retries": "0", "bodyTemplate": #"{"prompt": "{prompt}", "model": "gpt-image-1", "colour": "red"}"#,
                ])
                Issue.record("a body with a property the API does not know was accepted")
            } catch let error as BadgeError {
                #expect(error.description.contains("HTTP 400: Unrecognized request argument supplied: colour"), "\(error)")
            }
            let request = try #require(try await h.received().last)
            let violations = try #require(request["violations"] as? [String])
            #expect(violations == ["Additional properties are not allowed ('colour' was unexpected)"], "\(violations)")
        }
    }

    @Test func aResultURLIsDownloadedWithoutCredentials() async throws {
        try await withHarness { h in
            let outcome = try await h.run(mode: "url")
            #expect(outcome.byteCount > 0)
            #expect(h.currentBadge != h.previousBadge)
            // The redirect path: the first hop is fetched (the redirect itself is refused).
            do {
                _ = try await h.run(mode: "url-redirect-other-host", options: ["retries": "0"])
                Issue.record("a redirect to another host must be refused")
            } catch let error as BadgeError {
                #expect(error.description.contains("redirects to a URL that is not on the configured url's host and port (localhost)"), "\(error)")
            }
            let requests = try await h.received()
            // The generation request carried the key, so its absence below is the download's doing.
            #expect(requests.contains { ($0["mode"] as? String) == "url" && ($0["authorization"] as? String) == "Bearer \(RemoteHarness.key)" })
            let downloads = requests.filter { ($0["mode"] as? String) == "download" }
            #expect(downloads.contains { ($0["path"] as? String) == "/files/badge-0.png" }, "the direct download: \(downloads)")
            #expect(downloads.contains { ($0["path"] as? String) == "/bounce" }, "the redirected download: \(downloads)")
            for download in downloads {
                #expect(download["authorization"] == nil || download["authorization"] is NSNull,
                        "\(download["path"] ?? "") was fetched with credentials")
            }
        }
    }

    @Test func automatic1111AnswerBecomesTheBadge() async throws {
        try await withHarness { h in
            let outcome = try await h.run(mode: "ok", api: "automatic1111", options: ["steps": "20", "negativePrompt": #""blurry""#])
            #expect(outcome.metadata.seed == 42)
            let request = try #require(try await h.received().last)
            let body = try #require(request["body"] as? [String: Any])
            #expect((request["path"] as? String)?.hasSuffix("/sdapi/v1/txt2img") == true)
            #expect(body["width"] as? Int == 512 && body["steps"] as? Int == 20 && body["negative_prompt"] as? String == "blurry")
            // The fake server checks the body against A1111's txt2img fields and types.
            let violations = try #require(request["violations"] as? [String], "the server did not check the body")
            #expect(violations.isEmpty, "the txt2img body breaks A1111's schema: \(violations)")
        }
    }

    @Test func rawDialectFillsItsTemplateAndTakesImageBytes() async throws {
        try await withHarness { h in
            _ = try await h.run(mode: "ok", api: "raw", options: [
                "bodyTemplate": #"{"inputs": "badge: {prompt}", "parameters": {"width": "{size}", "seed": "{seed}", "steps": 4}}"#,
            ])
            let request = try #require(try await h.received().last)
            let body = try #require(request["body"] as? [String: Any])
            #expect(body["inputs"] as? String == "badge: A pair of dumbbells")
            let parameters = try #require(body["parameters"] as? [String: Any])
            #expect(parameters["width"] as? Int == 512 && parameters["seed"] as? Int == 42 && parameters["steps"] as? Int == 4)
            do {
                _ = try await h.run(mode: "raw-json", api: "raw")
                Issue.record("a JSON answer is not an image")
            } catch let error as BadgeError {
                #expect(error.description.contains("Model is currently loading"))
            }
            #expect(h.store.temporaryFiles().isEmpty)
        }
    }

    @Test(arguments: ["flaky503", "retry-after-seconds", "retry-after-ms", "retry-after-date"])
    func retryableAnswersAreRetried(mode: String) async throws {
        try await withHarness { h in
            _ = try await h.run(mode: mode)
            let attempts = try await h.received().filter { ($0["mode"] as? String) == mode }.count
            #expect(attempts == (mode == "flaky503" ? 3 : 2))
        }
    }

    /// A connection lost after the request went out and before any answer is a
    /// network error, which is retried: the second request is answered, and its
    /// image becomes the badge.
    @Test func aDroppedConnectionIsRetriedAndTheNextAnswerBecomesTheBadge() async throws {
        try await withHarness { h in
            let outcome = try await h.run(mode: "drop-once")
            #expect(outcome.metadata.backend == "remote")
            let attempts = try await h.received().filter { ($0["mode"] as? String) == "drop-once" }.count
            #expect(attempts == 2, "asked \(attempts) times")
            #expect(h.currentBadge != h.previousBadge, "the answer after the retry did not become the badge")
            #expect(try BadgeMetadata.read(from: h.store.badgeURL)?.revisedPrompt == "a revised prompt")
        }
    }

    /// A connection lost every time is tried once and then `retries` times more,
    /// and the run fails with the network error, the old badge kept.
    @Test func aConnectionLostEveryTimeIsTriedRetriesPlusOneTimesThenFails() async throws {
        try await withHarness { h in
            do {
                _ = try await h.run(mode: "drop-always", options: ["retries": "1"])
                Issue.record("a server that never answers must fail the run")
            } catch let error as BadgeError {
                #expect(error.code == .network && error.message == "the request failed", "\(error)")
                #expect(error.cause == "Server returned nothing (no headers, no data)", "\(error)")
                #expect(error.backend == "remote", "\(error)")
            }
            let attempts = try await h.received().filter { ($0["mode"] as? String) == "drop-always" }.count
            #expect(attempts == 2, "asked \(attempts) times")
            #expect(h.currentBadge == h.previousBadge)
        }
    }

    /// What a retry cannot mend is asked once, though retries are allowed: a
    /// 400 (the request itself is refused) and an answer that is not HTTP (the
    /// URL names another service).
    @Test(arguments: [
        ("error-string", BadgeError.Code.generationFailed, "HTTP 400: the prompt is not allowed"),
        ("not-http", BadgeError.Code.generationFailed, "the server's answer is not HTTP: its first line is no HTTP status line"),
    ])
    func whatARetryCannotMendIsAskedOnce(mode: String, code: BadgeError.Code, message: String) async throws {
        try await withHarness { h in
            do {
                _ = try await h.run(mode: mode, options: ["retries": "2"])
                Issue.record("mode \(mode) must fail")
            } catch let error as BadgeError {
                #expect(error.code == code && error.message == message, "\(mode): \(error)")
                #expect(error.backend == "remote", "\(mode): \(error)")
            }
            let attempts = try await h.received().filter { ($0["mode"] as? String) == mode }.count
            #expect(attempts == 1, "\(mode): asked \(attempts) times")
            #expect(h.currentBadge == h.previousBadge)
        }
    }

    /// Decoding an answer gets the time limit afresh, as each attempt does:
    /// after a retry that waited a second, the image still has all five
    /// seconds (measured from the call, the old deadline left it four).
    @Test func anAnswerAfterARetryIsGivenTheWholeTimeLimitToDecode() async throws {
        try await withHarness { h in
            let environment = h.environment()
            let instance = try h.backend(try h.config(mode: "retry-after-seconds", options: ["timeoutSeconds": "5"]), environment: environment)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-remote-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let called = ContinuousClock.now
            let image = try await instance.generator.generate(BadgeRequest(prompt: "A pair of dumbbells", size: 512, seed: 42),
                                                              in: Workspace(directory: directory))
            let attempts = try await h.received().filter { ($0["mode"] as? String) == "retry-after-seconds" }.count
            #expect(attempts == 2)
            let deadline = try #require(image.deadline)
            #expect(deadline >= called.advanced(by: .seconds(6)), "the decode's time limit began before the retry's wait")
        }
    }

    /// Each fault: the run fails with a message a user can act on, and the old badge is intact.
    @Test(arguments: [
        ("retry-after-huge", "HTTP 429: quota exhausted"),
        ("500", "HTML page"),
        ("502", "HTML page"),
        ("503", "HTML page"),
        ("truncated", "request failed"),
        ("garbage", "the server's answer is not JSON (application/json, 17 bytes): "),
        ("deep", "the server's answer is not JSON (application/json, 4010 bytes): nesting deeper than 128 levels at 1:"),
        ("bad-base64", "not valid base64"),
        ("not-an-image", "is not an image"),
        ("empty-data", "returned no image"),
        ("error-string", "HTTP 400: the prompt is not allowed"),
        ("error-object", "rejected by the safety system (request id req_abc123)"),
        ("huge", "larger than"),
        ("drip", "time limit"),
        ("hang", "time limit"),
        ("url-file", "scheme \"file\""),
        ("url-redirect-other-host", "the server's result URL redirects to a URL that is not on the configured url's host and port (localhost)"),
        ("url-redirect-other-port", "the server's result URL redirects to a URL that is not on the configured url's host and port (127.0.0.1)"),
        ("url-redirect-loop", "the server's result URL redirects in a loop"),
        ("url-redirect-file", "the server's result URL redirects to a URL that uses the scheme \"file\"; badge fetches only https"),
        ("html-200", "the server's answer is a web page (text/html"),
        ("sustained-429-61", "more than maxRetryAfterSeconds (60 s)"),
        ("moved", "  hint: the server sends the request on to https://api.example.org/v2/images?…; badge does not follow a redirect with the key: set url to where it points"),
    ])
    func faultsFailClearlyAndKeepTheOldBadge(mode: String, expected: String) async throws {
        try await withHarness { h in
            do {
                _ = try await h.run(mode: mode, options: ["maxResponseBytes": "4194304", "timeoutSeconds": "2", "retries": "0"])
                Issue.record("mode \(mode) must fail")
            } catch let error as BadgeError {
                #expect(error.description.contains(expected), "\(mode): \(error.description)")
                #expect(error.backend == "remote", "\(mode): the error names the backend")
                #expect(!error.description.contains(RemoteHarness.key))
            }
            #expect(h.currentBadge == h.previousBadge, "\(mode) changed the badge")
            #expect(h.store.temporaryFiles().isEmpty)
        }
    }

    /// Gives up at once: one request, no wait, though retries are allowed. (Were the cap ignored,
    /// the run would wait a day; a deadline of two minutes, counted from the run's start, ends such a hang.)
    @Test func aHugeRetryAfterGivesUpAtOnceAndSaysWhen() async throws {
        try await withHarness { h in
            do {
                _ = try await withDeadline("the run to give up", limit: .seconds(120)) { try await h.run(mode: "retry-after-huge") }
                Issue.record("must fail")
            } catch let error as BadgeError {
                #expect(error.hint?.contains("asks to wait 86400 s") == true, "\(error)")
            }
            let attempts = try await h.received().filter { ($0["mode"] as? String) == "retry-after-huge" }.count
            #expect(attempts == 1, "asked \(attempts) times")
        }
    }

    /// A server that keeps answering 429 and asks for a wait just above the cap: one request, and the error says why.
    @Test func aSustained429AboveTheCapIsNotWaitedFor() async throws {
        try await withHarness { h in
            do {
                _ = try await h.run(mode: "sustained-429-3", options: ["maxRetryAfterSeconds": "2", "retries": "2"])
                Issue.record("must fail")
            } catch let error as BadgeError {
                #expect(error.description.contains("HTTP 429: rate limited"), "\(error)")
                #expect(error.hint?.contains("asks to wait 3 s") == true, "\(error)")
                #expect(error.hint?.contains("more than maxRetryAfterSeconds (2 s)") == true, "\(error)")
            }
            let attempts = try await h.received().filter { ($0["mode"] as? String) == "sustained-429-3" }.count
            #expect(attempts == 1, "asked \(attempts) times")
        }
    }

    @Test func theKeyNeverAppearsEvenWhenTheServerEchoesIt() async throws {
        try await withHarness { h in
            do {
                _ = try await h.run(mode: "echo-key")
                Issue.record("must fail")
            } catch let error as BadgeError {
                // Echoed whole, it is masked; the server's other words stay.
                #expect(error.message.hasPrefix("HTTP 401: ") && error.description.contains("********"), "\(error)")
                #expect(!error.description.contains(RemoteHarness.key))
            }
        }
    }

    /// Issue #58: echoed in pieces shorter than any mask, reversed or in base64,
    /// the key is still the key: the server's words are left out whole.
    @Test(arguments: ["spaced", "dashed", "reversed", "base64"])
    func theKeyEchoedInPiecesOrEncodedIsLeftOutWhole(form: String) async throws {
        try await withHarness { h in
            do {
                _ = try await h.run(mode: "echo-key-pieces-" + form, options: ["retries": "0"])
                Issue.record("must fail")
            } catch let error as BadgeError {
                #expect(error.message == "HTTP 401: (the server's words are left out: they repeat the key, in part or encoded)", "\(error)")
                #expect(error.hint?.hasPrefix("check the key in ") == true, "\(error)")
            }
            #expect(h.currentBadge == h.previousBadge)
        }
    }

    @Test func aMissingKeyMakesTheBackendUnavailableWithoutTouchingTheNetwork() async throws {
        try await withHarness { h in
            let environment = h.environment(variables: [:])
            let instance = try h.backend(try h.config(mode: "ok"), environment: environment)
            let availability = await instance.generator.availability()
            #expect(availability == .unavailable(reason: "the environment variable BADGE_TEST_KEY is not set",
                                                 hint: "export BADGE_TEST_KEY=... (the key never goes in the config file)"))
            #expect(try await h.received().isEmpty)
        }
    }

    @Test func configErrorsNameTheKey() throws {
        let cases: [(String, String)] = [
            (#"{"backends": {"r": {"type": "http", "url": "https://x/v1"}}}"#, "backends.r: the required key \"api\" is missing"),
            (#"{"backends": {"r": {"type": "http", "api": "dalle", "url": "https://x/v1"}}}"#, "backends.r.api"),
            (#"{"backends": {"r": {"type": "http", "api": "openai", "url": "ftp://x"}}}"#, "backends.r.url"),
            (#"{"backends": {"r": {"type": "http", "api": "openai", "url": "https://u:p@x/v1"}}}"#, "contains credentials"),
            (#"{"backends": {"r": {"type": "http", "api": "openai", "url": "https://x/v1", "apiKey": "sk-1"}}}"#, "unknown key \"apiKey\""),
            (#"{"backends": {"r": {"type": "http", "api": "openai", "url": "https://x/v1", "retries": 99}}}"#, "backends.r.retries"),
        ]
        var registry = BackendRegistry()
        RemoteGenerator.register(in: &registry)
        for (text, expected) in cases {
            let config = try BadgeConfig.parse(Data(text.utf8), file: "c.json")
            do {
                _ = try registry.makeBackend(named: "r", in: config, environment: BadgeEnvironment())
                Issue.record("\(text) must be refused")
            } catch let error as BadgeError {
                #expect(error.description.contains(expected), "\(error.description)")
                #expect(error.description.hasPrefix("c.json:1:"), "\(error.description)")
            }
        }
    }

    /// `caFile` is read once, when the configuration is, from a checked
    /// descriptor, and starts at the configuration file's directory: a FIFO
    /// or a device is refused by what it is, never waited on, and a file
    /// with no PEM certificate is refused by what it holds.
    @Test func aCAFileIsReadOnceFromTheConfigsDirectory() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("badge-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("certs"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let pem = try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Data/tls/ca.pem"))
        try pem.write(to: dir.appendingPathComponent("certs/ca.pem"))
        try Data("not a certificate".utf8).write(to: dir.appendingPathComponent("certs/notes.txt"))
        #expect(mkfifo(dir.appendingPathComponent("certs/fifo.pem").path, 0o600) == 0)
        func options(_ caFile: String) throws -> RemoteOptions {
            let text = #"{"backends": {"r": {"type": "http", "api": "openai", "url": "https://x/v1", "caFile": "\#(caFile)"}}}"#
            let config = try BadgeConfig.parse(Data(text.utf8), file: dir.appendingPathComponent("config.json").path)
            // The working directory is elsewhere: a relative caFile must not start there.
            return try RemoteOptions(try #require(config.backend(named: "r")).options, base: URL(fileURLWithPath: "/"))
        }
        #expect(try options("certs/ca.pem").caCertificates == pem)
        for (path, problem) in [("certs/fifo.pem", "it is a FIFO (named pipe), not a regular file"),
                                ("/dev/zero", "it is a character device, not a regular file"),
                                ("certs/missing.pem", "open: No such file or directory")] {
            let expected = path.hasPrefix("/") ? path : dir.appendingPathComponent(path).path
            let error = #expect(throws: BadgeError.self) { try options(path) }
            #expect(error?.code == .config, "\(String(describing: error))")
            #expect(error?.message == "cannot read the CA file \(expected): \(problem)", "\(String(describing: error))")
            #expect(error?.description.contains("backends.r.caFile") == true, "\(String(describing: error))")
            #expect(error?.hint?.hasPrefix("give the path of a PEM bundle") == true, "\(String(describing: error))")
        }
        do {
            _ = try options("certs/notes.txt")
            Issue.record("a file with no certificate must be refused")
        } catch let error as BadgeError {
            #expect(error.message.hasSuffix("holds no PEM certificate (no -----BEGIN CERTIFICATE----- line)"), "\(error)")
        }
    }

    @Test func backoffFollowsTheSDKsAndServerDelaysAreRead() {
        let policy = RetryPolicy(retries: 2, maxRetryAfter: .seconds(60))
        #expect(policy.backoff(attempt: 0, jitter: 0) == .milliseconds(500))
        #expect(policy.backoff(attempt: 3, jitter: 0) == .seconds(4))
        #expect(policy.backoff(attempt: 10, jitter: 0) == .seconds(8))
        #expect(policy.backoff(attempt: 1, jitter: 0.25) == .milliseconds(750))
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryPolicy.serverDelay(HTTPResponse(status: 429, headers: [("Retry-After", "3")], body: Data()), now: now) == .seconds(3))
        #expect(RetryPolicy.serverDelay(HTTPResponse(status: 429, headers: [("retry-after-ms", "250")], body: Data()), now: now) == .milliseconds(250))
        #expect(RetryPolicy.serverDelay(HTTPResponse(status: 429, headers: [("Retry-After", "Tue, 14 Nov 2023 22:13:30 GMT")], body: Data()), now: now) == .seconds(10))
        #expect(RetryPolicy.serverDelay(HTTPResponse(status: 429, headers: [("Retry-After", "soon")], body: Data()), now: now) == nil)
        // Waits no Int holds are the longest wait, not a crash; a NaN is no wait asked for.
        for (name, value) in [("Retry-After", "1e300"), ("Retry-After", "inf"), ("Retry-After", "10000000000000000"),
                              ("retry-after-ms", "infinity"), ("retry-after-ms", "1e30")] {
            #expect(RetryPolicy.serverDelay(HTTPResponse(status: 429, headers: [(name, value)], body: Data()), now: now)
                        == RetryPolicy.longestServerDelay, "\(name): \(value)")
        }
        #expect(RetryPolicy.serverDelay(HTTPResponse(status: 429, headers: [("Retry-After", "nan")], body: Data()), now: now) == nil)
        #expect(RetryPolicy.isRetryable(status: 429) && RetryPolicy.isRetryable(status: 502) && !RetryPolicy.isRetryable(status: 400))
    }

    @Test func strictBase64RefusesWhatFoundationMightTake() {
        #expect(StrictBase64.decode("aGVsbG8=") == Data("hello".utf8))
        #expect(StrictBase64.decode("aGVsbG8") == nil)
        #expect(StrictBase64.decode("aGV sbG8=") == nil)
        #expect(StrictBase64.decode("aG=sbG8=") == nil)
        #expect(StrictBase64.decode("") == nil)
    }
}

@Suite(.threadsOfTheirOwn, .serialized)
struct ProbeTests {
    @Test func probeReportsAnAnsweringServerAndARefusedKey() async throws {
        let h = try RemoteHarness()
        defer { h.stop() }
        let environment = h.environment()
        // The fixture lists its models at GET /ok/v1/models: available.
        let reachable = try h.backend(try h.config(mode: "ok"), environment: environment).generator as! RemoteGenerator
        #expect(await reachable.probe() == .available)
        // A server without the list is not the API the url should name.
        let elsewhere = try h.backend(try h.config(mode: "no-models"), environment: environment).generator as! RemoteGenerator
        guard case let .unavailable(missing, hint) = await elsewhere.probe() else {
            Issue.record("a url without the API's model list must be unavailable")
            return
        }
        #expect(missing == "the server has no http://127.0.0.1:\(h.server.port)/no-models/v1/models (HTTP 404)", "\(missing)")
        #expect(hint == "check url: the API's base, e.g. https://api.openai.com/v1")
        // Nothing listens on this port.
        let port = closedLoopbackPort()
        #expect(port > 0)
        let text = #"{"backends": {"remote": {"type": "http", "api": "openai", "url": "http://127.0.0.1:\#(port)/v1"}}}"#
        let dead = try h.backend(try BadgeConfig.parse(Data(text.utf8), file: "p.json"), environment: environment).generator as! RemoteGenerator
        guard case let .unavailable(reason, _) = await dead.probe() else {
            Issue.record("a dead endpoint must be unavailable")
            return
        }
        #expect(reason.contains("cannot connect"))
    }
}
