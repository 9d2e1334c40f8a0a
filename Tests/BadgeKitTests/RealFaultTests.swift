import BadgeKit
import BadgeKitTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The store's failures on real file systems, beside the `FaultyFileSystem`
/// seam: a full tmpfs (ENOSPC on write; ENOSPC on the history link, when the
/// inodes run out) and a read-only bind mount (EROFS). In each the old badge
/// stays byte for byte and the error names the path. Mounting needs root:
/// as anyone else these are skipped, and the skip says why. (A tmpfs never
/// fails an fsync, and the failure after the rename, the directory's fsync,
/// is covered by the seam only: StoreTests.)
@Suite(.serialized, .enabled(if: getuid() == 0, "needs root to mount a tmpfs and a read-only bind mount; run as root (CI does)"))
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
            process.waitUntilExit()
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
}
