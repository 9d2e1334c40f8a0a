import BadgeKit
import BadgeTestSupport
import Foundation
import Testing

/// A run killed with SIGKILL leaves its workspace in $TMPDIR; the next run
/// removes it, and nothing else that is there.
@Suite(.threadsOfTheirOwn)
struct WorkspaceSweepTests {
    /// The pid of a process that has ended and been reaped.
    private static func deadPID() throws -> Int32 {
        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        #expect(child.waitUntilExit(orKillAfter: .seconds(60)))
        return child.processIdentifier
    }

    @Test func aDeadRunsWorkspaceGoesAndEverythingElseStays() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("badge-sweep-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let dead = try Self.deadPID()
        func make(_ name: String) throws -> String {
            let path = root + "/" + name
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            try Data("x".utf8).write(to: URL(fileURLWithPath: path + "/image.png"))
            return path
        }
        let stale = try make("badge-work-\(dead)-aB3dE9")
        let live = try make("badge-work-\(getppid())-Zz9Yy8")
        let own = try make("badge-work-\(getpid())-Qq1Ww2")
        let unrelated = try make("badge-workshop-\(dead)")
        let noPID = try make("badge-work-abc-Xx1Xx1")
        // A symbolic link with a stale name, and a file with one: neither is a workspace.
        let target = try make("kept")
        let link = root + "/badge-work-\(dead)-link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let file = root + "/badge-work-\(dead)-file"
        try Data("keep".utf8).write(to: URL(fileURLWithPath: file))
        // Another user's directory with a stale name (only root can make one).
        var others: String?
        if geteuid() == 0 {
            let path = try make("badge-work-\(dead)-nobody")
            #expect(chown(path, 65534, 65534) == 0, "chown: \(String(cString: strerror(errno)))")
            others = path
        }

        Pipeline.sweepStaleWorkspaces(in: root)

        let fm = FileManager.default
        #expect(!fm.fileExists(atPath: stale), "a dead run's workspace is still there")
        for kept in [live, own, unrelated, noPID, target, target + "/image.png", file] + (others.map { [$0] } ?? []) {
            #expect(fm.fileExists(atPath: kept), "\(kept) was removed")
        }
        let linkTarget = try? fm.destinationOfSymbolicLink(atPath: link)
        #expect(linkTarget == target, "the symbolic link was removed or changed")
        if others == nil { print("WorkspaceSweepTests: not root, so another user's directory was not tried") }
    }

    /// Workspaces live in `badge-<uid>` under $TMPDIR, made private; one
    /// that is not this user's alone is not used.
    @Test func theWorkspaceRootIsThisUsersAlone() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("badge-root-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: base) }
        func mode(_ path: String) -> mode_t {
            var info = stat()
            return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
        }

        // Made when missing, with mode 0700, and used again as it is.
        let made = try #require(Pipeline.privateDirectory(in: base, named: "badge-1"))
        #expect(made == base + "/badge-1")
        #expect(mode(made) == 0o700)
        #expect(Pipeline.privateDirectory(in: base + "/", named: "badge-1") == made)

        // Open to the group, a symbolic link to a private directory, a file: not used, and left as they are.
        try FileManager.default.createDirectory(atPath: base + "/open", withIntermediateDirectories: false)
        #expect(chmod(base + "/open", 0o750) == 0)
        #expect(Pipeline.privateDirectory(in: base, named: "open") == nil)
        #expect(mode(base + "/open") == 0o750)
        try FileManager.default.createSymbolicLink(atPath: base + "/link", withDestinationPath: made)
        #expect(Pipeline.privateDirectory(in: base, named: "link") == nil)
        try Data("x".utf8).write(to: URL(fileURLWithPath: base + "/file"))
        #expect(Pipeline.privateDirectory(in: base, named: "file") == nil)
        // Somewhere it cannot be made.
        #expect(Pipeline.privateDirectory(in: base + "/missing", named: "badge-1") == nil)
        // Another user's (only root can make one).
        if geteuid() == 0 {
            try FileManager.default.createDirectory(atPath: base + "/theirs", withIntermediateDirectories: false)
            #expect(chmod(base + "/theirs", 0o700) == 0 && chown(base + "/theirs", 65534, 65534) == 0)
            #expect(Pipeline.privateDirectory(in: base, named: "theirs") == nil)
        }
    }

    @Test func aMissingTemporaryDirectoryIsNotAnError() {
        // Nothing to read: the sweep returns, and nothing is made.
        let missing = NSTemporaryDirectory() + "/badge-no-such-dir-\(getpid())"
        Pipeline.sweepStaleWorkspaces(in: missing)
        #expect(!FileManager.default.fileExists(atPath: missing))
    }
}
