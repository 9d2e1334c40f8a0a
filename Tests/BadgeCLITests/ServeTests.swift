import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `badge serve` through the built binary: badges by URL, the studio's API,
/// its guards, its bounds, and how it stops.
@Suite(.threadsOfTheirOwn) struct ServeTests {
    // MARK: - Badges by URL

    @Test func theSameQueryGivesTheSameBytesInEveryProcessAndTheETagIsA304() async throws {
        let s = try Sandbox()
        let query = "/v1/badge.png?promise=Run+a+marathon&style=medal&seed=7&size=128"
        var bodies: [Data] = []
        for _ in 0..<2 {
            let served = try await Served.start(s)
            let first = try await served.request("GET", query)
            #expect(first.status == 200, "\(first.text)")
            #expect(first.header("content-type") == "image/png")
            #expect(first.header("cache-control") == "public, max-age=31536000, immutable")
            let etag = try #require(first.header("etag"))
            let again = try await served.request("GET", query)
            #expect(again.body == first.body)
            let revalidated = try await served.request("GET", query, headers: ["If-None-Match": etag])
            #expect(revalidated.status == 304 && revalidated.body.isEmpty && revalidated.header("etag") == etag)
            let head = try await served.request("HEAD", query)
            #expect(head.status == 200 && head.body.isEmpty && head.header("content-length") == String(first.body.count))
            #expect(head.header("etag") == etag)
            // The ETag is the badge's own content id, the id it carries.
            let metadata = try #require(BadgeMetadata(entries: try PNG.chunks(in: first.body, verifyCRC: true, stopAtIDAT: true).compactMap(PNG.textEntry)))
            #expect(etag == "\"\(metadata.id)\"")
            #expect(metadata.size == 128 && metadata.seed == 7 && metadata.style == "medal" && metadata.prompt == "Run a marathon")
            try PNGDataCheck.verify(first.body)
            bodies.append(first.body)
            #expect(try await served.stop() == 0)
        }
        #expect(bodies[0] == bodies[1], "two servers drew different bytes for one query")
        #expect(!FileManager.default.fileExists(atPath: s.store.path), "the render API touched the store")
    }

    @Test func withoutASeedTheBadgeIsStillTheSameButNotImmutable() async throws {
        let s = try Sandbox()
        let served = try await Served.start(s)
        defer { served.end() }
        let a = try await served.request("GET", "/v1/badge.png?promise=Drink%20more%20water&size=64")
        let b = try await served.request("GET", "/v1/badge.png?size=64&promise=Drink+more+water")
        #expect(a.status == 200 && a.body == b.body)
        #expect(a.header("cache-control") == "public, max-age=86400")
    }

    @Test func theJSONIsTheMetadataThePNGCarries() async throws {
        let s = try Sandbox()
        let served = try await Served.start(s)
        defer { served.end() }
        let query = "promise=Learn+Spanish&style=tile&seed=3&size=96&date=2027-01-01"
        let png = try await served.request("GET", "/v1/badge.png?" + query)
        let json = try await served.request("GET", "/v1/badge.json?" + query)
        #expect(json.status == 200 && json.header("etag") == png.header("etag"))
        let metadata = try #require(json.json?["metadata"] as? [String: String])
        let chunks = try PNG.chunks(in: png.body, verifyCRC: true, stopAtIDAT: true).compactMap(PNG.textEntry)
        #expect(metadata == Dictionary(chunks.filter { $0.keyword.hasPrefix("badge:") }.map { ($0.keyword, $0.text) }, uniquingKeysWith: { a, _ in a }))
        #expect(metadata["badge:commitment-date"] == "2027-01-01T00:00:00Z")
        #expect(json.header("access-control-allow-origin") == "*")
    }

    @Test(arguments: [
        ("promise=x&size=5000", "size", "size must be from 64 to 1024 pixels, not \"5000\""),
        ("promise=x&style=glitter", "style", "the procedural backend has no style \"glitter\""),
        ("promise=x&seed=abc", "seed", "seed must be a whole number, not \"abc\""),
        ("size=100", "promise", "the promise is missing"),
    ])
    func eachBadParameterIsA400ThatNamesIt(query: String, parameter: String, message: String) async throws {
        let s = try Sandbox()
        let served = try await Served.start(s)
        defer { served.end() }
        for path in ["/v1/badge.png?", "/v1/badge.json?"] {
            let answer = try await served.request("GET", path + query)
            #expect(answer.status == 400)
            #expect(answer.header("content-type")?.hasPrefix("application/json") == true)
            let error = try #require(answer.error)
            #expect(error["parameter"] as? String == parameter)
            #expect((error["message"] as? String)?.hasPrefix(message) == true, "\(error)")
            #expect((error["allowed"] as? String)?.isEmpty == false)
        }
    }

    @Test func aPromiseOverItsLimitIsA400() async throws {
        let s = try Sandbox()
        let served = try await Served.start(s)
        defer { served.end() }
        let answer = try await served.request("GET", "/v1/badge.png?promise=" + String(repeating: "a", count: 4001))
        #expect(answer.status == 400)
        #expect(answer.error?["message"] as? String == "the promise is 4001 bytes long")
        #expect(answer.error?["allowed"] as? String == "1 to 4000 bytes of text")
    }

    @Test func healthzAnswersAndRenderOnlyHasNoStudio() async throws {
        let s = try Sandbox()
        let served = try await Served.start(s, ["--render-only"])
        defer { served.end() }
        #expect(served.token.isEmpty && served.url.contains("/v1/badge.png"))
        let health = try await served.request("GET", "/healthz")
        #expect(health.status == 200 && health.json?["status"] as? String == "ok")
        #expect(try await served.request("GET", "/").status == 404)
        #expect(try await served.request("GET", "/api/state").status == 404)
    }

    /// What HTTP says of methods, lengths, bodies and hosts, answered in the
    /// JSON every error has, with the security headers every answer has.
    @Test func methodsLengthsBodiesAndHostsAreAnsweredAsHTTPSays() async throws {
        let s = try Sandbox()
        let served = try await Served.start(s)
        defer { served.end() }
        // HEAD on every GET route, with the length GET sends.
        for path in ["/healthz", "/v1/badge.json?promise=x&size=64", "/v1/badge.png?promise=x&size=64"] {
            let get = try await served.request("GET", path), head = try await served.request("HEAD", path)
            #expect(get.status == 200 && head.status == 200, "\(path): \(get.status) \(head.status)")
            #expect(head.header("content-length") == String(get.body.count), "\(path): \(head.headers)")
        }
        // A path asked with a method it does not take.
        let post = try await served.request("POST", "/v1/badge.png?promise=x", body: Data())
        #expect(post.status == 405 && post.header("allow") == "GET, HEAD" && post.error?["code"] as? String == "method", "\(post.status) \(post.text)")
        #expect(post.header("x-content-type-options") == "nosniff")
        let delete = try await served.studio("DELETE", "/api/state")
        #expect(delete.status == 405 && delete.header("allow") == "GET, HEAD", "\(delete.status) \(delete.text)")
        #expect(try await served.request("GET", "/v2/nothing").status == 404)

        // A body past 64 KB is 413; valid JSON of the wrong kind names its key.
        let big = try await served.studio("POST", "/api/restore", json: "{\"id\": \"" + String(repeating: "0", count: 70_000) + "\"}")
        #expect(big.status == 413 && big.error?["code"] as? String == "too-large", "\(big.status) \(big.text)")
        let fraction = try await served.studio("POST", "/api/generate", json: #"{"promise": "Run", "count": 1.5}"#)
        #expect(fraction.status == 400 && (fraction.error?["message"] as? String) == #"the request body's "count" is 1.5, not a whole number the studio takes"#,
                "\(fraction.text)")

        // Two Host headers, or a host with more after its address, are refused.
        let twice = try await served.request("GET", "/api/state", headers: ["X-Badge-Token": served.token, "host": "evil.example"])
        #expect(twice.status == 400 && twice.error?["code"] as? String == "bad-host", "\(twice.status) \(twice.text)")
        let trailing = try await served.request("GET", "/api/state", headers: ["X-Badge-Token": served.token], host: "[::1]evil.example:\(served.port)")
        #expect(trailing.status == 400, "\(trailing.status)")

        // The studio behind a proxy that adds TLS: its https Origin is its own.
        let restore = try await served.studio("POST", "/api/restore", json: #"{"id": "0000000000000000"}"#,
                                              headers: ["Origin": "https://127.0.0.1:\(served.port)"])
        #expect(restore.status == 404 && restore.error?["code"] as? String == "not-found", "\(restore.status) \(restore.text)")

        // A query past the render API's limit gets its JSON answer, and a name with a control character is shown with it.
        let long = try await served.request("GET", "/v1/badge.png?promise=" + String(repeating: "a", count: 17_000))
        #expect(long.status == 400 && (long.error?["message"] as? String)?.hasPrefix("the query is 17008 bytes long") == true, "\(long.status) \(long.text)")
        let hidden = try await served.request("GET", "/v1/badge.png?pro%00mise=a")
        #expect((hidden.error?["message"] as? String) == #"unknown parameter "pro\u{0}mise""#, "\(hidden.text)")
    }

    /// 200 requests at once against 2 slots and a queue of 4: each gets a
    /// badge or a 503 with Retry-After, and memory stays bounded.
    @Test func aFullQueueAnswers503WithRetryAfterAndMemoryStaysBounded() async throws {
        let s = try Sandbox()
        let served = try await Served.start(s, ["--concurrency", "2", "--queue", "4"])
        defer { served.end() }
        let port = served.port
        let statuses = try await withThrowingTaskGroup(of: (Int, String?, Bool).self) { group in
            for i in 0..<200 {
                group.addTask {
                    try await onOwnThread {
                        let answer = try RawHTTP.send(port: port, method: "GET", path: "/v1/badge.png?promise=Promise+\(i)&size=256",
                                                      headers: ["Host": "127.0.0.1:\(port)", "Connection": "close"], body: nil)
                        let isPNG = answer.status == 200 && answer.body.starts(with: [0x89, 0x50, 0x4E, 0x47])
                        return (answer.status, answer.header("retry-after"), isPNG)
                    }
                }
            }
            var all: [(Int, String?, Bool)] = []
            for try await one in group { all.append(one) }
            return all
        }
        #expect(statuses.count == 200)
        for (status, retryAfter, isPNG) in statuses {
            #expect((status == 200 && isPNG) || (status == 503 && retryAfter == "1"), "status \(status)")
        }
        #expect(statuses.contains { $0.0 == 200 } && statuses.contains { $0.0 == 503 })
        let peak = try #require(served.peakMemory)
        #expect(peak < 400 << 20, "peak RSS \(peak >> 20) MB")
    }

    // MARK: - The studio's API and its guards

    @Test func aStateChangeWithoutTheTokenOrFromAnotherOriginOrHostIsRefused() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "--seed", "1", "Keep this one"]).status == 0)
        let before = try #require(s.badge)
        let served = try await Served.start(s)
        defer { served.end() }
        let body = Data(#"{"promise": "Replace it", "count": 2}"#.utf8)
        let json = ["Content-Type": "application/json"]
        let origin = "http://127.0.0.1:\(served.port)"
        let noToken = try await served.request("POST", "/api/generate", headers: json.merging(["Origin": origin]) { $1 }, body: body)
        #expect(noToken.status == 401 && noToken.error?["code"] as? String == "token")
        let wrongToken = try await served.request("POST", "/api/generate", headers: json.merging(["Origin": origin, "X-Badge-Token": (served.token.hasPrefix("0") ? "1" : "0") + served.token.dropFirst()]) { $1 }, body: body)
        #expect(wrongToken.status == 401)
        let foreignOrigin = try await served.request("POST", "/api/generate", headers: json.merging(["Origin": "http://evil.example", "X-Badge-Token": served.token]) { $1 }, body: body)
        #expect(foreignOrigin.status == 403 && foreignOrigin.error?["code"] as? String == "origin")
        let noOrigin = try await served.request("POST", "/api/generate", headers: json.merging(["X-Badge-Token": served.token]) { $1 }, body: body)
        #expect(noOrigin.status == 403 && noOrigin.error?["code"] as? String == "origin")
        let foreignHost = try await served.request("POST", "/api/generate", headers: json.merging(["Origin": "http://rebound.example:\(served.port)", "X-Badge-Token": served.token]) { $1 },
                                             body: body, host: "rebound.example:\(served.port)")
        #expect(foreignHost.status == 403 && foreignHost.error?["code"] as? String == "forbidden-host")
        #expect(try await served.request("GET", "/v1/badge.png?promise=x&size=64", host: "rebound.example").status == 403,
                "on loopback even the render API refuses a foreign Host")
        let restore = try await served.request("POST", "/api/restore", headers: json.merging(["Origin": "http://evil.example", "X-Badge-Token": served.token]) { $1 },
                                         body: Data(#"{"id": "0000000000000000"}"#.utf8))
        #expect(restore.status == 403)
        #expect(s.badge == before, "a refused request changed the store")
        // The page holds nothing of the store: its script asks with the token it was given.
        let studioPage = try await served.request("GET", "/")
        #expect(studioPage.status == 200 && studioPage.text.contains("New Badge") && !studioPage.text.contains("Keep this one"))
        #expect(studioPage.header("set-cookie") == nil)
        let csp = try #require(studioPage.header("content-security-policy"))
        #expect(csp.contains("default-src 'none'") && csp.contains("script-src 'self'") && !csp.contains("unsafe"))
        // A token in the query (sent, logged, kept in history) is refused, and the page says where it goes.
        let inQuery = try await served.request("GET", "/?token=\(served.token)")
        #expect(inQuery.status == 400 && inQuery.text.contains("#token=") && inQuery.header("set-cookie") == nil)
        // No cookie opens anything: every API request, GETs with effects included, needs the header.
        let cookie = ["Cookie": "badge-token-0=\(served.token); badge-token=\(served.token)"]
        for path in ["/api/state", "/api/backends", "/api/badge/back.png", "/api/badge.png"] {
            let answer = try await served.request("GET", path, headers: cookie)
            #expect(answer.status == 401 && answer.error?["code"] as? String == "token", "\(path): \(answer.status)")
            #expect(answer.error?["hint"] as? String == "open the URL badge serve printed (it ends in #token=...)")
        }
        #expect(try await served.studio("GET", "/api/state").status == 200)
        #expect(!served.stderr.contains(served.token), "the token was logged")
    }

    /// --open gives xdg-open a page of the user's alone that leads to the studio:
    /// no process's command line holds the token. The orphan reaper stays on: a
    /// plugin's setsid daemon is killed after its run, while the browser xdg-open
    /// left behind (in xdg-open's session) is left alone.
    @Test func openGivesXdgOpenAPrivatePageAndNoCommandLineHoldsTheToken() async throws {
        let s = try Sandbox()
        let bin = s.root.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let opened = s.root.appendingPathComponent("opened.txt"), browserPid = s.root.appendingPathComponent("browser.pid")
        let opener = bin.appendingPathComponent("xdg-open")
        try Data("""
            #!/bin/sh
            # A browser that stays on after xdg-open has gone, in its session.
            sh -c 'echo $$ > "\(browserPid.path).tmp" && mv "\(browserPid.path).tmp" "\(browserPid.path)"; exec sleep 300' </dev/null >/dev/null 2>&1 &
            printf '%s' "$1" > '\(opened.path).tmp' && mv '\(opened.path).tmp' '\(opened.path)'

            """.utf8).write(to: opener)
        chmod(opener.path, 0o755)
        let png = s.root.appendingPathComponent("plugin.png"), daemonPid = s.root.appendingPathComponent("daemon.pid")
        try TestPNG.solid(width: 64, height: 64, rgb: (1, 2, 3)).write(to: png)
        let config = s.root.appendingPathComponent("config.json")
        try Data(#"""
            {"backends": {"daemon": {"type": "exec", "command": ["\#(PluginOrphanTests.fixtures.path)/setsid.sh"],
                                     "env": {"PNG_SOURCE": "\#(png.path)", "CHILD_PID_FILE": "\#(daemonPid.path)"}}}}
            """#.utf8).write(to: config)
        let served = try await Served.start(s, ["--open", "--config", config.path],
                                            environment: ["PATH": bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")])
        defer { served.end() }
        try await Self.waitFor("xdg-open to be called", timeout: .seconds(30)) { FileManager.default.fileExists(atPath: opened.path) }
        try await Self.waitFor("the browser to start", timeout: .seconds(30)) { FileManager.default.fileExists(atPath: browserPid.path) }
        let browser = try #require(pid_t(String(contentsOf: browserPid, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        defer { kill(browser, SIGKILL) }

        // xdg-open was given a file: URL of a page, which holds the token; its folder and it are the user's alone.
        let target = try String(contentsOf: opened, encoding: .utf8)
        #expect(target.hasPrefix("file:///") && target.hasSuffix("/open.html") && !target.contains(served.token), "\(target)")
        let page = try #require(URL(string: target)).path
        var info = stat(), folder = stat()
        #expect(stat(page, &info) == 0 && stat((page as NSString).deletingLastPathComponent, &folder) == 0)
        #expect(info.st_mode & 0o777 == 0o600 && folder.st_mode & 0o777 == 0o700 && info.st_uid == geteuid())
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("<meta http-equiv=\"refresh\" content=\"0;url=\(served.url)\">"), "\(html)")
        // No process's command line holds the token.
        for name in try FileManager.default.contentsOfDirectory(atPath: "/proc") where Int(name) != nil {
            guard let cmdline = FileManager.default.contents(atPath: "/proc/\(name)/cmdline") else { continue }
            #expect(!String(decoding: cmdline, as: UTF8.self).contains(served.token), "/proc/\(name)/cmdline holds the token")
        }

        // A plugin run through the studio: its setsid daemon is killed, the browser is not.
        let started = try await served.studio("POST", "/api/generate", json: #"{"promise": "x", "backend": "daemon", "count": 2}"#)
        let job = try #require(started.json?["job"] as? String, "\(started.status) \(started.text)")
        let events = try await Self.events(served, job)
        #expect(events.contains { $0.data["status"] as? String == "ready" }, "\(events.map(\.data))")
        let daemon = try #require(pid_t(String(contentsOf: daemonPid, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        try await Self.waitFor("the plugin's daemon to be killed", timeout: .seconds(30)) { kill(daemon, 0) != 0 }
        #expect(kill(browser, 0) == 0, "the browser xdg-open started was killed with the plugins' orphans")

        // Stopped, it leaves no page behind.
        #expect(try await served.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: (page as NSString).deletingLastPathComponent))
        let refused = try await s.run(["serve", "--open", "--render-only"], timeout: 30)
        #expect(refused.status == 64 && refused.stderr.contains("--open opens the studio, which --render-only leaves out"), "\(refused.stderr)")
    }

    /// No browser to open: a warning that says so, with xdg-open's own words, and the server goes on.
    @Test func openWithoutABrowserSaysSo() async throws {
        let s = try Sandbox()
        let bin = s.root.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let opener = bin.appendingPathComponent("xdg-open")
        try Data("#!/bin/sh\necho 'xdg-open: no method available for opening' \"$1\" >&2\nexit 3\n".utf8).write(to: opener)
        chmod(opener.path, 0o755)
        let served = try await Served.start(s, ["--open"], environment: ["PATH": bin.path + ":/usr/bin:/bin"])
        defer { served.end() }
        try await Self.waitFor("the warning", timeout: .seconds(30)) { served.stderr.contains("badge: warning: xdg-open") }
        #expect(served.stderr.contains("badge: warning: xdg-open could not open a browser (exit status 3: xdg-open: no method available for opening file:///"),
                "\(served.stderr)")
        #expect(served.stderr.contains("); open the URL above") && !served.stderr.contains(served.token))
        #expect(try await served.request("GET", "/healthz").status == 200)
    }

    @Test func aPortInUseIsAClearError() async throws {
        let s = try Sandbox()
        let first = try await Served.start(s)
        defer { first.end() }
        let second = try await s.run(["serve", "--listen", "127.0.0.1:\(first.port)"], timeout: 60)
        #expect(second.status == 1)
        #expect(second.stderr.hasPrefix("error: cannot listen on 127.0.0.1:\(first.port)"), "\(second.stderr)")
        #expect(second.stderr.contains("Address already in use") && second.stderr.contains("--listen"))
        #expect(!second.stdout.contains("http://"), "it printed a URL it does not serve")
    }

    @Test func offLoopbackWithoutATokenItRefusesToStart() async throws {
        let s = try Sandbox()
        let refused = try await s.run(["serve", "--listen", "0.0.0.0:0"], timeout: 30)
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("off loopback it needs a token") && refused.stderr.contains("BADGE_SERVE_TOKEN"), "\(refused.stderr)")
    }

    /// A token comes from the environment or a file of the user's alone, never
    /// the command line, and a weak one is refused with the reason; no error shows it.
    @Test func aTokenIsTakenFromTheEnvironmentOrAPrivateFileAndAWeakOneIsRefused() async throws {
        let s = try Sandbox()
        let onTheLine = try await s.run(["serve", "--token", "0f3a9c1e5b7d2f4a6c8e0b1d3f5a7c9e"], timeout: 30)
        #expect(onTheLine.status == 64 && onTheLine.stderr.hasPrefix("error: --token puts the token on the command line, which every user"), "\(onTheLine.stderr)")
        #expect(onTheLine.stderr.contains("--token-file PATH") && !onTheLine.stderr.contains("0f3a9c1e"))
        for (weak, reason) in [("password1234", "12 characters of 36 kinds hold at most 62 bits of randomness, and 128 are needed"),
                               ("0123456789abcdef0123456789abcdef0123", "steps go to the same or the next character"),
                               ("Zq" + String(repeating: "x", count: 30), "it is made of only 3 different characters, and 8 are needed")] {
            let refused = try await s.run(["serve", "--listen", "0.0.0.0:0"], extraEnvironment: ["BADGE_SERVE_TOKEN": weak], timeout: 30)
            #expect(refused.status == 64 && refused.stderr.hasPrefix("error: $BADGE_SERVE_TOKEN: the token is too easy to guess: "), "\(refused.stderr)")
            #expect(refused.stderr.contains(reason) && refused.stderr.contains("openssl rand -hex 32"), "\(refused.stderr)")
            #expect(!refused.stderr.contains(weak), "the error shows the token")
        }
        let strong = "9d1c4b7e2a5f8036c1e4b7a29d5f8c30" + "e6b9a2d5f8c1e4b73a6d9f2c5e8b1a47"
        let file = s.root.appendingPathComponent("token")
        try Data((strong + "\n").utf8).write(to: file)
        chmod(file.path, 0o644)
        let readable = try await s.run(["serve", "--token-file", file.path], timeout: 30)
        #expect(readable.status == 64 && readable.stderr.hasPrefix("error: \(file.path): --token-file: other users can read the token file (mode 0644)"), "\(readable.stderr)")
        #expect(readable.stderr.contains("chmod 600 \(file.path)") && !readable.stderr.contains(strong))
        chmod(file.path, 0o600)
        let served = try await Served.start(s, ["--token-file", file.path])
        defer { served.end() }
        #expect(served.token == strong)
        #expect(try await served.studio("GET", "/api/state").status == 200)
    }

    /// With few open files (64) and many idle connections held, the server
    /// stops accepting rather than fail accept(2) with EMFILE in a loop (it
    /// took two thirds of a core), and serves again once they are gone.
    @Test func connectionsPastTheOpenFileLimitWaitAndTheServerRecovers() async throws {
        let s = try Sandbox()
        let served = try await Served.start(s, prefix: ["prlimit", "--nofile=64:64"])
        defer { served.end() }
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<100 { held.append(try RawHTTP.connect(port: served.port, timeout: 10)) }
        func cpuTicks() throws -> Int {
            let stat = try String(contentsOfFile: "/proc/\(served.process.processIdentifier)/stat", encoding: .utf8)
            let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
            return Int(fields[11])! + Int(fields[12])!  // utime and stime, in ticks of 1/100 s
        }
        // Over a second of wall time, a spinning accept loop costs ~70 ticks; an idle server none.
        let before = try cpuTicks()
        try await Task.sleep(for: .seconds(1))
        let spent = try cpuTicks() - before
        #expect(spent < 40, "the server spent \(spent) ticks of CPU in a second while out of files")
        for fd in held { close(fd) }
        held = []
        #expect(try await served.request("GET", "/healthz").status == 200)
    }

    @Test func aSlowClientIsCutOffAndOthersAreStillServed() async throws {
        let s = try Sandbox()
        let served = try await Served.start(s, ["--request-timeout", "2"])
        defer { served.end() }
        let port = served.port, token = served.token
        // A head that never ends, and a body that never arrives, each on a thread of its own.
        let written = Gate()
        let trickle = Task {
            try await onThreadOfItsOwn("the trickling client to be cut off", limit: .seconds(120)) { () -> (Data, Duration) in
                let clock = ContinuousClock(), started = clock.now
                let fd = try RawHTTP.connect(port: port, timeout: 60)
                defer { close(fd) }
                try RawHTTP.write(fd, Data("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8))
                written.arrive()
                return (RawHTTP.readAll(fd), clock.now - started)
            }
        }
        let drip = Task {
            try await onThreadOfItsOwn("the dripping client to be cut off", limit: .seconds(120)) { () -> (Data, Duration) in
                let clock = ContinuousClock(), started = clock.now
                let fd = try RawHTTP.connect(port: port, timeout: 60)
                defer { close(fd) }
                try RawHTTP.write(fd, Data(("POST /api/generate HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Badge-Token: \(token)\r\n"
                    + "Origin: http://127.0.0.1:\(port)\r\nContent-Length: 1000\r\nContent-Type: application/json\r\n\r\n{").utf8))
                written.arrive()
                return (RawHTTP.readAll(fd), clock.now - started)
            }
        }
        // Meanwhile, both slow clients connected and half-way through, another client is answered.
        try await waitUntil("both slow clients to have sent their part") { written.arrivals == 2 }
        #expect(try await served.request("GET", "/healthz").status == 200)
        let (a, trickleWaited) = try await trickle.value
        let (b, dripWaited) = try await drip.value
        let waited = max(trickleWaited, dripWaited)
        #expect(waited < .seconds(30), "the slow connections were held \(waited)")
        #expect(!String(decoding: a, as: UTF8.self).contains("200 OK"))
        #expect(!String(decoding: b, as: UTF8.self).contains("202"))
    }

    // MARK: - The studio end to end over HTTP

    /// Generate, the events as they come, a pick committed with the date, and `badge show` agreeing.
    /// A client that stops following a job's events is let go at once: the
    /// server closes its side of the connection (no socket of its port left
    /// in CLOSE_WAIT) while the job, a plugin that hangs, goes on.
    @Test func theEventsEndWhenTheClientGoes() async throws {
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("config.json")
        try Data(#"""
            {"backends": {"hang": {"type": "exec", "command": ["\#(PluginOrphanTests.fixtures.path)/hang.sh"], "timeoutSeconds": 600,
                                   "env": {"CHILD_PID_FILE": "\#(s.root.appendingPathComponent("child.pid").path)"}}}}
            """#.utf8).write(to: config)
        let served = try await Served.start(s, ["--config", config.path])
        defer { served.end() }
        let started = try await served.studio("POST", "/api/generate", json: #"{"promise": "x", "backend": "hang", "count": 2}"#)
        let job = try #require(started.json?["job"] as? String, "\(started.text)")
        let (port, token) = (served.port, served.token)
        // Read the first events, then hang up.
        let first = try await onThreadOfItsOwn("the first events", limit: .seconds(60)) { () -> String in
            let fd = try RawHTTP.connect(port: port, timeout: 60)
            defer { close(fd) }
            try RawHTTP.write(fd, Data("GET /api/jobs/\(job)/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Badge-Token: \(token)\r\n\r\n".utf8))
            var buffer = [UInt8](repeating: 0, count: 4096), read = ""
            while !read.contains("event: started") {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n <= 0 { break }
                read += String(decoding: buffer.prefix(n), as: UTF8.self)
            }
            return read
        }
        #expect(first.contains("event: started"), "\(first)")
        /// The server's sockets on its port that the client has closed and it has not (CLOSE_WAIT, state 08).
        func closeWaiting() -> Int {
            let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
            let local = String(format: ":%04X", port)
            return table.split(separator: "\n").dropFirst().filter { line in
                let fields = line.split(separator: " ")
                return fields.count > 3 && fields[1].hasSuffix(local) && fields[3] == "08"
            }.count
        }
        try await Self.waitFor("the server to close the events' connection", timeout: .seconds(20)) { closeWaiting() == 0 }
        let state = try await served.studio("GET", "/api/state")
        #expect(state.status == 200)
    }

    /// A candidate whose caption is not the promise whole says so: not drawn (a word
    /// too long for any legible size), shortened (a long promise); a short one says nothing.
    @Test func aCandidateSaysWhenItsCaptionWasNotDrawnWhole() async throws {
        let s = try Sandbox()
        let served = try await Served.start(s)
        defer { served.end() }
        for (promise, note) in [
            ("Pneumonoultramicroscopicsilicovolcanoconiosisextraordinarilyincomprehensibilities",
             "the caption was not drawn: even its shortest form does not fit the badge at a legible size"),
            ("Run the whole Camino de Santiago from Saint-Jean-Pied-de-Port to Santiago de Compostela with my brother before the autumn",
             "the caption was shortened: 6 of 18 words: the whole promise does not fit on two lines"),
            ("Swim every week", nil),
        ] as [(String, String?)] {
            let started = try await served.studio("POST", "/api/generate", json: #"{"promise": "\#(promise)", "count": 2, "style": "medal"}"#)
            let job = try #require(started.json?["job"] as? String, "\(started.text)")
            let ready = try await Self.events(served, job).filter { $0.data["status"] as? String == "ready" }
            #expect(ready.count == 2)
            for event in ready {
                if let note {
                    #expect((event.data["captionNote"] as? String)?.hasPrefix(note) == true, "\(promise): \(event.data)")
                    #expect((event.data["captionNote"] as? String)?.contains("--caption") == false, "the studio has no --caption")
                } else {
                    #expect(event.data["captionNote"] == nil && event.data["caption"] as? String == "SWIM EVERY WEEK", "\(event.data)")
                }
            }
        }
    }

    @Test func candidatesArriveAsEventsAndThePickIsCommittedWithTheDate() async throws {
        let s = try Sandbox()
        let served = try await Served.start(s)
        defer { served.end() }
        let started = try await served.studio("POST", "/api/generate",
                                        json: #"{"promise": "Swim every week", "count": 3, "date": "2027-03-01", "timeZone": "Europe/Berlin", "seed": "5"}"#)
        #expect(started.status == 202, "\(started.text)")
        let job = try #require(started.json?["job"] as? String)
        let events = try await Self.events(served, job)
        let ready = events.filter { $0.name == "candidate" && $0.data["status"] as? String == "ready" }.compactMap { $0.data["number"] as? Int }
        #expect(Set(ready) == [1, 2, 3])
        #expect(events.first?.name == "started" && events.last?.name == "done" && events.last?.data["status"] as? String == "finished")
        #expect(s.badge == nil, "making candidates committed something")
        let candidate = try await served.studio("GET", "/api/jobs/\(job)/candidates/2.png")
        #expect(candidate.status == 200 && candidate.body.starts(with: [0x89, 0x50]))
        let picked = try await served.studio("POST", "/api/jobs/\(job)/pick", json: #"{"number": 2}"#)
        #expect(picked.status == 200, "\(picked.text)")
        let badge = try #require(picked.json?["badge"] as? [String: Any])
        #expect(badge["commitmentDate"] as? String == "2027-03-01T00:00:00+01:00" && badge["timeZone"] as? String == "Europe/Berlin")
        #expect(badge["seed"] as? String == "6" && badge["promise"] as? String == "Swim every week")
        let show = try await s.run(["show", "--json"])
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        #expect(shown["id"] as? String == badge["id"] as? String)
        // The picked candidate's picture is what was committed (its pixels; the stamp differs).
        let stored = try #require(s.badge)
        #expect(try Self.pixels(stored) == Self.pixels(candidate.body))
        // Bad picks say why.
        let missing = try await served.studio("POST", "/api/jobs/\(job)/pick", json: #"{"number": 9}"#)
        #expect(missing.status == 400 && (missing.error?["message"] as? String)?.contains("from 1 to 3") == true)
        let unknown = try await served.studio("POST", "/api/jobs/nope/pick", json: #"{"number": 1}"#)
        #expect(unknown.status == 404)
        let badJSON = try await served.studio("POST", "/api/generate", json: #"{"promise": 5}"#)
        #expect(badJSON.status == 400 && (badJSON.error?["message"] as? String)?.contains("promise") == true)
        let unknownKey = try await served.studio("POST", "/api/generate", json: #"{"promise": "x", "size": 64}"#)
        #expect(unknownKey.status == 400 && unknownKey.error?["message"] as? String == "the request body has an unknown key \"size\"")
        let badStyle = try await served.studio("POST", "/api/generate", json: #"{"promise": "x", "style": "glitter"}"#)
        #expect(badStyle.status == 400 && (badStyle.error?["message"] as? String)?.contains("no style \"glitter\"") == true)
    }

    /// `/api/backends` answers what `badge backends` answers: each configured
    /// backend in the config's order, available or not as it is, and a reason
    /// in words (with a hint) for each one that cannot run. The release build
    /// has been seen to answer "available": false for all of them with no
    /// reason (docs/DEVELOPING.md, "A miscompile in the release build").
    @Test func theStudioListsEachBackendAsAvailableAsItIs() async throws {
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("backends.json")
        try Data(#"""
            {"backends": {
              "procedural": {"type": "procedural"},
              "import": {"type": "import"},
              "openai": {"type": "http", "api": "openai", "url": "https://api.openai.com/v1", "model": "gpt-image-1",
                         "apiKeyEnv": "BADGE_E2E_NO_SUCH_KEY"},
              "tiles": {"type": "procedural", "caption": false}
            }}
            """#.utf8).write(to: config)
        let listed = try await s.run(["backends", "--json", "--config", config.path])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]], "\(listed.stderr)")
        let served = try await Served.start(s, ["--config", config.path])
        defer { served.end() }
        let answer = try await served.studio("GET", "/api/backends")
        #expect(answer.status == 200, "\(answer.text)")
        let views = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [[String: Any]], "\(answer.text)")
        #expect(views.map { $0["name"] as? String ?? "?" } == ["procedural", "import", "openai", "tiles"], "\(answer.text)")
        for view in views {
            let name = view["name"] as? String ?? "?"
            let row = try #require(rows.first { $0["name"] as? String == name }, "badge backends has no \(name)")
            #expect(view["available"] as? Bool == row["available"] as? Bool, "\(name): studio \(answer.text), badge backends \(listed.stdout)")
            #expect(view["available"] as? Bool == (name != "openai"), "\(name): \(answer.text)")
        }
        for name in ["procedural", "import", "tiles"] {
            let view = try #require(views.first { $0["name"] as? String == name })
            #expect(view["reason"] == nil && view["hint"] == nil, "\(name): \(view)")
        }
        let openai = try #require(views.first { $0["name"] as? String == "openai" })
        #expect(openai["reason"] as? String == "the environment variable BADGE_E2E_NO_SUCH_KEY is not set", "\(openai)")
        #expect((openai["hint"] as? String)?.isEmpty == false, "\(openai)")
        #expect(openai["type"] as? String == "http")
        let procedural = try #require(views.first { $0["name"] as? String == "procedural" })
        #expect((procedural["styles"] as? [String])?.contains("medal") == true, "\(procedural)")
    }

    /// The studio describes the current badge as `badge show --json` does: the
    /// caption drawn on it, and the style's name (here the prompt's "flat"),
    /// which a request may give back as a style.
    @Test func theStudioDescribesTheBadgeAsShowDoes() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "128", "--seed", "3", "Run a flat marathon"]).status == 0)
        let show = try await s.run(["show", "--json"])
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any], "\(show.stdout)")
        #expect(shown["style"] as? String == "flat" && shown["styleSource"] as? String == "prompt", "\(shown)")
        #expect(shown["caption"] as? String == "RUN A FLAT MARATHON", "\(shown)")
        let served = try await Served.start(s)
        defer { served.end() }
        let state = try await served.studio("GET", "/api/state")
        let badge = try #require(state.json?["badge"] as? [String: Any], "\(state.text)")
        for key in ["id", "promise", "prompt", "caption", "style", "seed", "commitmentDate", "timeZone"] {
            #expect(badge[key] as? String == shown[key] as? String, "\(key): studio \(badge[key] ?? "none"), show \(shown[key] ?? "none")")
        }
    }

    /// The four steps of `badge prompt` as fields: the line they compose is the
    /// prompt drawn, and the purpose is the promise recorded.
    @Test func theComposedStepsBecomeThePromptAndThePurposeThePromise() async throws {
        let s = try Sandbox()
        let served = try await Served.start(s)
        defer { served.end() }
        let started = try await served.studio("POST", "/api/generate", json: #"""
            {"purpose": "Learn Spanish", "vibe": "calm", "metaphor": "speech", "style": "flat", "colors": ["teal", "gold"], "count": 2, "seed": "4"}
            """#)
        let job = try #require(started.json?["job"] as? String, "\(started.text)")
        let events = try await Self.events(served, job)
        #expect(events.filter { $0.data["status"] as? String == "ready" }.allSatisfy { $0.data["style"] as? String == "flat" })
        let picked = try await served.studio("POST", "/api/jobs/\(job)/pick", json: #"{"number": 1}"#)
        let badge = try #require(picked.json?["badge"] as? [String: Any], "\(picked.text)")
        #expect(badge["promise"] as? String == "Learn Spanish")
        #expect(badge["prompt"] as? String == "Learn Spanish, calm mood, a speech bubble as its symbol, flat style in teal and gold --ar 1:1")
        let unknownVibe = try await served.studio("POST", "/api/generate", json: #"{"purpose": "Learn Spanish", "vibe": "glittery"}"#)
        #expect(unknownVibe.status == 400 && (unknownVibe.error?["message"] as? String)?.contains("\"glittery\" is not a vibe") == true,
                "\(unknownVibe.text)")
    }

    /// A remote candidate that fails says why, in words, and the others are unaffected.
    @Test func aFailedRemoteCandidateSaysWhy() async throws {
        let s = try Sandbox()
        let comfy = try FixtureServer(script: ComfyUITests.server)
        defer { comfy.stop() }
        let config = try ComfyUITests.config(s, comfy, modes: ["exec-error"], extra: #", "retries": 0"#)
        let served = try await Served.start(s, ["--config", config.path], environment: ["BADGE_E2E_KEY": ComfyUITests.key])
        defer { served.end() }
        let started = try await served.studio("POST", "/api/generate", json: #"{"promise": "Paint", "count": 2, "backend": "exec-error"}"#)
        let job = try #require(started.json?["job"] as? String, "\(started.text)")
        let events = try await Self.events(served, job)
        let failed = events.filter { $0.data["status"] as? String == "failed" }
        #expect(failed.count == 2)
        for event in failed {
            let message = event.data["message"] as? String ?? ""
            #expect(message.contains("CUDA out of memory"), "\(message)")
            #expect(!message.contains(ComfyUITests.key))
        }
        #expect(events.last?.data["status"] as? String == "finished")
        #expect(s.badge == nil)
    }

    // MARK: - Stopping

    /// SIGTERM while a commit is under way (held inside the store's commit, the
    /// new file written and flushed, not yet renamed over the badge): the
    /// commit finishes, the new badge is whole, and nothing temporary is left.
    @Test(.needsTestSeams) func sigtermDuringACommitLeavesTheNewBadgeWhole() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "--seed", "1", "The old one"]).status == 0)
        let served = try await Served.start(s, environment: ["BADGE_TEST_HOLD": "commit-after-fsync"])
        let started = try await served.studio("POST", "/api/generate", json: #"{"promise": "The new one", "count": 2, "seed": "9"}"#)
        let job = try #require(started.json?["job"] as? String)
        _ = try await Self.events(served, job)
        let port = served.port, token = served.token
        let pick = Task {
            try await onOwnThread {
                try RawHTTP.send(port: port, method: "POST", path: "/api/jobs/\(job)/pick",
                                 headers: ["Host": "127.0.0.1:\(port)", "Origin": "http://127.0.0.1:\(port)", "X-Badge-Token": token,
                                           "Content-Type": "application/json", "Content-Length": "13", "Connection": "close"],
                                 body: Data(#"{"number": 1}"#.utf8))
            }
        }
        try await Self.waitFor("the commit to be held", timeout: .seconds(60)) { served.stderr.contains("held at commit-after-fsync") }
        served.process.terminate()
        served.release()
        let answer = try await pick.value
        #expect(answer.status == 200, "\(answer.text)")
        // The one SIGTERM ends it: `stop()` would send another, and a second signal ends badge at once.
        #expect(await served.process.waitForExit(limit: .seconds(60)), "the server did not stop on SIGTERM: \(served.stderr)")
        #expect(try await served.stop() == 0, "\(served.stderr)")
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        #expect(metadata.extra["promise"] ?? metadata.prompt == "The new one")
        try PNGDataCheck.verify(try #require(s.badge))
        #expect(s.storeObject.temporaryFiles().isEmpty && s.leftoverWorkspaces.isEmpty)
    }

    /// SIGTERM while candidates are being made by a remote model that never
    /// finishes (a fake ComfyUI): it stops, the run is interrupted on the
    /// server, the old badge stays, and no workspace or temporary is left.
    @Test func sigtermDuringARenderCancelsItOnTheServerAndLeavesTheOldBadge() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "--seed", "1", "The old one"]).status == 0)
        let before = try #require(s.badge)
        let comfy = try FixtureServer(script: ComfyUITests.server)
        defer { comfy.stop() }
        let config = try ComfyUITests.config(s, comfy, modes: ["hang"], extra: #", "timeoutSeconds": 600"#)
        let served = try await Served.start(s, ["--config", config.path], environment: ["BADGE_E2E_KEY": ComfyUITests.key])
        let started = try await served.studio("POST", "/api/generate", json: #"{"promise": "Big ones", "count": 2, "backend": "hang"}"#)
        #expect(started.status == 202, "\(started.text)")
        try await Self.waitFor("the runs to be queued", timeout: .seconds(60)) {
            ((try? ComfyUITests.received(comfy, mode: "hang")) ?? []).filter { $0.path == "/prompt" }.count == 2
        }
        let status = try await served.stop()
        #expect(status == 0, "\(served.stderr)")
        #expect(served.stdout.contains("Stopped."))
        let requests = try ComfyUITests.received(comfy, mode: "hang")
        #expect(requests.contains { $0.path == "/interrupt" }, "\(requests.map(\.path))")
        #expect(s.badge == before)
        #expect(s.storeObject.temporaryFiles().isEmpty && s.leftoverWorkspaces.isEmpty)
    }

    /// Eight sets of candidates still being made fill the studio: a ninth is a
    /// 429 with Retry-After, and once one is cancelled there is room again.
    @Test func aFullStudioAnswers429UntilASetEnds() async throws {
        let s = try Sandbox()
        let comfy = try FixtureServer(script: ComfyUITests.server)
        defer { comfy.stop() }
        let config = try ComfyUITests.config(s, comfy, modes: ["hang"], extra: #", "timeoutSeconds": 600"#)
        let served = try await Served.start(s, ["--config", config.path], environment: ["BADGE_E2E_KEY": ComfyUITests.key])
        var jobs: [String] = []
        for k in 1...8 {
            let started = try await served.studio("POST", "/api/generate", json: #"{"promise": "Set \#(k)", "count": 2, "backend": "hang"}"#)
            #expect(started.status == 202, "\(started.text)")
            jobs.append(try #require(started.json?["job"] as? String))
        }
        let refused = try await served.studio("POST", "/api/generate", json: #"{"promise": "One too many", "count": 2, "backend": "hang"}"#)
        #expect(refused.status == 429 && refused.header("Retry-After") == "5", "\(refused.status) \(refused.headers)")
        #expect(refused.error?["code"] as? String == "busy", "\(refused.text)")
        #expect((refused.error?["message"] as? String)?.contains("8 sets of candidates are being made already") == true, "\(refused.text)")
        let cancelled = try await served.studio("POST", "/api/jobs/\(jobs[0])/cancel")
        #expect(cancelled.status == 200, "\(cancelled.text)")
        // The cancelled set ends once its run is interrupted on the server: until then, 429.
        let deadline = ContinuousClock.now + .seconds(60)
        var again = try await served.studio("POST", "/api/generate", json: #"{"promise": "Room again", "count": 2, "backend": "hang"}"#)
        while again.status == 429 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            again = try await served.studio("POST", "/api/generate", json: #"{"promise": "Room again", "count": 2, "backend": "hang"}"#)
        }
        #expect(again.status == 202, "\(again.status) \(again.text)")
        #expect(try await served.stop() == 0, "\(served.stderr)")
    }

    // MARK: - Helpers

    struct Event {
        var name: String
        var data: [String: Any]
    }

    /// The job's server-sent events until `done` (the stream then ends).
    static func events(_ served: Served, _ job: String) async throws -> [Event] {
        let (port, token) = (served.port, served.token)
        let text = try await onThreadOfItsOwn("the events of job \(job)", limit: .seconds(300)) {
            let fd = try RawHTTP.connect(port: port, timeout: 300)
            defer { close(fd) }
            try RawHTTP.write(fd, Data("GET /api/jobs/\(job)/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Badge-Token: \(token)\r\nConnection: close\r\n\r\n".utf8))
            return String(decoding: RawHTTP.readAll(fd), as: UTF8.self)
        }
        var events: [Event] = []
        var name = ""
        // Lines end in "\n"; the chunked encoding's own lines in "\r\n", a single Character.
        for line in text.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("event: ") { name = String(line.dropFirst(7)) }
            if line.hasPrefix("data: "), let data = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any] {
                events.append(Event(name: name, data: data))
            }
        }
        return events
    }

    static func pixels(_ png: Data) throws -> Data {
        var pixels = Data()
        for chunk in try PNG.chunks(in: png, verifyCRC: true) where chunk.type == "IDAT" { pixels.append(chunk.data) }
        return pixels
    }

    static func waitFor(_ what: String, timeout: Duration, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw RawHTTP.Failure(description: "gave up waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
