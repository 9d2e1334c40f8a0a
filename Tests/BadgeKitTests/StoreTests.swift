import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A store in a temporary directory, and badges to commit to it.
final class StoreFixture: @unchecked Sendable {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-store-\(UUID().uuidString)")

    deinit { try? FileManager.default.removeItem(at: directory) }

    func store(_ fileSystem: any StoreFileSystem = PosixFileSystem(), historyLimit: Int = 20) -> BadgeStore {
        BadgeStore(directory: directory, historyLimit: historyLimit, fileSystem: fileSystem, lockTimeout: .seconds(5))
    }

    /// A stamped badge: a solid colour whose prompt names it.
    static func badge(_ n: Int, date: Date = Date(timeIntervalSince1970: 1_800_000_000), created: Date = Date()) throws
        -> (Data, BadgeMetadata)
    {
        let metadata = BadgeMetadata(
            commitmentDate: date, timeZone: "Europe/Berlin", createdAt: created, prompt: "promise \(n)",
            backend: "procedural", backendType: "procedural", size: 16, seed: UInt64(n))
        let png = TestPNG.solid(width: 16, height: 16, rgb: (UInt8(n % 256), 100, 200))
        return (try metadata.stamp(into: png), metadata)
    }

    @discardableResult
    func commit(_ n: Int, to store: BadgeStore? = nil, created: Date = Date()) throws -> Data {
        let (png, metadata) = try Self.badge(n, created: created)
        try (store ?? self.store()).commit(.stamping(metadata, into: png))
        return png
    }
}

@Suite(.threadsOfTheirOwn)
struct BadgeStoreTests {
    @Test func aCommitMakesTheCurrentBadgeAndKeepsTheOldOne() throws {
        let f = StoreFixture()
        let store = f.store()
        #expect(try store.current() == nil)
        let first = try f.commit(1, created: Date(timeIntervalSince1970: 1000))
        #expect(try Data(contentsOf: store.badgeURL) == first)
        #expect(try store.current()?.metadata.prompt == "promise 1")
        try f.commit(2, created: Date(timeIntervalSince1970: 2000))
        try f.commit(3, created: Date(timeIntervalSince1970: 3000))
        #expect(try store.current()?.metadata.prompt == "promise 3")
        #expect(try store.history().map(\.metadata.prompt) == ["promise 2", "promise 1"])
        // The history entry is a hard link to the very file that was current.
        let entry = try #require(try store.history().last)
        #expect(try Data(contentsOf: entry.url) == first)
    }

    /// The current badge, or a history entry, with its bytes: the metadata and
    /// the bytes come from one file, byte for byte what was committed; a
    /// FIFO put at the badge's path is refused, not waited on.
    @Test func aBadgeAndItsBytesAreReadTogether() throws {
        let f = StoreFixture()
        let store = f.store()
        #expect(try store.currentWithBytes() == nil)
        let first = try f.commit(1, created: Date(timeIntervalSince1970: 1))
        let second = try f.commit(2, created: Date(timeIntervalSince1970: 2))
        let current = try #require(try store.currentWithBytes())
        #expect(current.badge.metadata.prompt == "promise 2" && current.png == second && current.badge.byteCount == second.count)
        let id = try #require(try store.history().first?.metadata.id)
        let entry = try store.historyEntryWithBytes(matching: String(id.prefix(6)))
        #expect(entry.badge.metadata.prompt == "promise 1" && entry.png == first)
        try FileManager.default.removeItem(at: store.badgeURL)
        #expect(mkfifo(store.badgeURL.path, 0o600) == 0)
        do {
            _ = try store.currentWithBytes()
            Issue.record("a FIFO at the badge's path must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .store && error.message == "cannot read the badge", "\(error)")
            #expect(error.cause == "it is a FIFO (named pipe), not a regular file", "\(error)")
        }
    }

    @Test func historyIsPrunedToItsLimit() throws {
        let f = StoreFixture()
        let store = f.store(historyLimit: 3)
        for n in 1...8 { try f.commit(n, to: store, created: Date(timeIntervalSince1970: Double(n))) }
        #expect(try store.history().map(\.metadata.prompt) == ["promise 7", "promise 6", "promise 5"])
        let files = try FileManager.default.contentsOfDirectory(atPath: store.historyURL.path)
        #expect(files.count == 3)
    }

    @Test func restoreBringsBackABadgeByteForByteAndKeepsTheOneItReplaces() throws {
        let f = StoreFixture()
        let store = f.store()
        let first = try f.commit(1, created: Date(timeIntervalSince1970: 1))
        try f.commit(2, created: Date(timeIntervalSince1970: 2))
        let id = try #require(try store.history().first?.metadata.id)
        let restored = try store.restore(id: String(id.prefix(5)))
        #expect(restored.metadata.prompt == "promise 1")
        #expect(try Data(contentsOf: store.badgeURL) == first)
        #expect(try store.history().map(\.metadata.prompt) == ["promise 2"])
    }

    @Test func restoreSaysWhatIsWrongWithAnId() throws {
        let f = StoreFixture()
        let store = f.store()
        try f.commit(1)
        try f.commit(2)
        let short = #expect(throws: BadgeError.self) { try store.restore(id: "ab") }
        #expect(short?.code == .usage && short?.message == "the id \"ab\" is too short", "\(String(describing: short))")
        do {
            try store.restore(id: "ffffffffffff")
            Issue.record("an unknown id must fail")
        } catch let error as BadgeError {
            #expect(error.code == .notFound)
            #expect(error.hint?.contains("badge history") == true)
        }
    }

    @Test func staleTemporariesAreSwept() throws {
        let f = StoreFixture()
        let store = f.store()
        try f.commit(1)
        let stale = store.directory.appendingPathComponent(".badge.png.12345.deadbeef.tmp")
        try Data("half a badge".utf8).write(to: stale)
        #expect(store.temporaryFiles() == [stale.path])
        try store.sweep()
        #expect(store.temporaryFiles().isEmpty)
        try Data("half a badge".utf8).write(to: stale)
        try f.commit(2)
        #expect(store.temporaryFiles().isEmpty)
    }

    /// A file without badge metadata at the badge path is kept when replaced,
    /// as unknown-<time>.png, and such files are pruned to the limit like the rest.
    @Test func foreignFilesKeptInTheHistoryArePrunedToo() throws {
        let f = StoreFixture()
        let store = f.store(historyLimit: 2)
        try f.commit(1, to: store)
        try f.commit(2, to: store)
        for time in [100, 200, 300, 400] {
            try Data("stale".utf8).write(to: store.historyURL.appendingPathComponent("unknown-\(time).png"))
        }
        // Another program writes over the badge (badge 2 is lost to it).
        try TestPNG.solid(width: 4, height: 4, rgb: (1, 2, 3)).write(to: store.badgeURL)
        try f.commit(3, to: store)
        let files = try FileManager.default.contentsOfDirectory(atPath: store.historyURL.path).sorted()
        let foreign = files.filter { $0.hasPrefix("unknown-") }
        #expect(foreign.count == 2, "\(files)")
        // The foreign badge just replaced is the newest and is kept, byte for byte.
        let newest = try #require(foreign.max { Int($0.dropFirst(8).dropLast(4))! < Int($1.dropFirst(8).dropLast(4))! })
        #expect(try Data(contentsOf: store.historyURL.appendingPathComponent(newest)) == TestPNG.solid(width: 4, height: 4, rgb: (1, 2, 3)))
        #expect(foreign.contains("unknown-400.png") && !foreign.contains("unknown-100.png"))
        #expect(try store.history().map(\.metadata.prompt) == ["promise 1"])
    }

    /// `--output` and the card write through AtomicFileWriter: a temporary that a
    /// killed run (`kill -9`) left beside the file is removed by the next write;
    /// another host's (a shared directory) and a running process's are not.
    @Test func aKilledWritersTemporaryIsRemovedByTheNextWrite() throws {
        let f = StoreFixture()
        try FileManager.default.createDirectory(at: f.directory, withIntermediateDirectories: true)
        let target = f.directory.appendingPathComponent("out.png")
        let host = AtomicFileWriter.host
        let abandoned = ".out.png.\(host).99999999.0badf00d.tmp"
        let otherHost = ".out.png.some-other-pod.99999999.0badf00d.tmp"
        let running = ".out.png.\(host).\(getpid()).0badf00d.tmp"
        let otherFile = ".other.png.\(host).99999999.0badf00d.tmp"
        for name in [abandoned, otherHost, running, otherFile] {
            try Data("partial".utf8).write(to: f.directory.appendingPathComponent(name))
        }
        try AtomicFileWriter().write(Data("whole".utf8), to: target)
        #expect(try Data(contentsOf: target) == Data("whole".utf8))
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: f.directory.path))
        #expect(names == ["out.png", otherHost, running, otherFile])
    }

    @Test func aForeignFileAtTheBadgePathIsReportedNotTrusted() throws {
        let f = StoreFixture()
        let store = f.store()
        try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true)
        try TestPNG.solid(width: 4, height: 4, rgb: (1, 2, 3)).write(to: store.badgeURL)
        do {
            _ = try store.current()
            Issue.record("a PNG without badge metadata must be reported")
        } catch let error as BadgeError {
            #expect(error.message.contains("no badge metadata"))
            #expect(error.path == store.badgeURL.path)
        }
    }
}

/// Every failing system call in a commit leaves the old badge byte-identical,
/// says which path failed and why, and leaves no temporary file.
@Suite(.threadsOfTheirOwn)
struct StoreFaultTests {
    static let faults: [(FaultyFileSystem.Call, Int32, String)] = [
        (.write, ENOSPC, "No space left on device"),
        (.write, EIO, "Input/output error"),
        (.write, EFBIG, "File too large"),
        (.fsync, EIO, "Input/output error"),
        (.open, EROFS, "Read-only file system"),
        (.open, EACCES, "Permission denied"),
        (.rename, EIO, "Input/output error"),
        (.rename, EXDEV, "Invalid cross-device link"),
        (.link, EIO, "Input/output error"),
        (.close, EIO, "Input/output error"),
    ]

    @Test(arguments: 0..<faults.count)
    func aFailingCallLosesNothing(index: Int) throws {
        let (call, code, text) = Self.faults[index]
        let f = StoreFixture()
        let before = try f.commit(1)
        let faulty = f.store(FaultyFileSystem(failing: call, errno: code, pathContaining: call == .open ? ".tmp" : nil))
        do {
            try f.commit(2, to: faulty)
            Issue.record("\(call) failing with \(text) must fail the commit")
        } catch let error as BadgeError {
            #expect(error.code == .store)
            #expect(error.description.contains(text), "\(error)")
            #expect(error.path?.hasPrefix(f.directory.path) == true, "names a path in the store: \(error)")
            #expect(error.hint?.isEmpty == false)
        }
        #expect(try Data(contentsOf: f.store().badgeURL) == before, "\(call): the old badge changed")
        #expect(f.store().temporaryFiles().isEmpty, "\(call): temporaries left")
        #expect(try f.store().current()?.metadata.prompt == "promise 1")
    }

    @Test func aReadOnlyStoreIsExplained() throws {
        let f = StoreFixture()
        try f.commit(1)
        do {
            try f.commit(2, to: f.store(FaultyFileSystem(failing: .open, errno: EROFS, pathContaining: ".tmp")))
            Issue.record("a commit to a read-only store succeeded")
        } catch let error as BadgeError {
            #expect(error.code == .store, "\(error)")
            #expect(error.hint?.contains("read-only") == true, "\(error)")
        }
    }
}
