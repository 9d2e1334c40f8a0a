import BadgeKit
import BadgeTestSupport
import Foundation
import Testing

/// Where badge keeps what it keeps, by the XDG base directory rules.
@Suite(.threadsOfTheirOwn)
struct DirectoryTests {
    @Test func theCacheIsInXDGCacheHomeElseUnderHome() {
        #expect(BadgeConfig.cacheDirectory(variables: ["XDG_CACHE_HOME": "/var/cache/u", "HOME": "/home/u"]).path == "/var/cache/u/badge")
        #expect(BadgeConfig.cacheDirectory(variables: ["XDG_CACHE_HOME": "", "HOME": "/home/u"]).path == "/home/u/.cache/badge")
        #expect(BadgeConfig.cacheDirectory(variables: ["HOME": "/home/u"]).path == "/home/u/.cache/badge")
    }

    /// `makeDirectories` is `mkdir -p` that names what stopped it.
    @Test func makingFoldersNamesTheFileOnTheWay() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("badge-mkdir-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let deep = root.appendingPathComponent("a/b/c")
        try makeDirectories(deep)
        try makeDirectories(deep)
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: deep.path, isDirectory: &isFolder) && isFolder.boolValue)
        // A link to a folder on the way is followed, as mkdir -p does.
        try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("link"), withDestinationURL: root.appendingPathComponent("a"))
        try makeDirectories(root.appendingPathComponent("link/b/d"))
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("a/b/d").path))
        // ".." after a link is beside the link's target, as the kernel reads it (not beside the link).
        try FileManager.default.createDirectory(at: root.appendingPathComponent("t/inner"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("inner-link"), withDestinationURL: root.appendingPathComponent("t/inner"))
        try makeDirectories(URL(fileURLWithPath: root.path + "/inner-link/../made"))
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("t/made").path))
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("made").path))
        let file = root.appendingPathComponent("a/file")
        try Data("x".utf8).write(to: file)
        #expect(throws: MakeDirectoryFailure.notAFolder(file.path)) { try makeDirectories(file) }
        #expect(throws: MakeDirectoryFailure.notAFolder(file.path)) { try makeDirectories(file.appendingPathComponent("x/y")) }
        #expect(try Data(contentsOf: file) == Data("x".utf8))
    }
}
