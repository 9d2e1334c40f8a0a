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
}
