import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue #31: a plugin's grandchild that called setsid left the plugin's
/// process group and outlived the run. badge is its subreaper now, and kills it.
@Suite(.threadsOfTheirOwn)
struct PluginOrphanTests {
    static let fixtures = Sandbox.repository.appendingPathComponent("Tests/ExecBackendTests/Fixtures")

    @Test func aSetsidGrandchildIsGoneWhenBadgeReturns() async throws {
        let s = try Sandbox()
        let png = s.root.appendingPathComponent("plugin.png")
        try TestPNG.solid(width: 64, height: 64, rgb: (1, 2, 3)).write(to: png)
        let pidFile = s.root.appendingPathComponent("grandchild.pid")
        let config = s.root.appendingPathComponent("config.json")
        try Data(#"""
            {"backends": {"daemon": {"type": "exec", "command": ["\#(Self.fixtures.path)/setsid.sh"],
                                     "env": {"PNG_SOURCE": "\#(png.path)", "CHILD_PID_FILE": "\#(pidFile.path)"}}}}
            """#.utf8).write(to: config)
        let result = try await s.run(["generate", "--config", config.path, "--backend", "daemon", "--size", "64", "x"])
        #expect(result.status == 0, "\(result.stderr)")
        let text = try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let pid = try #require(pid_t(text), "the grandchild wrote its pid: \(text)")
        // badge has returned: the grandchild is gone (not merely a zombie waiting for init).
        let alive = kill(pid, 0) == 0
        if alive { kill(pid, SIGKILL) }
        #expect(!alive, "the setsid grandchild \(pid) outlived badge")
    }
}
