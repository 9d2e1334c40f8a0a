import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The store's system calls, each with what it touched (a path found through
/// /proc/self/fd), in the order a commit or a restore made them. It can also
/// copy the store just before each call (what a process killed there leaves
/// on disk) and make one chosen call fail with EIO.
final class RecordingFileSystem: StoreFileSystem, @unchecked Sendable {
    struct Call: CustomStringConvertible {
        var name: String
        var path: String
        var target: String?
        var description: String { "\(name) \(path)" + (target.map { " -> \($0)" } ?? "") }
    }

    private let real = PosixFileSystem()
    private let lock = NSLock()
    private var recorded: [Call] = []
    /// The index of the call that fails with EIO (0 is the first call).
    var failing: Int?
    /// Called before each call with its index: copy the store here.
    var beforeEachCall: ((Int) -> Void)?
    /// Times are set to the second, as a file system that keeps no more does.
    var keepsWholeSeconds = false

    var calls: [Call] { lock.withLock { recorded } }

    private static func path(_ fd: Int32) -> String {
        if fd == AT_FDCWD { return "." }
        return (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) ?? "fd \(fd)"
    }

    private static func path(_ directory: Int32, _ name: String) -> String {
        name.hasPrefix("/") ? name : path(directory) + "/" + name
    }

    /// Records the call; throws EIO when it is the one chosen to fail.
    private func record(_ name: String, _ path: String, _ target: String? = nil) throws(SystemCallError) {
        let index = lock.withLock {
            recorded.append(Call(name: name, path: path, target: target))
            return recorded.count - 1
        }
        beforeEachCall?(index)
        if index == failing { throw SystemCallError(name, EIO) }
    }

    func openat(_ directory: Int32, _ name: String, _ flags: Int32, _ mode: mode_t) throws(SystemCallError) -> Int32 {
        try record(flags & O_CREAT != 0 ? "create" : "open", Self.path(directory, name))
        return try real.openat(directory, name, flags, mode)
    }

    func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int {
        try record("write", Self.path(fd))
        return try real.write(fd, buffer)
    }

    func fsync(_ fd: Int32) throws(SystemCallError) {
        try record("fsync", Self.path(fd))
        try real.fsync(fd)
    }

    func close(_ fd: Int32) throws(SystemCallError) {
        let path = Self.path(fd)
        // The descriptor goes whatever the answer, as close(2)'s does.
        try real.close(fd)
        try record("close", path)
    }

    func renameat(_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String) throws(SystemCallError) {
        try record("rename", Self.path(fromDirectory, from), Self.path(toDirectory, to))
        try real.renameat(fromDirectory, from, toDirectory, to)
    }

    func linkat(_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String) throws(SystemCallError) {
        try record("link", Self.path(fromDirectory, from), Self.path(toDirectory, to))
        try real.linkat(fromDirectory, from, toDirectory, to)
    }

    func unlinkat(_ directory: Int32, _ name: String) throws(SystemCallError) {
        try record("unlink", Self.path(directory, name))
        try real.unlinkat(directory, name)
    }

    func mkdirat(_ directory: Int32, _ name: String, _ mode: mode_t) throws(SystemCallError) {
        try record("mkdir", Self.path(directory, name))
        try real.mkdirat(directory, name, mode)
    }

    func flock(_ fd: Int32, _ operation: Int32) throws(SystemCallError) {
        try record(operation & LOCK_UN != 0 ? "unlock" : "lock", Self.path(fd))
        try real.flock(fd, operation)
    }

    func setTimes(_ directory: Int32, _ name: String, to time: timespec) throws(SystemCallError) {
        try record("setTimes", Self.path(directory, name))
        try real.setTimes(directory, name, to: keepsWholeSeconds ? timespec(tv_sec: time.tv_sec, tv_nsec: 0) : time)
    }
}

/// A copy of a store directory as it is on disk: its files (hard links kept
/// as hard links, modes and modification times kept) and `history/`.
func copyStore(_ source: URL, to destination: URL) throws {
    var firstCopy: [UInt64: String] = [:]
    for sub in ["", "history"] {
        let from = sub.isEmpty ? source : source.appendingPathComponent(sub)
        let to = sub.isEmpty ? destination : destination.appendingPathComponent(sub)
        var info = stat()
        guard lstat(from.path, &info) == 0 else { continue }
        #expect(mkdir(to.path, info.st_mode & 0o7777) == 0)
        for name in try FileManager.default.contentsOfDirectory(atPath: from.path) {
            let file = from.appendingPathComponent(name), copy = to.appendingPathComponent(name)
            guard lstat(file.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            if let first = firstCopy[UInt64(info.st_ino)] {
                #expect(link(first, copy.path) == 0)
                continue
            }
            firstCopy[UInt64(info.st_ino)] = copy.path
            try Data(contentsOf: file).write(to: copy)
            #expect(chmod(copy.path, info.st_mode & 0o7777) == 0)
            #expect(utimensat(AT_FDCWD, copy.path, [info.st_atim, info.st_mtim], 0) == 0)
        }
    }
}

/// The store's crash-safety claim, proved call by call rather than sampled:
/// a commit and a restore are run once while every system call is recorded,
/// the store is copied just before each call (what SIGKILL at that moment
/// leaves), and each copy is checked (badge.png is the old badge or the new
/// one, byte for byte; the badge it replaced is in the history, byte for
/// byte; the next commit works and sweeps). The recorded order is what a
/// power cut needs: data flushed before the rename that publishes it. Then
/// each call in turn is made to fail: the old badge stays unless the new one
/// is already published, and the error says which.
@Suite(.threadsOfTheirOwn)
struct CrashPointTests {
    /// A store with badges 1...3 committed (history: 2, 1).
    final class Scene: @unchecked Sendable {
        let fixture = StoreFixture()
        var bytes: [String: Data] = [:]  // every badge's file, by id
        var ids: [Int: String] = [:]

        init() throws {
            for n in 1...3 { try commit(n, through: fixture.store()) }
        }

        @discardableResult
        func commit(_ n: Int, through store: BadgeStore) throws -> CheckedBadge {
            let (png, metadata) = try StoreFixture.badge(n)
            let checked = try CheckedBadge.stamping(metadata, into: png)
            bytes[checked.metadata.id] = checked.png
            ids[n] = checked.metadata.id
            try store.commit(checked)
            return checked
        }
    }

    enum Operation: String, CaseIterable { case commit, restore }

    /// Badge 3 is current; a commit brings badge 4, a restore badge 1.
    static func run(_ operation: Operation, in scene: Scene, through fileSystem: RecordingFileSystem) throws -> String {
        let store = scene.fixture.store(fileSystem)
        switch operation {
        case .commit: return try scene.commit(4, through: store).metadata.id
        case .restore: return try store.restore(id: scene.ids[1]!).metadata.id
        }
    }

    /// What a copy of the store must hold: badge.png is `old` or `new`, byte
    /// for byte, and every history entry is a badge it had, byte for byte,
    /// with `old` among them once `new` is current. Returns whether `new` is.
    static func check(_ store: BadgeStore, scene: Scene, old: String, new: String, context: String) throws -> Bool {
        let current = try Data(contentsOf: store.badgeURL)
        let isNew = current == scene.bytes[new]
        #expect(isNew || current == scene.bytes[old], "badge.png is neither the old badge nor the new one \(context)")
        let history = try store.history()
        for entry in history {
            #expect(try Data(contentsOf: entry.url) == scene.bytes[entry.metadata.id], "history entry \(entry.metadata.id) changed \(context)")
        }
        let ids = Set(history.map(\.metadata.id))
        if isNew { #expect(ids.contains(old), "the replaced badge is not in the history \(context)") }
        // Nothing the store had is lost: every badge but the current one is in
        // the history (badge 4 only once it has been current).
        let expected = Set(scene.ids.values).subtracting([isNew ? new : old]).subtracting(scene.ids[4].map { [$0] } ?? [])
        #expect(expected.isSubset(of: ids), "badges lost: \(expected.subtracting(ids)) \(context)")
        return isNew
    }

    @Test(arguments: Operation.allCases)
    func aKillBeforeAnyCallLeavesTheOldBadgeOrTheNewOneWhole(operation: Operation) throws {
        let scene = try Scene()
        let old = scene.ids[3]!
        let copies = scene.fixture.directory.deletingLastPathComponent().appendingPathComponent("crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: copies, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: copies) }
        let recorder = RecordingFileSystem()
        recorder.beforeEachCall = { index in
            try? copyStore(scene.fixture.directory, to: copies.appendingPathComponent("\(index)"))
        }
        let new = try Self.run(operation, in: scene, through: recorder)
        let calls = recorder.calls
        #expect(calls.count >= 8, "\(calls)")

        var sawNew = false, leftTemporary = 0
        for index in calls.indices {
            let copy = BadgeStore(directory: copies.appendingPathComponent("\(index)"), historyLimit: 20, lockTimeout: .seconds(5))
            let context = "killed before call \(index) (\(calls[index])) of a \(operation)"
            if !copy.temporaryFiles().isEmpty { leftTemporary += 1 }
            let isNew = try Self.check(copy, scene: scene, old: old, new: new, context: context)
            #expect(!(sawNew && !isNew), "the old badge came back after the new one was published, \(context)")
            sawNew = sawNew || isNew
            // The next commit takes over: it sweeps, and keeps what was current.
            let (png, metadata) = try StoreFixture.badge(50 + index)
            try copy.commit(.stamping(metadata, into: png))
            #expect(copy.temporaryFiles().isEmpty, "temporaries left after the next commit, \(context)")
            let kept = Set(try copy.history().map(\.metadata.id))
            let had = Set(scene.ids.values).subtracting(isNew || operation == .restore ? [] : [new])
            #expect(had.isSubset(of: kept), "the next commit lost \(had.subtracting(kept)), \(context)")
        }
        #expect(sawNew, "no copy had the new badge: the last call comes after the rename")
        #expect(leftTemporary > 0, "no copy caught the temporary file: the kills did not land inside the commit")
        let store = scene.fixture.store()
        #expect(try Data(contentsOf: store.badgeURL) == scene.bytes[new])
    }

    /// The order a power cut needs: the new file's data is flushed before the
    /// rename that publishes it; the old badge's history link is flushed
    /// before the rename replaces it; the rename is flushed before the lock
    /// goes; a restored entry leaves the history only after that.
    @Test(arguments: Operation.allCases)
    func eachStepIsFlushedBeforeTheStepThatReliesOnIt(operation: Operation) throws {
        let scene = try Scene()
        let recorder = RecordingFileSystem()
        _ = try Self.run(operation, in: scene, through: recorder)
        let calls = recorder.calls
        let store = scene.fixture.store()
        let storePath = store.directory.resolvingSymlinksInPath().path
        let historyPath = store.historyURL.resolvingSymlinksInPath().path
        func first(_ name: String, after start: Int = 0, _ matches: (RecordingFileSystem.Call) -> Bool) -> Int? {
            calls.indices.first { $0 >= start && calls[$0].name == name && matches(calls[$0]) }
        }
        let trace = calls.map(\.description).joined(separator: "\n")
        let rename = try #require(first("rename") { $0.target == storePath + "/badge.png" }, "no rename onto badge.png:\n\(trace)")
        let temporary = calls[rename].path
        let created = try #require(first("create") { $0.path == temporary }, "\(trace)")
        let lastWrite = try #require(calls.indices.last { calls[$0].name == "write" && calls[$0].path == temporary }, "\(trace)")
        let dataFlushed = try #require(first("fsync", after: lastWrite) { $0.path == temporary }, "\(trace)")
        #expect(created < lastWrite && dataFlushed < rename, "the new badge's data is flushed before the rename:\n\(trace)")
        let linked = try #require(first("link") { $0.path == storePath + "/badge.png" && $0.target?.hasPrefix(historyPath + "/") == true }, "\(trace)")
        let historyFlushed = try #require(first("fsync", after: linked) { $0.path == historyPath }, "\(trace)")
        #expect(linked < historyFlushed && historyFlushed < rename, "the old badge's history link is flushed before the rename:\n\(trace)")
        let published = try #require(first("fsync", after: rename) { $0.path == storePath }, "\(trace)")
        let unlocked = try #require(first("unlock", after: rename) { _ in true }, "\(trace)")
        #expect(published < unlocked, "the rename is flushed before the lock goes:\n\(trace)")
        if operation == .restore {
            let entry = historyPath + "/" + scene.ids[1]! + ".png"
            let removed = try #require(first("unlink") { $0.path == entry }, "\(trace)")
            #expect(removed > published, "the restored entry leaves the history after the rename is flushed:\n\(trace)")
        }
    }

    /// Each call in turn fails with EIO. Before the rename, the old badge is
    /// current byte for byte and the error says the current badge is
    /// unchanged; after it, the new one is, and the error (if any) says that.
    /// Either way nothing is lost and no temporary file is left.
    @Test(arguments: Operation.allCases)
    func aFailureAtAnyCallLosesNothingAndSaysWhichBadgeIsCurrent(operation: Operation) throws {
        let count = try {
            let scene = try Scene()
            let recorder = RecordingFileSystem()
            _ = try Self.run(operation, in: scene, through: recorder)
            return recorder.calls.count
        }()
        var failed = 0, succeeded = 0
        for index in 0..<count {
            let scene = try Scene()
            let old = scene.ids[3]!
            let recorder = RecordingFileSystem()
            recorder.failing = index
            let context = "when call \(index) of a \(operation) fails"
            var new = operation == .restore ? scene.ids[1]! : ""
            var thrown: BadgeError?
            do {
                new = try Self.run(operation, in: scene, through: recorder)
                succeeded += 1
            } catch let error as BadgeError {
                thrown = error
                failed += 1
                if new.isEmpty { new = scene.ids[4]! }
            }
            let call = recorder.calls[index]
            let store = scene.fixture.store()
            let isNew = try Self.check(store, scene: scene, old: old, new: new, context: "\(context) (\(call))")
            #expect(store.temporaryFiles().isEmpty, "temporaries left \(context) (\(call))")
            if let thrown {
                #expect(thrown.code == .store, "\(thrown) \(context)")
                #expect(thrown.description.contains("Input/output error"), "the cause is named: \(thrown) \(context)")
                if isNew {
                    #expect(thrown.message.contains("the new badge is the current one"), "\(thrown) \(context) (\(call))")
                } else {
                    #expect(thrown.hint?.contains("unchanged") == true, "\(thrown) \(context) (\(call))")
                }
            } else {
                #expect(isNew, "the \(operation) succeeded but the new badge is not current \(context) (\(call))")
            }
        }
        #expect(failed > 0 && succeeded > 0, "\(failed) failed, \(succeeded) succeeded")
    }
}
