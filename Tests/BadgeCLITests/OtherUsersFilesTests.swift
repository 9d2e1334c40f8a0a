import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue #58, files other users own: what badge takes orders from (a
/// configuration, its folder, a batch manifest, an exec backend's program
/// and script) is refused when another user owns it or may write it, with
/// what fixes it; what badge writes (`--output`, `--contact-sheet`) never
/// goes through a link or FIFO that another user planted in a sticky folder.
/// In every case the plugin never ran and the store is as it was.
@Suite(.threadsOfTheirOwn)
struct OtherUsersFilesTests {
    static let nobody: uid_t = 65534

    /// A config whose exec backend `evil` writes a marker file, then fails.
    static func evilConfig(_ s: Sandbox, at url: URL) throws -> URL {
        let marker = s.root.appendingPathComponent("the-plugin-ran")
        let script = s.root.appendingPathComponent("evil.sh")
        try Data("#!/bin/sh\ntouch '\(marker.path)'\nexit 1\n".utf8).write(to: script)
        #expect(chmod(script.path, 0o755) == 0)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(#"{"backends": {"evil": {"type": "exec", "command": ["\#(script.path)"]}}}"#.utf8).write(to: url)
        return marker
    }

    static func firstBadge(_ s: Sandbox) async throws -> Data {
        #expect(try await s.run(["generate", "--size", "64", "the badge that stays"]).status == 0)
        return try #require(s.badge)
    }

    /// As the review found it: ~/.config/badge at 0777, so anyone could put a
    /// config.json there. It is not loaded, and the error names the folder.
    @Test func theDefaultConfigInAFolderEveryoneCanWriteIsNotRun() async throws {
        let s = try Sandbox()
        let before = try await Self.firstBadge(s)
        let folder = s.home.appendingPathComponent(".config/badge")
        let marker = try Self.evilConfig(s, at: folder.appendingPathComponent("config.json"))
        #expect(chmod(folder.path, 0o777) == 0)
        let result = try await s.run(["generate", "--backend", "evil", "--size", "64", "x"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains(": the configuration file is in \(folder.path), which every user can write to (mode 0777), who could replace it"),
                "\(result.stderr)")
        #expect(result.stderr.contains("hint: chmod go-w \(folder.path), or keep the file in a folder of your own"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker.path), "the plugin ran")
        #expect(s.badge == before)
        // The fix the hint gives is enough: the config loads (and its plugin runs, and fails).
        #expect(chmod(folder.path, 0o700) == 0)
        let fixed = try await s.run(["generate", "--backend", "evil", "--size", "64", "x"])
        #expect(FileManager.default.fileExists(atPath: marker.path), "\(fixed.stderr)")
    }

    @Test func aConfigEveryoneCanWriteIsRefused() async throws {
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("mine/config.json")
        let marker = try Self.evilConfig(s, at: config)
        #expect(chmod(config.path, 0o666) == 0)
        let result = try await s.run(["generate", "--config", config.path, "--backend", "evil", "--size", "64", "x"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains(": the configuration file can be written by every user (mode 0666), who could change what badge does as you"),
                "\(result.stderr)")
        #expect(result.stderr.contains("hint: make it yours alone to write: chmod go-w \(config.path)"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker.path))
    }

    @Test(.enabled(if: geteuid() == 0, "giving a file to another user (chown) needs root"))
    func aConfigAnotherUserOwnsIsRefused() async throws {
        let s = try Sandbox()
        let before = try await Self.firstBadge(s)
        let config = s.root.appendingPathComponent("theirs/config.json")
        let marker = try Self.evilConfig(s, at: config)
        #expect(chown(config.path, Self.nobody, gid_t(Self.nobody)) == 0)
        let result = try await s.run(["generate", "--config", config.path, "--backend", "evil", "--size", "64", "x"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains(": the configuration file belongs to another user (uid 65534), who could change what badge does as you"),
                "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker.path), "the plugin ran")
        #expect(s.badge == before)
    }

    /// The program of an exec backend, and the script an interpreter runs, that
    /// someone else could have written: the backend is unavailable, saying why.
    @Test func aPluginProgramOrScriptOthersCanWriteDoesNotRun() async throws {
        let s = try Sandbox()
        let marker = s.root.appendingPathComponent("the-plugin-ran")
        let script = s.root.appendingPathComponent("plugin.sh")
        try Data("#!/bin/sh\ntouch '\(marker.path)'\nexit 1\n".utf8).write(to: script)
        #expect(chmod(script.path, 0o777) == 0)
        let config = s.root.appendingPathComponent("config.json")
        try Data(#"{"backends": {"direct": {"type": "exec", "command": ["\#(script.path)"]}, "interpreted": {"type": "exec", "command": ["/bin/sh", "plugin.sh"]}, "through-env": {"type": "exec", "command": ["/usr/bin/env", "sh", "plugin.sh"]}}}"#.utf8)
            .write(to: config)
        for backend in ["direct", "interpreted", "through-env"] {
            let what = backend == "direct" ? "program \(script.path)" : "file \(script.path) in its command"
            let result = try await s.run(["generate", "--config", config.path, "--backend", backend, "--size", "64", "x"])
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains("the \(what) can be written by every user (mode 0777), who could change what badge does as you"),
                    "\(backend): \(result.stderr)")
            let listed = try await s.run(["backends", "--config", config.path])
            #expect(listed.stdout.contains("unavailable: the \(what) can be written by every user"), "\(listed.stdout)")
        }
        #expect(!FileManager.default.fileExists(atPath: marker.path), "the plugin ran")
        #expect(chmod(script.path, 0o755) == 0)
        _ = try await s.run(["generate", "--config", config.path, "--backend", "interpreted", "--size", "64", "x"])
        #expect(FileManager.default.fileExists(atPath: marker.path), "a script of the user's own runs")
    }

    /// A CA file (whoever writes it can add a CA of theirs and read the key on
    /// its way) and a ComfyUI workflow (what the server runs, with the key) are
    /// as trusted as the configuration that names them.
    @Test func aCAFileOrAWorkflowOthersCanWriteIsRefusedWithTheConfig() async throws {
        let s = try Sandbox()
        let ca = s.root.appendingPathComponent("ca.pem")
        try FileManager.default.copyItem(at: Sandbox.repository.appendingPathComponent("Tests/Data/tls/ca.pem"), to: ca)
        let workflow = s.root.appendingPathComponent("workflow.json")
        try FileManager.default.copyItem(at: ComfyUITests.examples.appendingPathComponent("txt2img-sd15.json"), to: workflow)
        for file in [ca, workflow] { #expect(chmod(file.path, 0o666) == 0) }
        let config = s.root.appendingPathComponent("config.json")
        try Data(#"""
            {"backends": {"tls": {"type": "http", "api": "openai", "url": "https://127.0.0.1:9/v1", "caFile": "ca.pem"},
                          "comfy": {"type": "http", "api": "comfyui", "url": "http://127.0.0.1:9", "workflow": "workflow.json", "inputs": {"prompt": "6.inputs.text"}}}}
            """#.utf8).write(to: config)
        let first = try await s.run(["config", "validate", config.path])
        #expect(first.status == 1, "\(first.stderr)")
        #expect(first.stderr.contains("the CA file \(ca.path) can be written by every user (mode 0666), who could change what badge does as you"),
                "\(first.stderr)")
        #expect(first.stderr.contains("hint: make it yours alone to write: chmod go-w \(ca.path)"), "\(first.stderr)")
        #expect(chmod(ca.path, 0o644) == 0)
        let second = try await s.run(["config", "validate", config.path])
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stderr.contains("the workflow \(workflow.path) can be written by every user (mode 0666)"), "\(second.stderr)")
        #expect(chmod(workflow.path, 0o644) == 0)
        let fixed = try await s.run(["config", "validate", config.path])
        #expect(fixed.status == 0, "\(fixed.stderr)")
    }

    /// A manifest names sources and outputs: one that others can write is refused before any job.
    @Test func aManifestOthersCanWriteIsRefused() async throws {
        let s = try Sandbox()
        let manifest = s.root.appendingPathComponent("jobs.json")
        try Data(#"[{"name": "a", "prompt": "Run", "size": 64}]"#.utf8).write(to: manifest)
        #expect(chmod(manifest.path, 0o646) == 0)
        let out = s.root.appendingPathComponent("out")
        let result = try await s.run(["batch", manifest.path, "--output", out.path])
        #expect(result.status != 0, "\(result.stderr)")
        #expect(result.stderr.contains(": the batch manifest can be written by every user (mode 0646)"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("a.png").path))
    }

    /// A 1777 folder (as /tmp is) where `nobody` planted a link to a file of
    /// the victim's (~/.ssh/authorized_keys) under the name the victim writes.
    /// badge refuses it: the file keeps its bytes and its 0600. A link of the
    /// user's own there is followed, as before.
    @Test(.enabled(if: geteuid() == 0, "planting a link as another user (lchown) needs root"))
    func aLinkAnotherUserPlantedInAStickyFolderIsNotWrittenThrough() async throws {
        let s = try Sandbox()
        let shared = s.root.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        #expect(chmod(shared.path, 0o1777) == 0)
        let victim = s.home.appendingPathComponent(".ssh/authorized_keys")
        try FileManager.default.createDirectory(at: victim.deletingLastPathComponent(), withIntermediateDirectories: true)
        let keys = Data("ssh-ed25519 AAAA... me@host\n".utf8)
        try keys.write(to: victim)
        #expect(chmod(victim.path, 0o600) == 0)
        let planted = shared.appendingPathComponent("badge.png")
        #expect(symlink(victim.path, planted.path) == 0 && lchown(planted.path, Self.nobody, gid_t(Self.nobody)) == 0)
        for arguments in [["generate", "--size", "64", "--output", planted.path, "Run"],
                          ["batch", "--contact-sheet", planted.path, "--output", s.root.appendingPathComponent("out").path, "jobs.json"]] {
            try Data(#"[{"name": "a", "prompt": "Run", "size": 64}]"#.utf8).write(to: s.root.appendingPathComponent("jobs.json"))
            let result = try await s.run(arguments.map { $0 == "jobs.json" ? s.root.appendingPathComponent("jobs.json").path : $0 })
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("is a symbolic link of another user (uid 65534) in \(shared.path), a folder others can write to; badge does not write through it"),
                    "\(arguments): \(result.stderr)")
            #expect(try Data(contentsOf: victim) == keys)
            var info = stat()
            #expect(stat(victim.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        }
        // The user's own link in the same folder leads where it says.
        let mine = shared.appendingPathComponent("mine.png")
        let target = s.root.appendingPathComponent("target.png")
        #expect(symlink(target.path, mine.path) == 0)
        let result = try await s.run(["generate", "--size", "64", "--output", mine.path, "Run"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try BadgeMetadata.read(from: target)?.prompt == "Run")
    }

    /// A FIFO another user planted there would hand them the picture and the promise.
    @Test(.enabled(if: geteuid() == 0, "planting a FIFO as another user (chown) needs root"))
    func aFIFOAnotherUserPlantedInAStickyFolderIsNotWrittenInto() async throws {
        let s = try Sandbox()
        let shared = s.root.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        #expect(chmod(shared.path, 0o1777) == 0)
        let fifo = shared.appendingPathComponent("badge.png")
        #expect(mkfifo(fifo.path, 0o666) == 0 && chown(fifo.path, Self.nobody, gid_t(Self.nobody)) == 0)
        // A reader as the attacker would have one open: what reaches it is the leak.
        let reader = open(fifo.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        #expect(reader >= 0)
        defer { close(reader) }
        let result = try await s.run(["generate", "--size", "64", "--output", fifo.path, "My secret promise"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("is a FIFO of another user (uid 65534) in \(shared.path), a folder others can write to"), "\(result.stderr)")
        var buffer = [UInt8](repeating: 0, count: 4096)
        #expect(read(reader, &buffer, buffer.count) <= 0, "the attacker's reader got bytes")
    }
}
