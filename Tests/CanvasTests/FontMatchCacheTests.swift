import BadgeTestSupport
import Foundation
import Testing

@testable import Canvas

/// The cached fontconfig answer is used only while everything it was worked
/// out from stats the same; any change sends the lookup back to fontconfig.
@Suite(.threadsOfTheirOwn) struct FontMatchCacheTests {
    /// A cache directory, a "font" and the files and directories its answer
    /// depends on, all in a fresh temporary directory.
    final class Fixture {
        let root: URL
        let cache: FontMatchCache
        let font: String
        let config: String
        let configDirectory: String
        let userConfig: String
        var resolutions = 0

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("font-cache-\(UUID().uuidString)")
            configDirectory = root.appendingPathComponent("conf.d").path
            try FileManager.default.createDirectory(atPath: configDirectory, withIntermediateDirectories: true)
            font = root.appendingPathComponent("Font-Bold.ttf").path
            config = configDirectory + "/10-test.conf"
            userConfig = root.appendingPathComponent("user-fonts.conf").path
            try Data("font".utf8).write(to: URL(fileURLWithPath: font))
            try Data("<fontconfig/>".utf8).write(to: URL(fileURLWithPath: config))
            cache = FontMatchCache(directory: root.appendingPathComponent("cache"))
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        func lookup(_ key: String = "Sans:bold") -> String? {
            cache.file(key: key) {
                resolutions += 1
                return FontMatchCache.Match(file: font, watched: [config, configDirectory, userConfig])
            }
        }

        /// Sets a file's modification time to a moment other than now.
        func touch(_ path: String, secondsAgo: Double) throws {
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -secondsAgo)], ofItemAtPath: path)
        }
    }

    @Test func theSecondLookupIsAnsweredFromTheCache() throws {
        let f = try Fixture()
        #expect(f.lookup() == f.font)
        #expect(f.lookup() == f.font)
        #expect(f.resolutions == 1)
        #expect(f.cache.cached(key: "Sans:bold") == f.font)
    }

    @Test func aChangedConfigFileSendsItBackToFontconfig() throws {
        let f = try Fixture()
        _ = f.lookup()
        try f.touch(f.config, secondsAgo: 3600)
        #expect(f.lookup() == f.font)
        #expect(f.resolutions == 2)
        #expect(f.lookup() == f.font)
        #expect(f.resolutions == 2, "the new answer is cached in turn")
    }

    @Test func aFileAddedBesideTheConfigIsNoticed() throws {
        let f = try Fixture()
        _ = f.lookup()
        try Data("<fontconfig/>".utf8).write(to: URL(fileURLWithPath: f.configDirectory + "/99-new.conf"))
        try f.touch(f.configDirectory, secondsAgo: 7200)
        _ = f.lookup()
        #expect(f.resolutions == 2)
    }

    @Test func aUserConfigThatAppearsIsNoticed() throws {
        let f = try Fixture()
        _ = f.lookup()
        try Data("<fontconfig/>".utf8).write(to: URL(fileURLWithPath: f.userConfig))
        _ = f.lookup()
        #expect(f.resolutions == 2)
    }

    @Test func aRemovedFontIsNotServedFromTheCache() throws {
        let f = try Fixture()
        _ = f.lookup()
        try FileManager.default.removeItem(atPath: f.font)
        #expect(f.cache.cached(key: "Sans:bold") == nil)
    }

    @Test func anotherKeyIsAnotherAnswer() throws {
        let f = try Fixture()
        _ = f.lookup("Sans:bold")
        _ = f.lookup("Sans:bold\nLANG=de_DE.UTF-8")
        #expect(f.resolutions == 2)
        _ = f.lookup("Sans:bold")
        #expect(f.resolutions == 2, "each key has its own entry")
    }

    @Test(arguments: ["", "garbage", "badge font-match 2\nkey\tSans:bold\nfont\t/x\nindex\t0\n", "badge font-match 2\nkey\tSans:bold\nfont\t/x\nindex\t0\nmissing\t/nowhere\n",
                     "badge font-match 2\nkey\tSans:bold\nfont\t/x\nindex\t0\nmissing\t/nowhere\nend"])
    func aDamagedCacheFileIsIgnoredAndRewritten(_ contents: String) throws {
        let f = try Fixture()
        _ = f.lookup()
        let directory = try #require(f.cache.directory)
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first)
        try Data(contents.utf8).write(to: directory.appendingPathComponent(file))
        #expect(f.lookup() == f.font)
        #expect(f.resolutions == 2)
        #expect(f.lookup() == f.font)
        #expect(f.resolutions == 2)
    }

    @Test func withoutADirectoryEveryLookupAsksFontconfig() throws {
        var resolutions = 0
        let cache = FontMatchCache(directory: nil)
        for _ in 0..<2 {
            _ = cache.file(key: "k") {
                resolutions += 1
                return FontMatchCache.Match(file: "/f", watched: [])
            }
        }
        #expect(resolutions == 2)
    }

    @Test func noAnswerIsNotCached() throws {
        let f = try Fixture()
        #expect(f.cache.file(key: "Missing") { nil } == nil)
        #expect(f.cache.cached(key: "Missing") == nil)
    }

    /// fontconfig's real answer for the caption, cached in the test's own directory
    /// (never the user's cache), is found again without asking fontconfig.
    @Test func theRealCaptionFontIsFoundAgainFromTheCache() throws {
        let f = try Fixture()
        let key = Font.matchKey(Font.captionPattern.name)
        var asked = 0
        func lookup() -> String? {
            f.cache.file(key: key) {
                asked += 1
                return Font.fontconfigMatch(Font.captionPattern.name)
            }
        }
        let file = try #require(lookup(), "fontconfig found no caption font")
        #expect(file.hasSuffix(".ttf") || file.hasSuffix(".otf"), "\(file)")
        #expect(FileManager.default.fileExists(atPath: file))
        #expect(f.cache.cached(key: key) == file)
        #expect(lookup() == file)
        #expect(asked == 1, "fontconfig was asked again: the cache did not hold")
    }
}
