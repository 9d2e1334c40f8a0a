import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The store's failures on real file systems, beside the `FaultyFileSystem`
/// seam: a full tmpfs (ENOSPC on write; ENOSPC on the history link, when the
/// inodes run out), a read-only bind mount (EROFS), and a pass-through FUSE
/// file system that fails chosen calls (`Tests/Data/faultfs/faultfs.py`: a
/// tmpfs never fails an fsync, and there is no device-mapper here to fail a
/// disk under ext4): EIO on the new badge's write, ENOSPC on its fsync, EIO
/// on the history link, on the rename into place, on the history's fsync, and
/// on the store directory's after the rename. In each the old badge
/// stays byte for byte (in the history, once the rename is done) and the
/// error names the path. Mounting needs root: as anyone else these are
/// skipped, and the skip says why.
@Suite(.threadsOfTheirOwn, .serialized, .enabled(if: getuid() == 0, "needs root to mount a tmpfs, a read-only bind mount and a FUSE file system; run as root (CI does)"))
struct RealFaultTests {
    /// A tmpfs of `options` mounted on a new folder; unmounted (and the folder removed) by `unmount`.
    final class Mount: @unchecked Sendable {
        let root: URL

        init(_ options: String) throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("badge-faults-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try Self.run("/bin/mount", ["-t", "tmpfs", "-o", options, "tmpfs", root.path])
        }

        static func run(_ tool: String, _ arguments: [String]) throws {
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            process.standardInput = FileHandle.nullDevice
            try process.run()
            guard process.waitUntilExit(orKillAfter: .seconds(60)) else {
                throw SystemCallError("\(tool) \(arguments.joined(separator: " ")) did not finish within 60 s and was killed", ETIMEDOUT)
            }
            guard process.terminationStatus == 0 else {
                throw SystemCallError("\(tool) \(arguments.joined(separator: " ")) (exit \(process.terminationStatus))", EPERM)
            }
        }

        func unmount() {
            try? Self.run("/bin/umount", ["--recursive", "--lazy", root.path])
            try? FileManager.default.removeItem(at: root)
        }

        /// Fills the file system with files of `chunk` bytes until it is full; returns their count.
        @discardableResult
        func fill(chunk: Int, name: String = "filler") -> Int {
            let bytes = [UInt8](repeating: 0x5A, count: chunk)
            var count = 0
            while true {
                let fd = open(root.appendingPathComponent("\(name)-\(count)").path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                guard fd >= 0 else { return count }
                defer { close(fd) }
                count += 1
                if chunk > 0 && write(fd, bytes, chunk) != chunk { return count }
            }
        }
    }

    /// `faultfs.py` serving a store's folder at a mount point of its own,
    /// failing the calls `faults` name ("fsync:*:ENOSPC"); `unmount` ends it.
    final class FaultMount: @unchecked Sendable {
        static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Data/faultfs/faultfs.py")
        let root: URL
        /// The folder the file system serves: the store, as it is on disk.
        let source: URL
        /// Where it is mounted: the store, as badge sees it through the faults.
        let mountpoint: URL
        private let process = ChildProcess()
        private let errors = Pipe()

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("badge-faultfs-\(UUID().uuidString)")
            source = root.appendingPathComponent("source")
            mountpoint = root.appendingPathComponent("store")
            for folder in [source, mountpoint] {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        }

        /// Mounts it and waits (at most 30 s) until it says it is mounted.
        func mount(faults: [String]) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", Self.script.path, source.path, mountpoint.path] + faults.flatMap { ["--fail", $0] }
            process.standardInput = FileHandle.nullDevice
            let said = Pipe()
            process.standardOutput = said
            process.standardError = errors
            try process.run()
            // A bound on a hang: killed at the deadline, it says nothing more and the read ends.
            let timer = KillTimer(process, after: 30)
            let line = PipeReading.readLine(said.fileHandleForReading)
            timer.cancel()
            guard line == "faultfs: mounted", isMounted else {
                process.signal(SIGKILL)
                process.waitUntilExit()
                try? errors.fileHandleForWriting.close()
                log = String(decoding: PipeReading.readAll(errors.fileHandleForReading), as: UTF8.self)
                throw SystemCallError("faultfs did not mount \(mountpoint.path): \(log)", EIO)
            }
        }

        var isMounted: Bool {
            let table = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
            return table.split(separator: "\n").contains { $0.split(separator: " ").dropFirst(4).first == Substring(mountpoint.path) }
        }

        /// What the file system logged: a line per failure it made.
        private(set) var log = ""

        func unmount() {
            if isMounted { try? Mount.run("/bin/umount", [mountpoint.path]) }
            if process.isRunning || process.processIdentifier > 0 {
                let timer = KillTimer(process, after: 10)
                try? errors.fileHandleForWriting.close()
                log = String(decoding: PipeReading.readAll(errors.fileHandleForReading), as: UTF8.self)
                process.waitUntilExit()
                timer.cancel()
            }
            try? FileManager.default.removeItem(at: root)
        }
    }

    static func store(in mount: Mount) -> BadgeStore {
        BadgeStore(directory: mount.root.appendingPathComponent("store"), historyLimit: 20, lockTimeout: .seconds(5))
    }

    /// Commits `n`, expecting a failure; returns it.
    static func failedCommit(_ n: Int, to store: BadgeStore) async throws -> BadgeError {
        let (png, metadata) = try StoreFixture.badge(n)
        let error = try await onThreadOfItsOwn("a commit on a faulty file system") { () -> BadgeError? in
            do {
                try store.commit(.stamping(metadata, into: png))
                return nil
            } catch let error as BadgeError {
                return error
            }
        }
        return try #require(error, "the commit of badge \(n) succeeded")
    }

    @Test func aFullFileSystemKeepsTheOldBadgeAndNamesTheStore() async throws {
        let mount = try Mount("size=256k,mode=0755")
        defer { mount.unmount() }
        let store = Self.store(in: mount)
        let (first, metadata) = try StoreFixture.badge(1)
        try store.commit(.stamping(metadata, into: first))
        mount.fill(chunk: 4096)

        let error = try await Self.failedCommit(2, to: store)
        #expect(error.code == .store)
        #expect(error.message == "cannot write the new badge", "\(error)")
        #expect(error.cause?.contains("No space left on device") == true, "\(error)")
        #expect(error.path == store.directory.path)
        #expect(error.hint == "free some disk space and try again; the current badge is unchanged")
        #expect(try Data(contentsOf: store.badgeURL) == first, "the old badge changed")
        #expect(store.temporaryFiles().isEmpty, "a temporary was left: \(store.temporaryFiles())")
    }

    /// tmpfs counts a hard link against its inodes: with one inode left, the
    /// temporary takes it and the old badge's link into history/ fails.
    @Test func noRoomForTheHistoryLinkKeepsTheOldBadgeAndNamesTheEntry() async throws {
        let mount = try Mount("size=4m,nr_inodes=64,mode=0755")
        defer { mount.unmount() }
        let store = Self.store(in: mount)
        let (first, metadata) = try StoreFixture.badge(1)
        try store.commit(.stamping(metadata, into: first))
        let fillers = mount.fill(chunk: 0)
        // One inode free again, for the temporary.
        #expect(unlink(mount.root.appendingPathComponent("filler-\(fillers - 1)").path) == 0)

        let error = try await Self.failedCommit(2, to: store)
        #expect(error.code == .store)
        #expect(error.message == "cannot keep the current badge in the history", "\(error)")
        #expect(error.cause?.contains("No space left on device") == true, "\(error)")
        #expect(error.path == store.historyURL.appendingPathComponent("\(metadata.id).png").path)
        #expect(try Data(contentsOf: store.badgeURL) == first, "the old badge changed")
        #expect(store.temporaryFiles().isEmpty, "a temporary was left: \(store.temporaryFiles())")
    }

    @Test func aReadOnlyMountKeepsTheOldBadgeAndSaysSo() async throws {
        let mount = try Mount("size=1m,mode=0755")
        defer { mount.unmount() }
        let store = Self.store(in: mount)
        let (first, metadata) = try StoreFixture.badge(1)
        try store.commit(.stamping(metadata, into: first))
        let path = store.directory.path
        try Mount.run("/bin/mount", ["--bind", path, path])
        try Mount.run("/bin/mount", ["-o", "remount,ro,bind", path])

        let error = try await Self.failedCommit(2, to: store)
        #expect(error.code == .store)
        #expect(error.cause?.contains("Read-only file system") == true, "\(error)")
        #expect(error.path?.hasPrefix(path) == true, "the error does not name the store: \(error)")
        #expect(error.hint == "the store is on a read-only file system; choose another with --store or $BADGE_STORE", "\(error)")
        #expect(try Data(contentsOf: store.badgeURL) == first, "the old badge changed")
    }

    /// Badge 1 committed to the store's folder directly, then `faults` armed:
    /// the store as badge sees it through faultfs, and the folder underneath.
    static func faultyStore(_ faults: [String]) throws -> (FaultMount, BadgeStore, first: Data) {
        let fault = try FaultMount()
        let (first, metadata) = try StoreFixture.badge(1)
        try BadgeStore(directory: fault.source, historyLimit: 20, lockTimeout: .seconds(5)).commit(.stamping(metadata, into: first))
        let committed = try Data(contentsOf: fault.source.appendingPathComponent("badge.png"))
        try fault.mount(faults: faults)
        return (fault, BadgeStore(directory: fault.mountpoint, historyLimit: 20, lockTimeout: .seconds(5)), committed)
    }

    @Test func noRoomWhenTheNewBadgeIsFlushedKeepsTheOldBadge() async throws {
        let (fault, store, first) = try Self.faultyStore(["fsync:*:ENOSPC"])
        defer { fault.unmount() }
        let error = try await Self.failedCommit(2, to: store)
        #expect(error.code == .store)
        #expect(error.message == "cannot write the new badge", "\(error)")
        #expect(error.cause?.contains("No space left on device") == true, "\(error)")
        #expect(error.path == store.directory.path)
        #expect(try Data(contentsOf: store.badgeURL) == first, "the old badge changed")
        #expect(store.temporaryFiles().isEmpty, "a temporary was left: \(store.temporaryFiles())")
        #expect(try Data(contentsOf: fault.source.appendingPathComponent("badge.png")) == first, "the old badge changed on disk")
        fault.unmount()
        #expect(fault.log.contains("faultfs: fsync /"), "the fault was never made: \(fault.log)")
    }

    @Test func aFailingHistoryFlushKeepsTheOldBadgeAndNamesTheHistory() async throws {
        let (fault, store, first) = try Self.faultyStore(["fsyncdir:/history:EIO"])
        defer { fault.unmount() }
        let error = try await Self.failedCommit(2, to: store)
        #expect(error.code == .store)
        #expect(error.message == "cannot flush the history directory", "\(error)")
        #expect(error.cause?.contains("Input/output error") == true, "\(error)")
        #expect(error.path == store.historyURL.path, "\(error)")
        #expect(try Data(contentsOf: store.badgeURL) == first, "the old badge changed")
        #expect(store.temporaryFiles().isEmpty, "a temporary was left: \(store.temporaryFiles())")
        fault.unmount()
        #expect(fault.log.contains("faultfs: fsyncdir /history EIO"), "\(fault.log)")
    }

    /// A disk that fails the new badge's write (EIO from write(2), through
    /// the kernel's VFS): the commit says it could not write, names the
    /// store, and leaves the old badge and no temporary.
    @Test func anIOErrorWritingTheNewBadgeKeepsTheOldBadge() async throws {
        let (fault, store, first) = try Self.faultyStore(["write:*:EIO"])
        defer { fault.unmount() }
        let error = try await Self.failedCommit(2, to: store)
        #expect(error.code == .store)
        #expect(error.message == "cannot write the new badge", "\(error)")
        #expect(error.cause?.contains("Input/output error") == true, "\(error)")
        #expect(error.path == store.directory.path, "\(error)")
        #expect(try Data(contentsOf: store.badgeURL) == first, "the old badge changed")
        #expect(store.temporaryFiles().isEmpty, "a temporary was left: \(store.temporaryFiles())")
        #expect(try Data(contentsOf: fault.source.appendingPathComponent("badge.png")) == first, "the old badge changed on disk")
        fault.unmount()
        #expect(fault.log.contains("faultfs: write /"), "the fault was never made: \(fault.log)")
    }

    /// The history link of the badge being replaced fails with EIO: nothing
    /// is replaced, the error names the history entry, and no temporary is left.
    @Test func anIOErrorLinkingTheOldBadgeIntoTheHistoryReplacesNothing() async throws {
        let (fault, store, first) = try Self.faultyStore(["link:/history/*:EIO"])
        defer { fault.unmount() }
        let old = try #require(try BadgeMetadata.read(from: store.badgeURL))
        let error = try await Self.failedCommit(2, to: store)
        #expect(error.code == .store)
        #expect(error.message == "cannot keep the current badge in the history", "\(error)")
        #expect(error.cause?.contains("Input/output error") == true, "\(error)")
        #expect(error.path == store.historyURL.appendingPathComponent("\(old.id).png").path, "\(error)")
        #expect(try Data(contentsOf: store.badgeURL) == first, "the old badge changed")
        #expect(store.temporaryFiles().isEmpty, "a temporary was left: \(store.temporaryFiles())")
        fault.unmount()
        #expect(fault.log.contains("faultfs: link /history/\(old.id).png EIO"), "\(fault.log)")
    }

    /// The rename over badge.png fails with EIO: the old badge is still the
    /// current one, byte for byte, the error names it, and the new file is gone.
    @Test func anIOErrorRenamingTheNewBadgeIntoPlaceKeepsTheOldBadge() async throws {
        let (fault, store, first) = try Self.faultyStore(["rename:/badge.png:EIO"])
        defer { fault.unmount() }
        let error = try await Self.failedCommit(2, to: store)
        #expect(error.code == .store)
        #expect(error.message == "cannot replace the badge", "\(error)")
        #expect(error.cause?.contains("Input/output error") == true, "\(error)")
        #expect(error.path == store.badgeURL.path, "\(error)")
        #expect(try Data(contentsOf: store.badgeURL) == first, "the old badge changed")
        #expect(try Data(contentsOf: fault.source.appendingPathComponent("badge.png")) == first, "the old badge changed on disk")
        #expect(store.temporaryFiles().isEmpty, "a temporary was left: \(store.temporaryFiles())")
        fault.unmount()
        #expect(fault.log.contains("faultfs: rename /badge.png EIO"), "\(fault.log)")
    }

    /// After the rename the new badge is in place; a failing flush of the
    /// store's directory is reported, and the old badge is whole in the history.
    @Test func aFailingFlushAfterTheRenameSaysSoAndTheOldBadgeIsInTheHistory() async throws {
        let (fault, store, first) = try Self.faultyStore(["fsyncdir:/:EIO"])
        defer { fault.unmount() }
        let old = try #require(try BadgeMetadata.read(from: store.badgeURL))
        let error = try await Self.failedCommit(2, to: store)
        #expect(error.code == .store)
        #expect(error.message == "the new badge is the current one, but the disk did not confirm the store's folder: a crash now could bring back the one before", "\(error)")
        #expect(error.hint == "check the disk (dmesg); badge show says which badge is current", "the hint must not say the badge is unchanged: \(error)")
        #expect(error.cause?.contains("Input/output error") == true, "\(error)")
        #expect(error.path == store.directory.path)
        #expect(try BadgeMetadata.read(from: store.badgeURL)?.prompt == "promise 2", "the new badge is not the one in place")
        #expect(try Data(contentsOf: store.historyURL.appendingPathComponent("\(old.id).png")) == first, "the old badge is not whole in the history")
        #expect(store.temporaryFiles().isEmpty, "a temporary was left: \(store.temporaryFiles())")
        fault.unmount()
        #expect(fault.log.contains("faultfs: fsyncdir / EIO"), "\(fault.log)")
    }
}
