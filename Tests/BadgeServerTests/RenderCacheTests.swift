@testable import BadgeServer
import BadgeTestSupport
import Testing

/// The render API's cache of finished badges: least recently used out first,
/// bounded by what its entries cost, keys included.
@Suite(.threadsOfTheirOwn)
struct RenderCacheTests {
    /// A cache of strings that cost their length; keys of one byte.
    private static func cache(_ capacity: Int) -> RenderCache<String> {
        RenderCache(capacity: capacity, cost: { $0.utf8.count })
    }

    private static func value(_ size: Int) -> String { String(repeating: "x", count: size) }

    @Test func theLeastRecentlyUsedGoesFirst() {
        let cache = Self.cache(400)
        for key in ["a", "b", "c", "d"] { cache.insert(Self.value(99), for: key) }
        #expect(cache.usage.count == 4 && cache.usage.cost == 400)
        // "a" is read, so "b" is now the least recently used.
        #expect(cache.value(for: "a") == Self.value(99))
        cache.insert(Self.value(99), for: "e")
        #expect(cache.value(for: "b") == nil)
        #expect(cache.value(for: "a") != nil && cache.value(for: "c") != nil && cache.value(for: "d") != nil && cache.value(for: "e") != nil)
        #expect(cache.usage.count == 4 && cache.usage.cost == 400)
    }

    @Test func aLargeValueEvictsAsManyAsItNeeds() {
        let cache = Self.cache(400)
        for key in ["a", "b", "c", "d"] { cache.insert(Self.value(49), for: key) }
        cache.insert(Self.value(99), for: "e")
        cache.insert(Self.value(99), for: "f")
        cache.insert(Self.value(99), for: "g")
        // 4 × 50 + 3 × 100 = 500 > 400: the two oldest go, "a" and "b".
        #expect(cache.value(for: "a") == nil && cache.value(for: "b") == nil)
        #expect(cache.value(for: "c") != nil)
        #expect(cache.usage.count == 5 && cache.usage.cost == 400)
    }

    @Test func aKeyAddedAgainIsReplacedAndCountedOnce() {
        let cache = Self.cache(400)
        cache.insert(Self.value(9), for: "a")
        cache.insert(Self.value(49), for: "b")
        cache.insert(Self.value(19), for: "a")
        #expect(cache.value(for: "a") == Self.value(19))
        #expect(cache.usage.count == 2 && cache.usage.cost == 70)
        // "a" was refreshed by the replacement, so "b" is the oldest: 70 + 300 + 50 = 420 > 400, and it goes alone.
        cache.insert(Self.value(99), for: "c")
        cache.insert(Self.value(99), for: "d")
        cache.insert(Self.value(99), for: "e")
        cache.insert(Self.value(49), for: "f")
        #expect(cache.value(for: "b") == nil && cache.value(for: "a") != nil)
        #expect(cache.usage.count == 5 && cache.usage.cost == 370)
    }

    @Test func aValueCostingMoreThanAQuarterIsNotKept() {
        let cache = Self.cache(400)
        cache.insert(Self.value(99), for: "a")
        cache.insert(Self.value(100), for: "b")
        #expect(cache.value(for: "b") == nil)
        #expect(cache.value(for: "a") != nil)
        #expect(cache.usage.count == 1 && cache.usage.cost == 100)
    }

    /// Thousands of entries through a small cache: its slots are reused, and
    /// what it holds is exactly the most recent entries that fit.
    @Test func manyEntriesKeepTheNewestThatFit() {
        let cache = Self.cache(1000)
        for k in 0..<5000 { cache.insert(Self.value(90 + k % 10), for: String(format: "%05d", k)) }
        let usage = cache.usage
        #expect(usage.cost <= 1000)
        var expected = 0, cost = 0, k = 4999
        while k >= 0, cost + 95 + k % 10 <= 1000 {
            cost += 95 + k % 10
            expected += 1
            k -= 1
        }
        #expect(usage.count == expected && usage.cost == cost)
        for k in (5000 - expected)..<5000 { #expect(cache.value(for: String(format: "%05d", k)) != nil) }
        #expect(cache.value(for: String(format: "%05d", 4999 - expected)) == nil)
    }
}
