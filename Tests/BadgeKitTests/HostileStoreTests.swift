import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A directory holding a store and, beside it, places a hostile file might
/// try to reach from inside the store.
private final class Neighbourhood: @unchecked Sendable {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("badge-hostile-\(UUID().uuidString)")
    var storeDirectory: URL { root.appendingPathComponent("store") }
    var victim: URL { root.appendingPathComponent("victim") }

    init() throws {
        try FileManager.default.createDirectory(at: victim, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    func store(historyLimit: Int = 20) -> BadgeStore {
        BadgeStore(directory: storeDirectory, historyLimit: historyLimit, lockTimeout: .seconds(5))
    }

    func victimFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: victim.path).sorted()
    }

    /// A badge.png stamped with `metadata` but whatever id is asked for.
    static func badge(id: String, prompt: String = "crafted") throws -> Data {
        let metadata = BadgeMetadata(
            id: id, commitmentDate: Date(timeIntervalSince1970: 1_800_000_000), timeZone: "UTC", createdAt: Date(),
            prompt: prompt, backend: "procedural", backendType: "procedural", size: 8)
        return try metadata.stamp(into: TestPNG.solid(width: 8, height: 8, rgb: (9, 9, 9)))
    }
}

private func mode(_ url: URL) throws -> mode_t {
    var info = stat()
    guard lstat(url.path, &info) == 0 else { throw SystemCallError("lstat", errno) }
    return info.st_mode & 0o7777
}

/// Issue #24: a store is only ever changed inside its own directory, whatever
/// its files say, and only when no one else can plant files in it.
@Suite(.threadsOfTheirOwn)
struct HostileStoreTests {
    @Test func anIdIsSixteenLowercaseHexDigitsOrTheFileIsForeign() throws {
        #expect(BadgeMetadata.isValidID(BadgeMetadata.newID()))
        for bad in ["../../victim/planted", "0123456789ABCDEF", "0123456789abcde", "0123456789abcdef0", "0123456789abcdeg",
                    "01234567/9abcdef", ""] {
            #expect(!BadgeMetadata.isValidID(bad), "\(bad)")
            let entries = try PNG.chunks(in: Neighbourhood.badge(id: bad)).compactMap(PNG.textEntry)
            #expect(BadgeMetadata(entries: entries) == nil, "a badge:id of \(bad) is not a badge's")
        }
    }

    /// The reviewed attack: a badge.png whose badge:id is "../../victim/planted"
    /// made the next commit hard-link it to victim/planted.png outside the store.
    @Test func aCraftedIdNeverCreatesAFileOutsideTheStore() throws {
        let n = try Neighbourhood()
        let store = n.store()
        let (first, firstMetadata) = try StoreFixture.badge(1)
        try store.commit(.stamping(firstMetadata, into: first))
        // Another program (or a download) puts the crafted file in place of badge 1.
        let crafted = try Neighbourhood.badge(id: "../../victim/planted")
        try crafted.write(to: store.badgeURL)
        let error = #expect(throws: BadgeError.self) { try store.current() }
        #expect(error?.code == .store)
        #expect(error?.message == "the file carries no badge metadata", "\(String(describing: error))")
        #expect(error?.path == store.badgeURL.path)
        #expect(error?.hint?.contains("move it away") == true, "\(String(describing: error))")

        let (second, secondMetadata) = try StoreFixture.badge(2)
        try store.commit(.stamping(secondMetadata, into: second))
        #expect(try n.victimFiles() == [], "nothing is created outside the store")
        #expect(try store.current()?.metadata.prompt == "promise 2")
        // The crafted file is kept, as a foreign file, inside the history.
        let kept = try FileManager.default.contentsOfDirectory(atPath: store.historyURL.path).filter { $0.hasPrefix("unknown-") }
        #expect(kept.count == 1)
        #expect(try Data(contentsOf: store.historyURL.appendingPathComponent(kept[0])) == crafted)
        #expect(try store.history().isEmpty, "a foreign file is not listed as a badge")
    }

    /// A history/ replaced by a symbolic link was followed: badge linked into
    /// its target, swept `.*.tmp` files there and pruned PNGs there.
    @Test func aSymlinkedHistoryIsRefusedAndItsTargetUntouched() throws {
        let n = try Neighbourhood()
        let store = n.store(historyLimit: 1)
        let (first, firstMetadata) = try StoreFixture.badge(1)
        try store.commit(.stamping(firstMetadata, into: first))
        // Someone else's files, in the directory the link points at.
        let theirs = try Neighbourhood.badge(id: "00000000000000aa", prompt: "theirs")
        try theirs.write(to: n.victim.appendingPathComponent("00000000000000aa.png"))
        try Data("work in progress".utf8).write(to: n.victim.appendingPathComponent(".draft.png.host.1.abcd.tmp"))
        try FileManager.default.removeItem(at: store.historyURL)
        try FileManager.default.createSymbolicLink(at: store.historyURL, withDestinationURL: n.victim)
        let before = try n.victimFiles()

        let (second, secondMetadata) = try StoreFixture.badge(2)
        do {
            try store.commit(.stamping(secondMetadata, into: second))
            Issue.record("a symlinked history must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .store)
            #expect(error.message.contains("symbolic link"), "\(error)")
            #expect(error.path == store.historyURL.path)
            #expect(error.hint?.contains("mv ") == true, "\(error)")
        }
        // Reading the history and sweeping refuse the link with the same words and fix.
        let refusals = [#expect(throws: BadgeError.self) { try store.history() }, #expect(throws: BadgeError.self) { try store.sweep() }]
        for error in refusals {
            #expect(error?.code == .store)
            #expect(error?.message.contains("symbolic link") == true, "\(String(describing: error))")
            #expect(error?.path == store.historyURL.path)
            #expect(error?.hint?.contains("mv \(store.historyURL.path) ") == true, "\(String(describing: error))")
        }
        #expect(try n.victimFiles() == before, "the link's target is untouched")
        #expect(try Data(contentsOf: store.badgeURL) == first, "the current badge is unchanged")
    }

    @Test func aStoreOthersCanWriteToIsRefusedWithTheFix() throws {
        let n = try Neighbourhood()
        let store = n.store()
        let (first, firstMetadata) = try StoreFixture.badge(1)
        try store.commit(.stamping(firstMetadata, into: first))
        chmod(store.directory.path, 0o777)
        let (second, secondMetadata) = try StoreFixture.badge(2)
        for attempt in [{ _ = try store.commit(.stamping(secondMetadata, into: second)) }, { _ = try store.current() }] {
            do {
                try attempt()
                Issue.record("a world-writable store must be refused")
            } catch let error as BadgeError {
                #expect(error.code == .store)
                #expect(error.message.contains("every user"), "\(error)")
                #expect(error.hint == "make it yours alone: chmod 700 \(store.directory.path)")
            }
        }
        chmod(store.directory.path, 0o770)
        #expect { try store.commit(.stamping(secondMetadata, into: second)) } throws: { error in
            (error as? BadgeError)?.message.contains("its group") == true
        }
        chmod(store.directory.path, 0o700)
        try store.commit(.stamping(secondMetadata, into: second))
        #expect(try store.current()?.metadata.prompt == "promise 2")
    }

    @Test func aStoreAnotherUserOwnsIsRefused() throws {
        let n = try Neighbourhood()
        var store = n.store()
        var owner: uid_t = 0
        if geteuid() == 0 {
            // Root gives the store away; anyone else finds one that root owns: "/".
            owner = 65534
            try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true)
            #expect(chown(store.directory.path, owner, gid_t(owner)) == 0)
        } else {
            store = BadgeStore(directory: URL(fileURLWithPath: "/"), lockTimeout: .seconds(5))
        }
        let (png, metadata) = try StoreFixture.badge(1)
        for attempt in [{ _ = try store.commit(.stamping(metadata, into: png)) }, { _ = try store.history() }] {
            do {
                try attempt()
                Issue.record("another user's store must be refused")
            } catch let error as BadgeError {
                #expect(error.code == .store)
                #expect(error.message.contains("belongs to another user (uid \(owner))"), "\(error)")
                #expect(error.hint?.contains("--store") == true && error.hint?.contains("chown") == true, "\(error)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: store.badgeURL.path))
    }

    /// A promise is personal: the store is its owner's alone, as ssh and gpg keep theirs.
    @Test func theStoreIsCreatedPrivate() throws {
        let n = try Neighbourhood()
        let store = n.store()
        let previous = umask(0o022)
        defer { umask(previous) }
        for k in 1...2 {
            let (png, metadata) = try StoreFixture.badge(k)
            try store.commit(.stamping(metadata, into: png))
        }
        #expect(try mode(store.directory) == 0o700)
        #expect(try mode(store.historyURL) == 0o700)
        #expect(try mode(store.badgeURL) == 0o600)
        #expect(try mode(store.directory.appendingPathComponent(BadgeStore.lockFileName)) == 0o600)
        let entry = try #require(try store.history().first)
        #expect(try mode(entry.url) == 0o600)
    }

    /// A FIFO at the badge path, or among the history, blocked open() for
    /// ever: each step that meets one is bounded from when it starts (see
    /// `onThreadOfItsOwn`).
    @Test func aFIFOInTheStoreIsAnErrorNotAHang() async throws {
        let n = try Neighbourhood()
        let store = n.store()
        for k in 1...2 {
            let (png, metadata) = try StoreFixture.badge(k, created: Date(timeIntervalSince1970: Double(k)))
            try store.commit(.stamping(metadata, into: png))
        }
        #expect(mkfifo(store.historyURL.appendingPathComponent("0123456789abcdef.png").path, 0o600) == 0)
        let prompts = try await onThreadOfItsOwn("listing a history holding a FIFO", limit: .seconds(300)) { try store.history().map(\.metadata.prompt) }
        #expect(prompts == ["promise 1"], "the FIFO entry is skipped")

        try FileManager.default.removeItem(at: store.badgeURL)
        #expect(mkfifo(store.badgeURL.path, 0o600) == 0)
        let error = try await onThreadOfItsOwn("reading a FIFO as the current badge", limit: .seconds(300)) { () -> BadgeError? in
            do {
                _ = try store.current()
                return nil
            } catch let error as BadgeError {
                return error
            }
        }
        let refusal = try #require(error, "a FIFO is not a badge")
        #expect(refusal.code == .store)
        #expect(refusal.cause == "it is a FIFO (named pipe), not a regular file", "\(refusal)")
        #expect(refusal.path == store.badgeURL.path)
        // A commit replaces it (keeping it aside as a foreign file) without waiting on it.
        let (png, metadata) = try StoreFixture.badge(3)
        let current = try await onThreadOfItsOwn("committing over a FIFO", limit: .seconds(300)) { () throws -> String? in
            try store.commit(.stamping(metadata, into: png))
            return try store.current()?.metadata.prompt
        }
        #expect(current == "promise 3")
    }
}
