import BadgeKit
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `FileTrust`: the rules for a file badge takes orders from, one by one.
@Suite(.threadsOfTheirOwn)
final class FileTrustTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("badge-trust-\(UUID().uuidString)")

    init() throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        #expect(chmod(root.path, 0o700) == 0)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    func file(_ name: String, mode: mode_t = 0o600) throws -> String {
        let url = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: url)
        #expect(chmod(url.path, mode) == 0)
        return url.path
    }

    @Test func aFileOfMineInFoldersOfMineIsTrusted() throws {
        let path = try file("mine/config.json")
        #expect(FileTrust.distrust(of: path) == nil)
        // Relative, and through "..": the same file.
        #expect(FileTrust.distrust(of: root.path + "/mine/../mine/config.json") == nil)
        // What does not exist is the reader's to report.
        #expect(FileTrust.distrust(of: root.path + "/none.json") == nil)
    }

    @Test func writeBitsForOthersAreRefused() throws {
        #expect(FileTrust.distrust(of: try file("a.json", mode: 0o602)) == .writable(0o602))
        let folder = root.appendingPathComponent("open")
        let path = try file("open/config.json")
        #expect(chmod(folder.path, 0o757) == 0)
        #expect(FileTrust.distrust(of: path) == .folderWritable(folder.path, 0o757))
        // Sticky, as /tmp is: no one may replace what is mine there.
        #expect(chmod(folder.path, 0o1777) == 0)
        #expect(FileTrust.distrust(of: path) == nil)
    }

    /// The group's write bit counts against a file unless the group is the
    /// user's own (named as the user, with no other member).
    @Test(.enabled(if: geteuid() == 0, "giving a file to another group (chown) needs root"))
    func aGroupOfOthersMayNotWrite() throws {
        let path = try file("grouped.json", mode: 0o660)
        #expect(chown(path, 0, 65534) == 0)
        #expect(!FileTrust.isPrivateGroup(65534))
        #expect(FileTrust.distrust(of: path) == .writable(0o660))
    }

    @Test(.enabled(if: geteuid() == 0, "giving files to another user (chown) needs root"))
    func anotherUsersFileFolderOrLinkIsRefused() throws {
        let theirs = try file("theirs.json")
        #expect(chown(theirs, 65534, 65534) == 0)
        #expect(FileTrust.distrust(of: theirs) == .owner(65534))

        let folder = root.appendingPathComponent("their-folder")
        let inside = try file("their-folder/config.json")
        #expect(chown(folder.path, 65534, 65534) == 0)
        #expect(FileTrust.distrust(of: inside) == .folderOwner(folder.path, 65534))

        // A link another user made in a sticky folder, to a file of mine.
        let shared = root.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        #expect(chmod(shared.path, 0o1777) == 0)
        let mine = try file("mine.json")
        let link = shared.appendingPathComponent("config.json").path
        #expect(symlink(mine, link) == 0 && lchown(link, 65534, 65534) == 0)
        #expect(FileTrust.distrust(of: link) == .linkOwner(link, 65534))
        #expect(FileTrust.distrust(of: mine) == nil)
    }

    /// The folders as the links resolve count too: a link of mine to a file
    /// in a folder others may write is refused at that folder.
    @Test func theFoldersALinkLeadsToAreChecked() throws {
        let open = root.appendingPathComponent("elsewhere")
        let target = try file("elsewhere/config.json")
        #expect(chmod(open.path, 0o777) == 0)
        let link = root.appendingPathComponent("config.json").path
        #expect(symlink(target, link) == 0)
        #expect(FileTrust.distrust(of: link) == .folderWritable(open.path, 0o777))
        #expect(chmod(open.path, 0o755) == 0)
        #expect(FileTrust.distrust(of: link) == nil)
    }

    /// `..` after a link is the link's target's parent, as the kernel takes it:
    /// the folder checked is the one the file is really in.
    @Test func dotDotAfterALinkIsTheTargetsParent() throws {
        let open = root.appendingPathComponent("team")
        _ = try file("team/inner/placeholder")
        let config = try file("team/config.json")
        #expect(chmod(open.path, 0o777) == 0)
        let link = root.appendingPathComponent("badge").path
        #expect(symlink(open.appendingPathComponent("inner").path, link) == 0)
        // Named as the path names it (".../badge/.."), the folder is team, 0777.
        guard case let .folderWritable(folder, mode) = FileTrust.distrust(of: link + "/../config.json") else {
            Issue.record("the folder link/.. leads to is not checked")
            return
        }
        #expect(mode == 0o777 && realpath(folder, nil).map { String(cString: $0) } == open.path, "\(folder)")
        #expect(FileTrust.distrust(of: config) == .folderWritable(open.path, 0o777))
    }

    /// Read from a descriptor, then the path no longer leads to that file: not vouched for.
    @Test func aFileSwappedAfterItWasReadIsNotTrusted() throws {
        let path = try file("swapped.json")
        // Held open as a reader holds it, so its inode number is not given to the file made next.
        let read = try RegularFile(path)
        #expect(FileTrust.distrust(of: path, opened: read.status) == nil)
        #expect(unlink(path) == 0)
        #expect(FileTrust.distrust(of: path, opened: read.status) == .replaced)
        _ = try file("other.json")
        #expect(rename(root.appendingPathComponent("other.json").path, path) == 0)
        #expect(FileTrust.distrust(of: path, opened: read.status) == .replaced)
        let error = #expect(throws: BadgeError.self) { try FileTrust.check(path, reading: read, what: "configuration file", code: .config) }
        #expect(error?.code == .config && error?.message.hasPrefix("the configuration file was replaced, moved or removed while badge read it") == true)
    }

    @Test func theErrorSaysWhoCouldChangeItAndWhatFixesIt() throws {
        let path = try file("b.json", mode: 0o666)
        do {
            try FileTrust.check(path, what: "configuration file", code: .config)
            Issue.record("a file every user can write must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .config && error.path == path)
            #expect(error.message == "the configuration file can be written by every user (mode 0666), who could change what badge does as you")
            #expect(error.hint == "make it yours alone to write: chmod go-w \(path)")
        }
    }
}
