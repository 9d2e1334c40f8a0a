import ArgumentParser
import BadgeKit
import BadgeServer
import Foundation
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the studio (the app's screen in a browser) and badges by URL.",
        discussion: """
            The studio shows the current badge and its commitment date, makes candidates \
            for a promise and commits the one you pick, turns the card, and restores \
            earlier badges. It uses the same configuration, backends and store as the other \
            commands; it is for one person's store.

            Badges by URL, for any page to embed (no store involved):
              GET /v1/badge.png?promise=Run+a+marathon&style=medal&seed=7&size=256
              GET /v1/badge.json?...   the metadata the PNG carries
              GET /healthz

            It listens on 127.0.0.1 unless --listen names another address; then a token \
            is required ($BADGE_SERVE_TOKEN or --token-file). The studio's URL carries the \
            token (made for this run unless given) after #, which the browser never sends; \
            the page sends it with each request. Ctrl-C or SIGTERM stop it: renders in \
            flight are cancelled and a commit under way finishes.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Address and port to listen on, HOST:PORT (port 0: any free port).", valueName: "host:port"))
    var listen = "127.0.0.1:8080"

    @Option(help: ArgumentHelp("A file of yours alone (0600) whose first line is the token the studio requires (default: $BADGE_SERVE_TOKEN, else a new one each run; one or the other is required off loopback).", valueName: "path"))
    var tokenFile: String?

    /// Refused: every user can read a command line. Kept to say so.
    @Option(help: .hidden)
    var token: String?

    @Flag(help: "Open the studio in the default browser (xdg-open, given a 0600 page that leads to the URL).")
    var open = false

    @Flag(help: "Serve only badges by URL and /healthz: no studio, no store (for a deployment behind a load balancer).")
    var renderOnly = false

    @Option(help: ArgumentHelp("Renders at once (default: the number of cores plus one).", valueName: "n"))
    var concurrency: Int?

    @Option(help: ArgumentHelp("Renders that may wait for a slot; past them the answer is 503 (default: 4 per slot).", valueName: "n"))
    var queue: Int?

    @Option(help: ArgumentHelp("The largest size the render API draws, \(BadgeRequest.sizeRange.lowerBound)–\(BadgeRequest.sizeRange.upperBound) (default \(ServeSettings.defaultMaxRenderSize)).", valueName: "px"))
    var maxSize = ServeSettings.defaultMaxRenderSize

    @Option(help: ArgumentHelp("Seconds a client has to send a whole request, and a connection may stay idle (default 15).", valueName: "s"))
    var requestTimeout = 15

    @Option(name: .customLong("allow-host"), help: ArgumentHelp("A host name the studio answers to besides loopback's (repeatable).", valueName: "name"))
    var allowedHosts: [String] = []

    func validate() throws {
        if let concurrency, !(1...256).contains(concurrency) {
            throw ValidationError("--concurrency must be from 1 to 256 renders, not \(concurrency)")
        }
        if let queue, !(0...10_000).contains(queue) {
            throw ValidationError("--queue must be from 0 to 10000 renders, not \(queue)")
        }
        if !BadgeRequest.sizeRange.contains(maxSize) {
            throw ValidationError("--max-size must be from \(BadgeRequest.sizeRange.lowerBound) to \(BadgeRequest.sizeRange.upperBound) pixels, not \(maxSize)")
        }
        if !(1...3600).contains(requestTimeout) {
            throw ValidationError("--request-timeout must be from 1 to 3600 seconds, not \(requestTimeout)")
        }
        if open && renderOnly {
            throw ValidationError("--open opens the studio, which --render-only leaves out")
        }
    }

    func settings() throws -> ServeSettings {
        let (host, port) = try ServeSettings.parseListen(listen)
        var settings = ServeSettings(host: host, port: port, renderOnly: renderOnly, maxRenderSize: maxSize, allowedHosts: allowedHosts)
        if let concurrency { settings.renderConcurrency = concurrency }
        settings.requestTimeout = .seconds(requestTimeout)
        settings.renderQueue = queue ?? 4 * settings.renderConcurrency
        if token != nil {
            throw BadgeError(.usage, "--token puts the token on the command line, which every user of this machine can read (/proc/PID/cmdline)",
                             hint: "give it in $\(ServeSettings.tokenVariable), or in a file of yours alone with --token-file PATH")
        }
        let variable = ProcessInfo.processInfo.environment[ServeSettings.tokenVariable].flatMap { $0.isEmpty ? nil : $0 }
        if let tokenFile {
            settings.token = try ServeSettings.readToken(file: tokenFile)
        } else if let variable {
            try ServeSettings.checkToken(variable, source: "$\(ServeSettings.tokenVariable)")
            settings.token = variable
        } else if !settings.listensOnLoopback && !renderOnly {
            throw BadgeError(.usage, "--listen \(listen): the studio can change your badge, so off loopback it needs a token",
                             hint: "export \(ServeSettings.tokenVariable)=$(openssl rand -hex 32), or give --token-file PATH; --render-only serves badges by URL with no studio")
        }
        for name in allowedHosts where AccessPolicyName.isValid(name) == false {
            throw BadgeError(.usage, "--allow-host \(name.debugDescription) is not a host name", hint: "give a name such as badges.example.org")
        }
        return settings
    }

    func run() async throws {
        let settings = try settings()
        let context = try global.makeContext()
        Self.raiseOpenFileLimit()
        var requestLogger = Logger(label: "badge") { _ in StderrLogHandler(logLevel: .info) }
        requestLogger.logLevel = .info
        let serveContext = ServeContext(config: context.config, environment: context.environment, registry: context.registry, store: context.store)
        let opener = open ? BrowserOpener() : nil
        defer { opener?.remove() }
        try await StudioServer.run(settings: settings, context: serveContext, logger: context.environment.logger, requestLogger: requestLogger) { listening in
            let what = settings.renderOnly ? "Serving badges by URL" : "The studio is at"
            Terminal.out("\(what) \(listening.url)\n(Ctrl-C stops it.)")
            opener?.open(listening.url)
        }
        Terminal.out("Stopped.")
    }

    /// Every connection is a descriptor: a server takes the most the system
    /// lets it (the hard limit), not the shell's soft 1,024, past which new
    /// connections are refused while the accept loop spins.
    static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// Host names as `--allow-host` takes them: letters, digits, dots and dashes.
enum AccessPolicyName {
    static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 253
            && name.lowercased().utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 || $0 == 46 }
    }
}
