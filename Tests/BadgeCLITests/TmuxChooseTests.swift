import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `badge generate --choose` as a person meets it: in a real pseudo-terminal
/// (a tmux server of the test's own), keys typed with send-keys, the screen read
/// with capture-pane, and every byte badge wrote to the terminal kept by `script`.
final class TmuxPane: @unchecked Sendable {
    let sandbox: Sandbox
    let socket: String
    /// What badge wrote to the terminal, escape sequences and all.
    let raw: URL
    /// Where the pane's shell writes badge's exit status.
    let status: URL

    /// Starts `badge arguments` in a `columns`×`rows` pane with `TERM=term`, in the sandbox's root directory.
    convenience init(_ sandbox: Sandbox, _ arguments: [String], term: String, columns: Int = 120, rows: Int = 40,
                     extraEnvironment: [String: String] = [:]) throws {
        try self.init(sandbox, command: [Sandbox.binary.path] + arguments, term: term, columns: columns, rows: rows,
                      extraEnvironment: extraEnvironment)
    }

    /// Starts `command` (a shell, say) the same way.
    init(_ sandbox: Sandbox, command program: [String], term: String, columns: Int = 120, rows: Int = 40,
         extraEnvironment: [String: String] = [:]) throws {
        self.sandbox = sandbox
        socket = "badge-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        raw = sandbox.root.appendingPathComponent("terminal-\(socket).raw")
        // The pane stays after badge ends, so its exit status and last screen can be read.
        let config = sandbox.root.appendingPathComponent("tmux-\(socket).conf")
        try Data("set -g remain-on-exit on\nset -g history-limit 5000\n".utf8).write(to: config)
        var environment = sandbox.environment.merging(extraEnvironment) { $1 }
        environment["TERM"] = term
        // script runs the command with `$SHELL -c`, the same shell everywhere; and
        // with `exec`, so badge takes the shell's place. dash forks the command and
        // waits, and Ctrl-C reaches it too: it ends with status 130 however badge ends.
        environment["SHELL"] = "/bin/sh"
        for name in ["TMUX", "TMUX_PANE", "KITTY_WINDOW_ID", "TERM_PROGRAM", "COLORTERM", "VTE_VERSION"] where extraEnvironment[name] == nil {
            environment.removeValue(forKey: name)
        }
        let badge = "exec " + program.map(Self.quoted).joined(separator: " ")
        let command = ["env", "-i"] + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            + ["script", "-q", "-f", "-e", "-c", badge, raw.path]
        status = sandbox.root.appendingPathComponent("status-\(socket)")
        // The exit status goes to a file: what the test waits for.
        let shell = command.map(Self.quoted).joined(separator: " ") + "; echo $? > " + Self.quoted(status.path)
        try tmux(["-f", config.path, "new-session", "-d", "-s", "badge", "-x", "\(columns)", "-y", "\(rows)", "-c", sandbox.root.path,
                  shell])
    }

    deinit { close() }

    /// Ends the tmux server, and with it badge if it still runs.
    func close() {
        guard !closed else { return }
        closed = true
        do { try tmux(["kill-server"]) } catch { print("tmux kill-server: \(error)") }
    }

    private var closed = false

    static func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// Runs tmux and returns what it printed. The server tmux starts lives on: as every
    /// `ChildProcess`, it holds no descriptor of this process's and starts with no signal
    /// blocked or ignored (a tmux server that inherited a blocked SIGCHLD would never hear
    /// of its pane's end).
    @discardableResult
    func tmux(_ arguments: [String]) throws -> String {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
        process.arguments = ["-u", "-L", socket] + arguments
        // The command that starts the server would hand it the pipe: its output goes nowhere.
        let output = Pipe()
        if !arguments.contains("new-session") {
            process.standardOutput = output
            process.standardError = output
        }
        do {
            try process.run()
        } catch {
            throw TmuxFailed(arguments: arguments, output: "\(error)")
        }
        try? output.fileHandleForWriting.close()
        // A bound on a hang: a tmux command that has not ended within a minute is killed.
        let timer = KillTimer(process, after: 60)
        let text = String(decoding: PipeReading.readAll(output.fileHandleForReading), as: UTF8.self)
        process.waitUntilExit()
        timer.cancel()
        if timer.fired { throw TmuxFailed(arguments: arguments, output: "still running after \(Int(timer.seconds)) s, killed\n" + text) }
        if process.terminationStatus != 0 || process.terminationReason != .exit { throw TmuxFailed(arguments: arguments, output: text) }
        return text
    }

    struct TmuxFailed: Error, CustomStringConvertible {
        var arguments: [String]
        var output: String
        var description: String { "tmux \(arguments.joined(separator: " ")) failed: \(output)" }
    }

    /// The screen as text, with the lines scrolled off it.
    func screen() throws -> String { try tmux(["capture-pane", "-p", "-J", "-S", "-", "-t", "badge"]) }

    /// Everything badge wrote to the terminal so far.
    var output: String { (try? String(contentsOf: raw, encoding: .utf8)) ?? "" }

    func send(_ keys: String...) throws { try tmux(["send-keys", "-t", "badge"] + keys) }

    /// Waits until the screen shows `text` (a hang is bounded, generously).
    func waitFor(_ text: String) async throws {
        try await waitUntil("the screen to show \"\(text)\"", timeout: .seconds(120), every: .milliseconds(50)) {
            try self.screen().contains(text) || self.exitStatus != nil
        }
        guard try screen().contains(text) else {
            throw EndedFirst(awaited: text, status: exitStatus ?? -1, screen: screenText)
        }
    }

    struct EndedFirst: Error, CustomStringConvertible {
        var awaited: String
        var status: Int32
        var screen: String
        var description: String { "badge ended (status \(status)) before the screen showed \"\(awaited)\":\n\(screen)" }
    }

    /// The screen, or "" when tmux cannot say: for messages.
    var screenText: String { (try? screen()) ?? "" }

    /// badge's exit status once it has ended, else nil.
    var exitStatus: Int32? {
        guard let text = try? String(contentsOf: status, encoding: .utf8), text.hasSuffix("\n") else { return nil }
        return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func waitForExit() async throws -> Int32 {
        try await waitUntil("badge to end\n\(self.screenText)",
                            timeout: .seconds(120), every: .milliseconds(50)) { self.exitStatus != nil }
        return exitStatus!
    }
}

@Suite(.threadsOfTheirOwn, .serialized)
struct TmuxChooseTests {
    static let prompt = "Run a marathon"
    static let keysLine = "commit that one"

    /// Candidate `k` of `--choose count --seed seed`, as `--pick` writes it: its image data.
    static func picked(_ k: Int, of count: Int, seed: Int, in s: Sandbox) async throws -> Data {
        let file = s.root.appendingPathComponent("pick-\(k)-\(seed).png")
        let result = try await s.run(["generate", "--choose", "\(count)", "--pick", "\(k)", "--seed", "\(seed)", "--size", "64",
                                      "--output", file.path, prompt])
        #expect(result.status == 0, "\(result.stderr)")
        return try ChooseTests.imageData(try Data(contentsOf: file))
    }

    static func storedImage(_ s: Sandbox) throws -> Data {
        try ChooseTests.imageData(try Data(contentsOf: s.store.appendingPathComponent("badge.png")))
    }

    @Test func symbolArtGridAndTheKeyCommitsThatCandidate() async throws {
        let s = try Sandbox()
        let pane = try TmuxPane(s, ["generate", "--choose", "4", "--seed", "7", "--size", "64", Self.prompt], term: "xterm")
        defer { pane.close() }
        try await pane.waitFor(Self.keysLine)
        let screen = try pane.screen()
        #expect(screen.contains("Choose your badge"), "\(screen)")
        #expect(screen.contains(Self.prompt), "\(screen)")
        for number in 1...4 { #expect(screen.contains(" \(number)  "), "no number \(number) under a picture:\n\(screen)") }
        // Symbol art: block and border characters, and no picture protocol's escapes.
        #expect(screen.unicodeScalars.contains { (0x2580...0x259F).contains($0.value) }, "no symbol art:\n\(screen)")
        #expect(!pane.output.contains("\u{1B}_G") && !pane.output.contains("\u{1B}P"), "a picture protocol on a plain xterm")
        try pane.send("2")
        #expect(try await pane.waitForExit() == 0, "exit status \(pane.exitStatus.map(String.init) ?? "none")\n\(pane.screenText)")
        #expect(try pane.screen().contains("Committed your Promise Badge."))
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        #expect(metadata.seed == 8)
        #expect(try pane.screen().contains(metadata.id), "the id is printed")
        let expected = try await Self.picked(2, of: 4, seed: 7, in: s)
        #expect(try Self.storedImage(s) == expected)
    }

    /// A cancel the person chose is not an error: "Nothing was committed.", and 130 for
    /// Esc and Ctrl-C (as fzf), 1 for q.
    @Test(arguments: [("q", Int32(1)), ("Escape", 130), ("C-c", 130)])
    func cancellingCommitsNothing(key: String, status: Int32) async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "--seed", "1", "An old promise"]).status == 0)
        let old = try #require(s.badge)
        let pane = try TmuxPane(s, ["generate", "--choose", "4", "--size", "64", Self.prompt], term: "xterm")
        defer { pane.close() }
        try await pane.waitFor(Self.keysLine)
        try pane.send(key)
        #expect(try await pane.waitForExit() == status, "exit status \(pane.exitStatus.map(String.init) ?? "none")\n\(pane.screenText)")
        let screen = try pane.screen()
        #expect(screen.contains("Nothing was committed."), "\(screen)")
        #expect(!screen.contains("error"), "a cancel is not an error:\n\(screen)")
        #expect(s.badge == old, "the old badge is byte-identical")
    }

    /// The cancel's exit statuses are in --help.
    @Test func generateHelpSaysWhatACancelExitsWith() async throws {
        let help = try await Sandbox().run(["generate", "--help"]).stdout
        #expect(help.contains("q cancels (exit status 1)") && help.contains("Ctrl-C cancel (exit status 130"), "\(help)")
        #expect(help.contains("Nothing was committed."), "\(help)")
    }

    /// A key that means nothing gets a word in the keys' line, and the picker still waits.
    @Test func aKeyThatMeansNothingIsSaidSo() async throws {
        let s = try Sandbox()
        let pane = try TmuxPane(s, ["generate", "--choose", "4", "--size", "64", Self.prompt], term: "xterm")
        defer { pane.close() }
        try await pane.waitFor(Self.keysLine)
        try pane.send("7")
        try await pane.waitFor("7: there are 4")
        try pane.send("x")
        try await pane.waitFor("x: not a key here")
        let keys = try #require(try pane.screen().split(separator: "\n").last { $0.contains(Self.keysLine) })
        #expect(keys.contains("x: not a key here") && !keys.contains("7: there are"), "the word is in the keys' line: \(keys)")
        #expect(pane.exitStatus == nil && s.badge == nil)
        try pane.send("q")
        #expect(try await pane.waitForExit() == 1, "exit status \(pane.exitStatus.map(String.init) ?? "none")\n\(pane.screenText)")
    }

    /// A plain 256-colour tmux at 80×24 with six candidates: symbol art cannot show a
    /// caption, so each is printed under its number, and the tiles are fewer to a row
    /// and at least 20 cells wide.
    @Test func smallSymbolTilesPrintTheirCaptionsAsText() async throws {
        let s = try Sandbox()
        let pane = try TmuxPane(s, ["generate", "--choose", "6", "--seed", "3", "--size", "256", Self.prompt], term: "tmux-256color",
                                columns: 80, rows: 24)
        defer { pane.close() }
        try await pane.waitFor(Self.keysLine)
        let lines = try pane.screen().components(separatedBy: "\n")
        // Each number's line is followed by the captions' line.
        let numbers = lines.indices.filter { lines[$0].range(of: #"^ +1  "#, options: .regularExpression) != nil
            || lines[$0].range(of: #"^ +4  "#, options: .regularExpression) != nil }
        #expect(numbers.count == 2, "\(lines.joined(separator: "\n"))")
        for index in numbers {
            let captions = lines[index + 1]
            #expect(captions.components(separatedBy: "RUN A MARATHON").count - 1 == 3, "three captions under \(lines[index]):\n\(captions)")
            // Three to a row, each tile at least 20 cells: the next number is 20 or more columns on.
            let starts = lines[index].matches(of: #/\d  [a-z]+/#).map { lines[index].distance(from: lines[index].startIndex, to: $0.range.lowerBound) }
            #expect(starts.count == 3 && zip(starts, starts.dropFirst()).allSatisfy { $1 - $0 >= 20 }, "\(lines[index])")
        }
        try pane.send("q")
        #expect(try await pane.waitForExit() == 1, "exit status \(pane.exitStatus.map(String.init) ?? "none")\n\(pane.screenText)")
    }

    @Test func kittyTerminalGetsKittyGraphics() async throws {
        let s = try Sandbox()
        let pane = try TmuxPane(s, ["generate", "--choose", "3", "--seed", "3", "--size", "64", Self.prompt], term: "xterm-kitty")
        defer { pane.close() }
        try await pane.waitFor(Self.keysLine)
        let output = pane.output
        // The kitty graphics protocol: an APC "G" command that transmits and shows an image.
        #expect(output.components(separatedBy: "\u{1B}_Ga=T").count - 1 == 3, "three kitty images, not: \(output.prefix(400).debugDescription)")
        try pane.send("3")
        #expect(try await pane.waitForExit() == 0, "exit status \(pane.exitStatus.map(String.init) ?? "none")\n\(pane.screenText)")
        let expected = try await Self.picked(3, of: 3, seed: 3, in: s)
        #expect(try Self.storedImage(s) == expected)
    }

    @Test func rDrawsANewSetAndSSavesAllWithoutCommitting() async throws {
        let s = try Sandbox()
        let pane = try TmuxPane(s, ["generate", "--choose", "2", "--seed", "20", "--size", "64", Self.prompt], term: "xterm-256color")
        defer { pane.close() }
        try await pane.waitFor(Self.keysLine)
        try pane.send("s")
        try await pane.waitFor("Saved 2")
        let saved = ["badge-candidate-1-seed20.png", "badge-candidate-2-seed21.png"].map { s.root.appendingPathComponent($0) }
        for (index, file) in saved.enumerated() {
            #expect(try BadgeMetadata.read(from: file)?.seed == UInt64(20 + index))
        }
        #expect(s.badge == nil, "saving commits nothing")
        try pane.send("r")
        // The next set: seeds 22 and 23.
        try await pane.waitFor("set 2")
        try pane.send("s")
        try await pane.waitFor("badge-candidate-1-seed22.png")
        try pane.send("1")
        #expect(try await pane.waitForExit() == 0, "exit status \(pane.exitStatus.map(String.init) ?? "none")\n\(pane.screenText)")
        #expect(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png"))?.seed == 22)
        #expect(try Self.storedImage(s) == ChooseTests.imageData(try Data(contentsOf: s.root.appendingPathComponent("badge-candidate-1-seed22.png"))))
    }

    @Test func aNarrowTerminalShowsOneToARow() async throws {
        let s = try Sandbox()
        let pane = try TmuxPane(s, ["generate", "--choose", "3", "--seed", "5", "--size", "64", Self.prompt], term: "xterm", columns: 20, rows: 12)
        defer { pane.close() }
        try await pane.waitFor(Self.keysLine)
        let lines = try pane.screen().components(separatedBy: "\n")
        for number in 1...3 {
            #expect(lines.contains { $0.contains(" \(number)  ") && !$0.contains(" \(number % 3 + 1)  ") }, "candidate \(number) not alone on its line:\n\(lines.joined(separator: "\n"))")
        }
        try pane.send("3")
        #expect(try await pane.waitForExit() == 0, "exit status \(pane.exitStatus.map(String.init) ?? "none")\n\(pane.screenText)")
        #expect(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png"))?.seed == 7)
    }

    /// A backend that fails for even seeds: those candidates show as failed, the others can be picked.
    @Test func aFailedCandidateIsShownAndTheOthersCanBePicked() async throws {
        let s = try Sandbox()
        let plugin = s.root.appendingPathComponent("odd-seeds.sh")
        let picture = Sandbox.repository.appendingPathComponent("Tests/Data/pngsuite/basn2c08.png").path
        try Data("""
            #!/bin/sh
            [ "${BADGE_KIND:-}" = availability ] && { echo '{"protocol": 1, "available": true}'; exit 0; }
            cat > /dev/null
            case "$BADGE_SEED" in *[02468]) echo '{"protocol": 1, "ok": false, "error": "no luck with an even seed"}'; exit 0;; esac
            cp '\(picture)' "$BADGE_OUTPUT"
            echo '{"protocol": 1, "ok": true}'

            """.utf8).write(to: plugin)
        chmod(plugin.path, 0o755)
        let config = s.root.appendingPathComponent("config.json")
        try Data(#"{"backends": {"odd": {"type": "exec", "command": ["\#(plugin.path)"]}}}"#.utf8).write(to: config)
        let environment = ["BADGE_CONFIG": config.path]
        let pane = try TmuxPane(s, ["generate", "--backend", "odd", "--choose", "4", "--seed", "10", "--size", "64", Self.prompt],
                                term: "xterm", extraEnvironment: environment)
        defer { pane.close() }
        try await pane.waitFor(Self.keysLine)
        let screen = try pane.screen()
        let failed = screen.components(separatedBy: "✗ failed").count - 1
        #expect(failed == 2, "\(failed) shown as failed")
        #expect(screen.contains("failed: no"), "the failure does not say why")
        try pane.send("1")
        try await pane.waitFor("Candidate 1 failed")
        #expect(pane.exitStatus == nil && s.badge == nil)
        try pane.send("2")
        #expect(try await pane.waitForExit() == 0, "exit status \(pane.exitStatus.map(String.init) ?? "none")\n\(pane.screenText)")
        #expect(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png"))?.seed == 11)
        // --pick names the failure and the ones that were made.
        let result = try await s.run(["generate", "--backend", "odd", "--choose", "4", "--pick", "3", "--seed", "10", "--size", "64",
                                      Self.prompt], extraEnvironment: environment)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("candidate 3 of 4 failed: the plugin odd-seeds.sh failed: no luck with an even seed"), "\(result.stderr)")
        #expect(result.stderr.contains("candidates 2, 4 were made"), "\(result.stderr)")
    }
}
