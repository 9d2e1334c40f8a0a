import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

private func mode(_ url: URL) throws -> mode_t {
    var info = stat()
    guard lstat(url.path, &info) == 0 else { throw SystemCallError("lstat", errno) }
    return info.st_mode & 0o7777
}

/// Issue #31: history/ is checked like the store, an older store is made
/// private by its first commit, and two foreign badges replaced in one second
/// are both kept.
@Suite(.threadsOfTheirOwn)
struct StoreEdgeTests {
    @Test func aHistoryOthersCanWriteToIsRefusedLikeTheStore() throws {
        let f = StoreFixture()
        let store = f.store()
        let first = try f.commit(1)
        chmod(store.historyURL.path, 0o777)
        let (second, metadata) = try StoreFixture.badge(2)
        for attempt in [{ _ = try store.commit(.stamping(metadata, into: second)) }, { _ = try store.history() }] {
            do {
                try attempt()
                Issue.record("a world-writable history must be refused")
            } catch let error as BadgeError {
                #expect(error.code == .store)
                #expect(error.message == "the store's history directory can be written by every user, who could plant files in it", "\(error)")
                #expect(error.path == store.historyURL.path)
                #expect(error.hint == "make it yours alone: chmod 700 \(store.historyURL.path)")
            }
        }
        #expect(try Data(contentsOf: store.badgeURL) == first, "the current badge is unchanged")
        chmod(store.historyURL.path, 0o700)
        try store.commit(.stamping(metadata, into: second))
        #expect(try store.current()?.metadata.prompt == "promise 2")
    }

    @Test(.enabled(if: geteuid() == 0, "giving history/ to another user (chown) needs root"))
    func aHistoryAnotherUserOwnsIsRefused() throws {
        let f = StoreFixture()
        let store = f.store()
        let first = try f.commit(1)
        #expect(chown(store.historyURL.path, 65534, 65534) == 0)
        let (second, metadata) = try StoreFixture.badge(2)
        do {
            try store.commit(.stamping(metadata, into: second))
            Issue.record("another user's history must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .store)
            #expect(error.message == "the store's history directory belongs to another user (uid 65534), who could plant files in it", "\(error)")
            #expect(error.path == store.historyURL.path)
        }
        #expect(try Data(contentsOf: store.badgeURL) == first)
    }

    /// A store an earlier badge made (0755, files 0644) becomes 0700/0600 on
    /// the next commit, which says what it changed.
    @Test func anOlderStoreIsTightenedOnTheFirstCommitAndSaysSo() throws {
        let f = StoreFixture()
        let store = f.store()
        try f.commit(1)
        try f.commit(2)
        let entry = try #require(try store.history().first).url
        let lock = store.directory.appendingPathComponent(BadgeStore.lockFileName)
        for (url, old) in [(store.directory, 0o755), (store.historyURL, 0o755), (store.badgeURL, 0o644), (entry, 0o644), (lock, 0o644)] {
            #expect(chmod(url.path, mode_t(old)) == 0)
        }
        // Reading changes nothing.
        _ = try store.current()
        #expect(try mode(store.badgeURL) == 0o644)

        let (png, metadata) = try StoreFixture.badge(3)
        let stored = try store.commit(.stamping(metadata, into: png))
        #expect(Set(stored.tightened.map(\.path)) == Set([store.directory.path, store.historyURL.path, store.badgeURL.path, entry.path, lock.path]),
                "\(stored.tightened)")
        #expect(try mode(store.directory) == 0o700)
        #expect(try mode(store.historyURL) == 0o700)
        #expect(try mode(lock) == 0o600)
        for file in try FileManager.default.contentsOfDirectory(at: store.historyURL, includingPropertiesForKeys: nil) {
            #expect(try mode(file) == 0o600, "\(file.path)")
        }
        #expect(try mode(store.badgeURL) == 0o600)
        let message = BadgeStore.tightenedMessage(stored.tightened)
        #expect(message == "the store was open to other users (\(store.directory.path) was 0755); it is now yours alone (0700, files 0600): 5 paths changed",
                "\(message)")

        let (next, nextMetadata) = try StoreFixture.badge(4)
        #expect(try store.commit(.stamping(nextMetadata, into: next)).tightened.isEmpty, "a private store is left as it is")
    }

    /// An empty folder made with mkdir (0755) and given as the store: the warning
    /// says what was found, and claims no earlier badge made it so.
    @Test func aFolderMadeWithMkdirIsTightenedWithWhatItWas() throws {
        let f = StoreFixture()
        let store = f.store()
        #expect(mkdir(store.directory.path, 0o755) == 0 && chmod(store.directory.path, 0o755) == 0)
        let (png, metadata) = try StoreFixture.badge(1)
        let stored = try store.commit(.stamping(metadata, into: png))
        #expect(stored.tightened == [TightenedPath(path: store.directory.path, mode: 0o755)], "\(stored.tightened)")
        #expect(BadgeStore.tightenedMessage(stored.tightened)
                == "the store was open to other users (\(store.directory.path) was 0755); it is now yours alone (0700, files 0600): 1 path changed")
        #expect(try mode(store.directory) == 0o700)
    }

    /// Two foreign files at badge.png, each replaced within the same second,
    /// used to share `unknown-<second>.png`: the second was lost.
    @Test func twoForeignBadgesReplacedInOneSecondAreBothKept() throws {
        let f = StoreFixture()
        let store = f.store()
        try f.commit(1)
        var kept: [Data] = []
        // Retry in the rare case the second ticks over between the two commits.
        for _ in 0..<5 {
            try? FileManager.default.removeItem(at: store.historyURL)
            try f.commit(1)
            kept = []
            let before = Int(Date().timeIntervalSince1970)
            for k in 1...2 {
                let foreign = TestPNG.solid(width: 4, height: 4, rgb: (UInt8(k), 2, 3))
                try FileManager.default.removeItem(at: store.badgeURL)
                try foreign.write(to: store.badgeURL)
                kept.append(foreign)
                try f.commit(10 + k)
            }
            if Int(Date().timeIntervalSince1970) == before { break }
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: store.historyURL.path).filter { $0.hasPrefix("unknown-") }.sorted()
        #expect(names.count == 2, "\(names)")
        let contents = try Set(names.map { try Data(contentsOf: store.historyURL.appendingPathComponent($0)) })
        #expect(contents == Set(kept), "both foreign files are kept, byte for byte")
        #expect(names.contains { $0.hasSuffix("-2.png") }, "\(names)")
    }

    /// The second foreign entry counts in pruning, newest kept.
    @Test func foreignEntriesOfOneSecondArePrunedInOrder() throws {
        let f = StoreFixture()
        let store = f.store(historyLimit: 2)
        try f.commit(1, to: store)
        for name in ["unknown-100.png", "unknown-100-2.png", "unknown-100-3.png", "unknown-99-7.png"] {
            try Data("stale".utf8).write(to: store.historyURL.appendingPathComponent(name))
        }
        try f.commit(2, to: store)
        let names = try FileManager.default.contentsOfDirectory(atPath: store.historyURL.path).filter { $0.hasPrefix("unknown-") }.sorted()
        #expect(names == ["unknown-100-2.png", "unknown-100-3.png"])
    }

    /// The history is in the order badges were replaced, whatever their
    /// creation dates: a badge restored and then replaced again is the newest
    /// entry, and stays so when tightening an older store changes every
    /// entry's inode (chmod sets ctime); pruning drops the oldest replaced.
    @Test func aRestoredBadgeReplacedAgainIsTheNewestEntryAndSurvivesPruning() throws {
        let f = StoreFixture()
        let store = f.store(historyLimit: 3)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        var ids: [Int: String] = [:]
        for n in 1...3 {
            let (png, metadata) = try StoreFixture.badge(n, created: start.addingTimeInterval(Double(n)))
            ids[n] = try store.commit(.stamping(metadata, into: png)).metadata.id
        }
        try store.restore(id: ids[1]!)          // history: 3, 2
        let (png4, metadata4) = try StoreFixture.badge(4, created: start.addingTimeInterval(4))
        ids[4] = try store.commit(.stamping(metadata4, into: png4)).metadata.id   // history: 1, 3, 2
        #expect(try store.history().map(\.metadata.id) == [ids[1]!, ids[3]!, ids[2]!])
        let timesBefore = try store.history().map(\.replacedAt)

        // An older store's modes: the next commit tightens every entry.
        for url in [store.directory, store.historyURL] { #expect(chmod(url.path, 0o755) == 0) }
        for file in try FileManager.default.contentsOfDirectory(at: store.historyURL, includingPropertiesForKeys: nil) {
            #expect(chmod(file.path, 0o644) == 0)
        }
        _ = try store.current()
        #expect(try store.history().map(\.replacedAt) == timesBefore, "reading and chmod keep the replaced times")

        let (png5, metadata5) = try StoreFixture.badge(5, created: start.addingTimeInterval(5))
        let stored = try store.commit(.stamping(metadata5, into: png5))
        #expect(!stored.tightened.isEmpty, "the commit tightened the store")
        let history = try store.history()
        #expect(history.map(\.metadata.id) == [ids[4]!, ids[1]!, ids[3]!], "badge 2, replaced first, is the one pruned")
        #expect(Array(history.dropFirst().map(\.replacedAt)) == Array(timesBefore.prefix(2)), "tightening changed no replaced time")
        let times = history.compactMap(\.replacedAt)
        #expect(times.count == 3 && zip(times, times.dropFirst()).allSatisfy { $0 > $1 }, "\(times)")
    }

    /// A writer killed after linking a foreign badge.png into the history and
    /// before its rename left `unknown-<second>.png`; the next commit reuses
    /// that entry (the same inode) rather than adding a second one.
    @Test func aForeignFileKeptByAKilledWriterIsNotKeptTwice() throws {
        let f = StoreFixture()
        let store = f.store()
        try f.commit(1)
        let foreign = TestPNG.solid(width: 4, height: 4, rgb: (9, 8, 7))
        try FileManager.default.removeItem(at: store.badgeURL)
        try foreign.write(to: store.badgeURL)
        let left = store.historyURL.appendingPathComponent("unknown-1000.png")
        #expect(link(store.badgeURL.path, left.path) == 0)

        try f.commit(2)
        let names = try FileManager.default.contentsOfDirectory(atPath: store.historyURL.path).filter { $0.hasPrefix("unknown-") }
        #expect(names == ["unknown-1000.png"])
        #expect(try Data(contentsOf: left) == foreign)
        #expect(try store.current()?.metadata.prompt == "promise 2")
    }

    /// Entry times only move forward, a step at a time when the clock has not
    /// passed the newest entry, unless that entry is far in the future.
    @Test func anEntrysTimeIsAfterTheNewestEntrysUnlessThatIsFarAhead() {
        let newest = timespec(tv_sec: 100, tv_nsec: 999_999_500)
        let carried = BadgeStore.replacementTime(after: newest, now: timespec(tv_sec: 100, tv_nsec: 0))
        #expect(carried.tv_sec == 101 && carried.tv_nsec == 500)
        let same = BadgeStore.replacementTime(after: timespec(tv_sec: 7, tv_nsec: 5), now: timespec(tv_sec: 7, tv_nsec: 5))
        #expect(same.tv_sec == 7 && same.tv_nsec == 1_005)
        let second = BadgeStore.replacementTime(after: timespec(tv_sec: 7, tv_nsec: 0), now: timespec(tv_sec: 7, tv_nsec: 0), step: 1_000_000_000)
        #expect(second.tv_sec == 8 && second.tv_nsec == 0)
        let later = BadgeStore.replacementTime(after: newest, now: timespec(tv_sec: 200, tv_nsec: 3))
        #expect(later.tv_sec == 200 && later.tv_nsec == 3)
        let first = BadgeStore.replacementTime(after: nil, now: timespec(tv_sec: 5, tv_nsec: 6))
        #expect(first.tv_sec == 5 && first.tv_nsec == 6)
        let farAhead = BadgeStore.replacementTime(after: timespec(tv_sec: 100 + BadgeStore.clockSkew + 1, tv_nsec: 0),
                                                  now: timespec(tv_sec: 100, tv_nsec: 0))
        #expect(farAhead.tv_sec == 100 && farAhead.tv_nsec == 0, "a time far ahead is not followed")
    }

    /// One entry touched to 2099 (a clock that was fast) is not followed:
    /// the next entries are replaced now, not in 2099.
    @Test func anEntryFarInTheFutureDoesNotCarryItsTimeOn() throws {
        let f = StoreFixture()
        let store = f.store()
        try f.commit(1)
        try f.commit(2)
        let touched = try #require(try store.history().first).url
        let future = timespec(tv_sec: 4_070_908_800, tv_nsec: 0)  // 2099-01-01
        #expect(utimensat(AT_FDCWD, touched.path, [future, future], 0) == 0)
        try f.commit(3)
        try f.commit(4)
        let replaced = try store.history().filter { $0.url != touched }.compactMap(\.replacedAt)
        #expect(replaced.count == 2)
        #expect(replaced.allSatisfy { abs($0.timeIntervalSinceNow) < 600 }, "\(replaced)")
    }

    /// On a file system that keeps whole seconds, badges replaced within one
    /// second still keep their order: the entry's time steps by a second.
    @Test func wholeSecondTimesKeepTheOrderOfRestoredBadges() throws {
        let f = StoreFixture()
        let recorder = RecordingFileSystem()
        recorder.keepsWholeSeconds = true
        let store = f.store(recorder, historyLimit: 3)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        var ids: [Int: String] = [:]
        for n in 1...3 {
            let (png, metadata) = try StoreFixture.badge(n, created: start.addingTimeInterval(Double(n)))
            ids[n] = try store.commit(.stamping(metadata, into: png)).metadata.id
        }
        try store.restore(id: ids[1]!)
        for n in 4...5 {
            let (png, metadata) = try StoreFixture.badge(n, created: start.addingTimeInterval(Double(n)))
            ids[n] = try store.commit(.stamping(metadata, into: png)).metadata.id
        }
        #expect(try store.history().map(\.metadata.id) == [ids[4]!, ids[1]!, ids[3]!])
    }

    /// A foreign file kept in the history keeps its own modification time.
    @Test func aForeignFileKeepsItsOwnTime() throws {
        let f = StoreFixture()
        let store = f.store()
        try f.commit(1)
        try FileManager.default.removeItem(at: store.badgeURL)
        try TestPNG.solid(width: 4, height: 4, rgb: (1, 2, 3)).write(to: store.badgeURL)
        let then = timespec(tv_sec: 1_588_655_100, tv_nsec: 0)  // 2020-05-05
        #expect(utimensat(AT_FDCWD, store.badgeURL.path, [then, then], 0) == 0)
        try f.commit(2)
        let kept = try #require(try FileManager.default.contentsOfDirectory(atPath: store.historyURL.path).first { $0.hasPrefix("unknown-") })
        var info = stat()
        #expect(stat(store.historyURL.appendingPathComponent(kept).path, &info) == 0)
        #expect(info.st_mtim.tv_sec == then.tv_sec)
    }
}
