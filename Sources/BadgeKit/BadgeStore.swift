#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A badge on disk: where it is and what it says about itself.
public struct StoredBadge: Sendable, Equatable {
    public var url: URL
    public var metadata: BadgeMetadata
    public var byteCount: Int
    /// For a history entry, when it was replaced: its file's status-change time, which the
    /// hard link into `history/` (and the rename over `badge.png`) set, and nothing later does.
    public var replacedAt: Date?
}

/// The persistence stage: one directory holding the one current `badge.png`,
/// the badges it replaced under `history/`, and a `.lock`.
///
/// Every change is a commit: take the lock, sweep stale temporaries, write the
/// new file to a temporary created with O_EXCL beside `badge.png`, fsync it,
/// hard-link the current badge into `history/`, rename(2) the temporary over
/// `badge.png`, fsync the directory, prune, unlock. A failure or a kill at any
/// point before the rename leaves the old badge as it was; after it, the new
/// one is complete. Readers never need the lock.
public struct BadgeStore: Sendable {
    public static let badgeFileName = "badge.png"
    public static let historyDirectoryName = "history"
    public static let lockFileName = ".lock"

    public let directory: URL
    public var historyLimit: Int
    public var fileSystem: any StoreFileSystem
    /// How long a writer waits for another to finish before giving up.
    public var lockTimeout: Duration

    public init(
        directory: URL, historyLimit: Int = BadgeConfig.historyLimitDefault,
        fileSystem: any StoreFileSystem = PosixFileSystem(), lockTimeout: Duration = .seconds(30)
    ) {
        self.directory = directory
        self.historyLimit = historyLimit
        self.fileSystem = fileSystem
        self.lockTimeout = lockTimeout
    }

    public var badgeURL: URL { directory.appendingPathComponent(Self.badgeFileName) }
    public var historyURL: URL { directory.appendingPathComponent(Self.historyDirectoryName, isDirectory: true) }
    var lockURL: URL { directory.appendingPathComponent(Self.lockFileName) }

    // MARK: - Reading (no lock)

    /// The current badge, or nil if there is none yet.
    public func current() throws -> StoredBadge? {
        try read(badgeURL)
    }

    func read(_ url: URL) throws -> StoredBadge? {
        guard let status = try Self.fileStatus(url, what: "cannot read the badge") else { return nil }
        let metadata: BadgeMetadata?
        do {
            metadata = try BadgeMetadata.read(from: url)
        } catch let error as BadgeError where error.code == .io {
            throw BadgeError(.store, "cannot read the badge", path: url.path, cause: error.cause,
                             hint: Self.readHint(for: directory))
        }
        guard let metadata else {
            throw BadgeError(.store, "the file carries no badge metadata", path: url.path,
                             hint: "it was not written by badge; move it away or run 'badge generate' to replace it")
        }
        let changed = Date(timeIntervalSince1970: Double(status.st_ctim.tv_sec) + Double(status.st_ctim.tv_nsec) / 1e9)
        return StoredBadge(url: url, metadata: metadata, byteCount: Int(status.st_size),
                           replacedAt: url.deletingLastPathComponent().lastPathComponent == Self.historyDirectoryName ? changed : nil)
    }

    /// The size of the file at `url`, or nil when there is none (ENOENT, or a
    /// missing directory on the way). Any other failure (EACCES on a store at
    /// mode 000, EIO, ELOOP) is an error naming the path: an unreadable store
    /// must never look like an empty one.
    public static func fileSize(_ url: URL, what: String, code: BadgeError.Code = .store) throws -> Int? {
        try fileStatus(url, what: what, code: code).map { Int($0.st_size) }
    }

    static func fileStatus(_ url: URL, what: String, code: BadgeError.Code = .store) throws -> stat? {
        var info = stat()
        if stat(url.path, &info) == 0 { return info }
        let errnoCode = errno
        if errnoCode == ENOENT || errnoCode == ENOTDIR { return nil }
        throw BadgeError(code, what, path: url.path, cause: BadgeError.errnoDescription(errnoCode),
                         hint: readHint(for: url.deletingLastPathComponent()))
    }

    static func readHint(for directory: URL) -> String {
        "check the permissions of \(directory.path) (run as the user who owns the store), or choose another store with --store"
    }

    /// The replaced badges, the most recently replaced first. Entries without badge metadata are skipped;
    /// a history directory that exists but cannot be listed is an error.
    public func history() throws -> [StoredBadge] {
        let currentID = try current()?.metadata.id
        return try historyEntries().filter { $0.metadata.id != currentID }
    }

    private func historyEntries() throws -> [StoredBadge] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: historyURL.path)
        } catch {
            // stat tells a missing history (nil: nothing replaced yet) from an unreadable one (throws).
            guard try Self.fileSize(historyURL, what: "cannot list the history") != nil else { return [] }
            throw BadgeError(.store, "cannot list the history", path: historyURL.path,
                             cause: (error as NSError).localizedDescription, hint: Self.readHint(for: historyURL))
        }
        return try names.filter { $0.hasSuffix(".png") && !$0.hasPrefix(".") }
            .compactMap { name -> StoredBadge? in
                do {
                    return try read(historyURL.appendingPathComponent(name))
                } catch let error as BadgeError where error.code == .store && error.cause != nil {
                    throw error
                } catch {
                    return nil
                }
            }
            .sorted {
                ($0.replacedAt ?? $0.metadata.createdAt, $0.metadata.createdAt, $0.metadata.id)
                    > ($1.replacedAt ?? $1.metadata.createdAt, $1.metadata.createdAt, $1.metadata.id)
            }
    }

    /// Finds a history entry by id or unique id prefix (at least 4 characters).
    public func historyEntry(matching prefix: String) throws -> StoredBadge {
        let query = prefix.lowercased()
        guard query.count >= 4 else {
            throw BadgeError(.usage, "the id \"\(prefix)\" is too short", hint: "give at least 4 characters of an id from 'badge history'")
        }
        let matches = try history().filter { $0.metadata.id.hasPrefix(query) }
        if matches.count > 1 {
            throw BadgeError(.usage, "the id \"\(prefix)\" matches \(matches.count) badges", hint: "give more characters of the id")
        }
        guard let match = matches.first else {
            throw BadgeError(.notFound, "no badge in the history has the id \"\(prefix)\"", path: historyURL.path,
                             hint: "'badge history' lists the ids")
        }
        return match
    }

    // MARK: - Committing

    /// Makes `png` (already stamped with `metadata`) the current badge.
    /// Blocking: call it through `BlockingExecutor` from async code.
    @discardableResult
    public func commit(_ png: Data, metadata: BadgeMetadata) throws -> StoredBadge {
        try withLock {
            try replaceCurrent(with: png)
            return StoredBadge(url: badgeURL, metadata: metadata, byteCount: png.count)
        }
    }

    /// Makes a history entry the current badge again, date and all. The badge
    /// it replaces goes into the history; restoring is itself a commit.
    @discardableResult
    public func restore(id prefix: String) throws -> StoredBadge {
        try withLock {
            let entry = try historyEntry(matching: prefix)
            let data: Data
            do {
                data = try Data(contentsOf: entry.url)
            } catch {
                throw BadgeError(.store, "cannot read the history entry", path: entry.url.path, cause: "\(error)")
            }
            try replaceCurrent(with: data)
            try? fileSystem.unlink(entry.url.path)
            return StoredBadge(url: badgeURL, metadata: entry.metadata, byteCount: data.count)
        }
    }

    /// Removes temporaries left by killed writers. Takes the lock, so it never
    /// touches the file of a writer that is still running.
    public func sweep() throws {
        guard FileManager.default.fileExists(atPath: directory.path) else { return }
        try withLock { sweepTemporaries() }
    }

    /// Sweeps only if no other writer holds the lock right now (that writer
    /// sweeps itself). Cheap enough for the start of every run, so leftovers
    /// of killed runs never pile up even when later runs are killed too.
    public func sweepIfIdle() {
        guard FileManager.default.fileExists(atPath: lockURL.path),
              let fd = try? fileSystem.open(lockURL.path, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0o644) else { return }
        defer { try? fileSystem.close(fd) }
        guard (try? fileSystem.flock(fd, LOCK_EX | LOCK_NB)) != nil else { return }
        defer { try? fileSystem.flock(fd, LOCK_UN) }
        sweepTemporaries()
    }

    /// Files in the store that are temporaries (for tests and `sweep`).
    public func temporaryFiles() -> [String] {
        var found: [String] = []
        for dir in [directory, historyURL] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            found += names.filter { $0.hasPrefix(".") && $0.hasSuffix(AtomicFileWriter.temporarySuffix) }
                .map { dir.appendingPathComponent($0).path }
        }
        return found
    }

    // MARK: - Internals

    private func storeError(_ what: String, _ error: SystemCallError, path: String) -> BadgeError {
        let hint: String
        switch error.errno {
        case ENOSPC, EDQUOT: hint = "free some disk space and try again; the current badge is unchanged"
        case EROFS: hint = "the store is on a read-only file system; choose another with --store or $BADGE_STORE"
        case EACCES, EPERM: hint = "check the permissions of \(directory.path), or choose another store with --store"
        case EFBIG: hint = "a file size limit (ulimit -f) stopped the write; the current badge is unchanged"
        default: hint = "the current badge is unchanged"
        }
        return BadgeError(.store, what, path: path, cause: error.description, hint: hint)
    }

    private func ensureDirectories() throws {
        for dir in [directory, historyURL] {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: dir.path, isDirectory: &isDirectory) {
                if !isDirectory.boolValue {
                    throw BadgeError(.store, "the store path exists but is not a directory", path: dir.path,
                                     hint: "choose another store with --store")
                }
                continue
            }
            do {
                try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            } catch {
                throw BadgeError(.store, "cannot create the store directory", path: dir.path,
                                 cause: (error as NSError).localizedDescription,
                                 hint: "check the permissions of its parent, or choose another store with --store")
            }
        }
    }

    private func withLock<T>(_ body: () throws -> T) throws -> T {
        try ensureDirectories()
        let fd: Int32
        do {
            fd = try fileSystem.open(lockURL.path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        } catch {
            throw storeError("cannot open the store's lock file", error, path: lockURL.path)
        }
        defer { try? fileSystem.close(fd) }
        let deadline = ContinuousClock.now.advanced(by: lockTimeout)
        while true {
            do {
                try fileSystem.flock(fd, LOCK_EX | LOCK_NB)
                break
            } catch where error.errno == EWOULDBLOCK {
                if ContinuousClock.now >= deadline {
                    throw BadgeError(.store, "another badge process has held the store's lock for \(lockTimeout)",
                                     path: lockURL.path, hint: "wait for it to finish, or stop it, and try again")
                }
                usleep(5_000)
            } catch {
                throw storeError("cannot lock the store", error, path: lockURL.path)
            }
        }
        defer { try? fileSystem.flock(fd, LOCK_UN) }
        sweepTemporaries()
        return try body()
    }

    private func sweepTemporaries() {
        for path in temporaryFiles() { try? fileSystem.unlink(path) }
    }

    /// The commit itself; the caller holds the lock.
    private func replaceCurrent(with png: Data) throws {
        let writer = AtomicFileWriter(fileSystem: fileSystem)
        let temporary: String
        do {
            temporary = try writer.writeTemporary(png, besides: badgeURL)
        } catch {
            throw storeError("cannot write the new badge", error, path: directory.path)
        }
        do {
            try keepCurrentInHistory()
            do {
                try fileSystem.rename(temporary, badgeURL.path)
            } catch {
                throw storeError("cannot replace the badge", error, path: badgeURL.path)
            }
        } catch {
            try? fileSystem.unlink(temporary)
            throw error
        }
        do {
            try writer.syncDirectory(directory)
        } catch {
            throw storeError("the new badge is in place but the directory could not be flushed to disk", error, path: directory.path)
        }
        prune()
    }

    /// Hard-links the current badge into history/ under its id. Idempotent: an
    /// entry left by a writer killed before its rename is simply reused.
    private func keepCurrentInHistory() throws {
        guard FileManager.default.fileExists(atPath: badgeURL.path) else { return }
        let id = ((try? BadgeMetadata.read(from: badgeURL)) ?? nil)?.id ?? "\(Self.foreignPrefix)\(Int(Date().timeIntervalSince1970))"
        let entry = historyURL.appendingPathComponent("\(id).png")
        do {
            try fileSystem.link(badgeURL.path, entry.path)
        } catch where error.errno == EEXIST {
            return
        } catch {
            throw storeError("cannot keep the current badge in the history", error, path: entry.path)
        }
        do {
            try AtomicFileWriter(fileSystem: fileSystem).syncDirectory(historyURL)
        } catch {
            throw storeError("cannot flush the history directory", error, path: historyURL.path)
        }
    }

    /// Keeps the newest `historyLimit` entries and drops the entry of the badge
    /// that is current again (after a restore). Files that were at the badge
    /// path without badge metadata are kept as `unknown-<time>.png`, outside
    /// the history's list; the newest `historyLimit` of those are kept too.
    private func prune() {
        let currentID = ((try? BadgeMetadata.read(from: badgeURL)) ?? nil)?.id
        let entries = (try? historyEntries()) ?? []
        var kept = 0
        for entry in entries {
            if entry.metadata.id == currentID || kept >= historyLimit {
                try? fileSystem.unlink(entry.url.path)
            } else {
                kept += 1
            }
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: historyURL.path)) ?? []
        let foreign = names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix(Self.foreignPrefix), name.hasSuffix(".png"),
                  let time = Int(name.dropFirst(Self.foreignPrefix.count).dropLast(4)) else { return nil }
            return (time, name)
        }
        for (_, name) in foreign.sorted(by: >).dropFirst(historyLimit) {
            try? fileSystem.unlink(historyURL.appendingPathComponent(name).path)
        }
    }

    private static let foreignPrefix = "unknown-"
}
