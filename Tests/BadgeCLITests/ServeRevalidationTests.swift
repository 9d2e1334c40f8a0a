import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// `badge serve`'s answers to `If-None-Match`, through the built binary: a
/// cache that holds the current tag gets a 304 and no body; one that holds
/// any other tag (an older badge's, one it made up) gets a 200 with the body,
/// as if it had sent none. On every route that sends an ETag.
@Suite(.threadsOfTheirOwn) struct ServeRevalidationTests {
    /// The tags a cache may send for `etag`: which must be a 304, which a 200.
    static func tags(current etag: String, stale: String) -> [(sent: String, notModified: Bool)] {
        [
            (etag, true),
            ("W/" + etag, true),
            ("\"some-other-badge\", " + etag, true),
            ("*", true),
            (stale, false),
            ("\"some-other-badge\"", false),
            ("\"some-other-badge\", " + stale, false),
            // The id without its quotes is not the tag.
            (String(etag.dropFirst().dropLast()), false),
        ]
    }

    @Test(arguments: ["/v1/badge.png", "/v1/badge.svg", "/v1/badge.json"])
    func theRenderAPIAnswersATagOtherThanItsOwnWithTheBody(path: String) async throws {
        let s = try Sandbox()
        let served = try await Served.start(s)
        defer { served.end() }
        let query = path + "?promise=Run+a+marathon&style=medal&seed=7&size=64"
        let first = try await served.request("GET", query)
        #expect(first.status == 200, "\(first.text)")
        let etag = try #require(first.header("etag"))
        // Another seed is another badge: the tag a cache kept from it is stale here.
        let other = try await served.request("GET", path + "?promise=Run+a+marathon&style=medal&seed=8&size=64")
        let stale = try #require(other.header("etag"))
        #expect(stale != etag)
        for (sent, notModified) in Self.tags(current: etag, stale: stale) {
            let answer = try await served.request("GET", query, headers: ["If-None-Match": sent])
            if notModified {
                #expect(answer.status == 304 && answer.body.isEmpty, "\(path), If-None-Match \(sent): \(answer.status) \(answer.body.count) bytes")
            } else {
                #expect(answer.status == 200 && answer.body == first.body, "\(path), If-None-Match \(sent): \(answer.status) \(answer.body.count) bytes")
                #expect(answer.header("content-type") == first.header("content-type"), "\(path), If-None-Match \(sent)")
            }
            #expect(answer.header("etag") == etag, "\(path), If-None-Match \(sent)")
            #expect(answer.header("cache-control") == "public, max-age=31536000, immutable", "\(path), If-None-Match \(sent)")
        }
    }

    /// The studio's current badge: revalidated by its id, so the tag of the
    /// badge it replaced gets the new badge's bytes.
    @Test func theStudioAnswersTheReplacedBadgesTagWithTheCurrentBadge() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "--seed", "1", "The old one"]).status == 0)
        let old = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        #expect(try await s.run(["generate", "--size", "64", "--seed", "2", "The new one"]).status == 0)
        let current = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        let bytes = try #require(s.badge)
        let served = try await Served.start(s)
        defer { served.end() }
        let first = try await served.studio("GET", "/api/badge.png")
        #expect(first.status == 200 && first.body == bytes, "\(first.status) \(first.text.prefix(200))")
        let etag = try #require(first.header("etag"))
        #expect(etag == "\"\(current.id)\"")
        for (sent, notModified) in Self.tags(current: etag, stale: "\"\(old.id)\"") {
            let answer = try await served.studio("GET", "/api/badge.png", headers: ["If-None-Match": sent])
            if notModified {
                #expect(answer.status == 304 && answer.body.isEmpty, "If-None-Match \(sent): \(answer.status) \(answer.body.count) bytes")
            } else {
                #expect(answer.status == 200 && answer.body == bytes, "If-None-Match \(sent): \(answer.status) \(answer.body.count) bytes")
                #expect(answer.header("content-type") == "image/png", "If-None-Match \(sent)")
            }
            #expect(answer.header("etag") == etag, "If-None-Match \(sent)")
            #expect(answer.header("cache-control") == "private, no-cache", "If-None-Match \(sent)")
        }
    }
}
