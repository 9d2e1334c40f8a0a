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
    /// What a commit made private: a store others could read (an earlier badge's 0755,
    /// files 0644, or a folder made with mkdir) is tightened to 0700 and 0600 on its
    /// first commit. Empty when nothing changed.
    public var tightened: [TightenedPath] = []
}

/// A path of the store that a commit made its owner's alone, and the mode it had.
public struct TightenedPath: Sendable, Equatable {
    public var path: String
    public var mode: mode_t

    public init(path: String, mode: mode_t) {
        self.path = path
        self.mode = mode
    }
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
///
/// All of it happens relative to the store directory opened by descriptor
/// (O_DIRECTORY|O_NOFOLLOW): a history entry's name is its badge's id, and an
/// id is 16 lowercase hex digits or the file is taken for a foreign one, so
/// no name a file carries can lead out of the store. A store, or a history
/// directory, that another user owns or others may write to is refused; the
/// store is created 0700 and its files 0600, and a commit tightens an older
/// store's 0755 and 0644 to those.
public struct BadgeStore: Sendable {
    public static let badgeFileName = "badge.png"
    public static let historyDirectoryName = "history"
    public static let lockFileName = ".lock"

    public let directory: URL
    public var historyLimit: Int
    package var fileSystem: any StoreFileSystem
    /// How long a writer waits for another to finish before giving up.
    public var lockTimeout: Duration

    public init(directory: URL, historyLimit: Int = BadgeConfig.historyLimitDefault, lockTimeout: Duration = .seconds(30)) {
        self.init(directory: directory, historyLimit: historyLimit, fileSystem: PosixFileSystem(), lockTimeout: lockTimeout)
    }

    /// A store over another file system: tests inject faults through it.
    package init(
        directory: URL, historyLimit: Int = BadgeConfig.historyLimitDefault,
        fileSystem: any StoreFileSystem, lockTimeout: Duration = .seconds(30)
    ) {
        self.directory = directory
        self.historyLimit = historyLimit
        self.fileSystem = fileSystem
        self.lockTimeout = lockTimeout
    }

    public var badgeURL: URL { directory.appendingPathComponent(Self.badgeFileName) }
    public var historyURL: URL { directory.appendingPathComponent(Self.historyDirectoryName, isDirectory: true) }
    var lockURL: URL { directory.appendingPathComponent(Self.lockFileName) }

    // MARK: - Opening

    /// The store directory and its history, held open by descriptor for one
    /// operation: every file is reached relative to them (openat, linkat,
    /// renameat, unlinkat), never by a path made from a file's contents.
    final class Handle {
        let directory: Int32
        /// nil while there is no history directory (only when reading).
        let history: Int32?
        /// What `tighten` made private during this operation.
        var tightened: [TightenedPath] = []

        init(directory: Int32, history: Int32?) {
            self.directory = directory
            self.history = history
        }

        deinit {
            Glibc.close(directory)
            if let history { Glibc.close(history) }
        }
    }

    /// Opens the store (O_DIRECTORY|O_NOFOLLOW) and checks that only its
    /// owner can change it: another user's store, or one that others may
    /// write to, could have anything planted in it. `create` makes the store
    /// (0700) and its history when they are missing; without it, a missing
    /// store is nil.
    func open(create: Bool) throws -> Handle? {
        if create { try makeDirectory() }
        let fd: Int32
        do {
            fd = try fileSystem.openat(AT_FDCWD, directory.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        } catch {
            switch error.errno {
            case ENOENT where !create: return nil
            case ENOTDIR:
                throw notADirectory() ?? storeError("cannot open the store directory", error, path: directory.path)
            case ELOOP:
                throw BadgeError(.store, "the store directory is a symbolic link; badge does not follow it", path: directory.path,
                                 hint: "give the real directory with --store or $BADGE_STORE")
            default:
                throw storeError("cannot open the store directory", error, path: directory.path)
            }
        }
        do {
            try checkOwnership(fd, what: "store directory", url: directory)
        } catch {
            Glibc.close(fd)
            throw error
        }
        let history: Int32?
        do {
            history = try openHistory(in: fd, create: create)
            if let history { try checkOwnership(history, what: "store's history directory", url: historyURL) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        return Handle(directory: fd, history: history)
    }

    /// Refuses a directory that another user owns or others may write to:
    /// whoever can write there could plant files in it.
    private func checkOwnership(_ fd: Int32, what: String, url: URL) throws {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw storeError("cannot open the \(what)", SystemCallError("fstat", errno), path: url.path)
        }
        if info.st_uid != geteuid() {
            throw BadgeError(.store, "the \(what) belongs to another user (uid \(info.st_uid)), who could plant files in it",
                             path: url.path,
                             hint: "choose a store of your own with --store or $BADGE_STORE, or take it over: chown -R \(geteuid()) \(directory.path)")
        }
        if info.st_mode & 0o022 != 0 {
            let who = info.st_mode & 0o002 != 0 ? "every user" : "its group"
            throw BadgeError(.store, "the \(what) can be written by \(who), who could plant files in it", path: url.path,
                             hint: "make it yours alone: chmod 700 \(url.path)")
        }
    }

    /// What a command says when a commit made the store private (`StoredBadge.tightened`).
    public static func tightenedMessage(_ paths: [TightenedPath]) -> String {
        "the store was open to other users (\(paths[0].path) was \(String(format: "%04o", paths[0].mode))); it is now yours alone "
            + "(0700, files 0600): \(paths.count) \(paths.count == 1 ? "path" : "paths") changed"
    }

    /// Makes a store that others may read (one an earlier badge made: 0755,
    /// its files 0644) the owner's alone: 0700 for the store and its history,
    /// 0600 for the badge, the lock and the history's files. Returns the paths
    /// it changed. Only regular files and directories of the owner are
    /// touched (the store is already known to be writable by the owner alone).
    private func tighten(_ store: Handle) -> [TightenedPath] {
        var changed: [TightenedPath] = []
        // The owner's bits stay as they are; the group's and others' go.
        func narrow(_ fd: Int32, _ name: String?, url: URL) {
            var info = stat()
            let found = name.map { fstatat(fd, $0, &info, AT_SYMLINK_NOFOLLOW) } ?? fstat(fd, &info)
            guard found == 0, info.st_uid == geteuid(), info.st_mode & 0o077 != 0,
                  info.st_mode & S_IFMT == (name == nil ? S_IFDIR : S_IFREG) else { return }
            let mode = info.st_mode & 0o700
            if (name.map { fchmodat(fd, $0, mode, 0) } ?? fchmod(fd, mode)) == 0 {
                changed.append(TightenedPath(path: url.path, mode: info.st_mode & 0o7777))
            }
        }
        narrow(store.directory, nil, url: directory)
        narrow(store.directory, Self.badgeFileName, url: badgeURL)
        narrow(store.directory, Self.lockFileName, url: lockURL)
        if let history = store.history {
            narrow(history, nil, url: historyURL)
            for name in directoryEntries(history) where name.hasSuffix(".png") {
                narrow(history, name, url: historyURL.appendingPathComponent(name))
            }
        }
        return changed
    }

    /// The store path, or the folder on the way to it, that is a file (or
    /// anything but a directory), named; nil when each that exists is a
    /// directory. ENOTDIR says only that one is not.
    private func notADirectory() -> BadgeError? {
        var path = directory.standardizedFileURL
        var blocking: URL?
        while path.path != "/" {
            var info = stat()
            if lstat(path.path, &info) == 0 && info.st_mode & S_IFMT != S_IFDIR { blocking = path }
            path = path.deletingLastPathComponent()
        }
        guard let blocking else { return nil }
        if blocking.path == directory.standardizedFileURL.path {
            return BadgeError(.store, "the store path exists but is not a directory", path: directory.path,
                              hint: "choose another store with --store")
        }
        return BadgeError(.store, "the store cannot be there: \(blocking.path) is a file, not a folder", path: directory.path,
                          hint: "choose another store with --store")
    }

    /// Creates the store directory 0700 (its parents as the user's umask says).
    private func makeDirectory() throws {
        let parent = directory.deletingLastPathComponent()
        do {
            try makeDirectories(parent)
            try fileSystem.mkdirat(AT_FDCWD, directory.path, 0o700)
        } catch let error as SystemCallError where error.errno == EEXIST {
            return
        } catch let error as SystemCallError {
            throw notADirectory() ?? storeError("cannot create the store directory", error, path: directory.path)
        } catch let error as MakeDirectoryFailure {
            if let blocked = notADirectory() { throw blocked }
            throw error.error("the store's folder", at: parent, code: .store,
                              hint: "check the permissions of its parent, or choose another store with --store")
        }
    }

    /// `history/`, a directory of the store's own: a symbolic link there is refused.
    private func openHistory(in store: Int32, create: Bool) throws -> Int32? {
        let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
        do {
            return try fileSystem.openat(store, Self.historyDirectoryName, flags, 0)
        } catch where error.errno == ENOENT {
            guard create else { return nil }
        } catch where error.errno == ELOOP || error.errno == ENOTDIR {
            throw BadgeError(.store, "the store's history is not a directory of its own (a symbolic link or a file); badge does not follow it",
                             path: historyURL.path,
                             hint: "move it away (mv \(historyURL.path) \(historyURL.path).old) and run badge again")
        } catch {
            throw storeError("cannot open the history directory", error, path: historyURL.path)
        }
        do {
            try fileSystem.mkdirat(store, Self.historyDirectoryName, 0o700)
        } catch where error.errno == EEXIST {
        } catch {
            throw storeError("cannot create the history directory", error, path: historyURL.path)
        }
        return try openHistory(in: store, create: false)
    }

    // MARK: - Reading (no lock)

    /// The current badge, or nil if there is none yet.
    public func current() throws -> StoredBadge? {
        guard let store = try open(create: false) else { return nil }
        return try read(Self.badgeFileName, in: store.directory, url: badgeURL)
    }

    /// The current badge and its bytes, both read through one descriptor (the
    /// metadata and the bytes are one file's, whatever a commit does
    /// meanwhile), or nil if there is none yet.
    public func currentWithBytes() throws -> (badge: StoredBadge, png: Data)? {
        guard let store = try open(create: false) else { return nil }
        return try read(Self.badgeFileName, in: store.directory, url: badgeURL, inHistory: false, withBytes: true)
            .map { ($0.badge, $0.png!) }
    }

    /// The history entry `historyEntry(matching:)` finds, and its bytes, both
    /// read through one descriptor.
    public func historyEntryWithBytes(matching prefix: String) throws -> (badge: StoredBadge, png: Data) {
        let match = try historyEntry(matching: prefix)
        guard let store = try open(create: false), let history = store.history,
              let found = try read(match.url.lastPathComponent, in: history, url: match.url, inHistory: true, withBytes: true),
              found.badge.metadata.id == match.metadata.id
        else {
            throw BadgeError(.notFound, "no badge in the history has the id \"\(prefix)\"", path: historyURL.path,
                             hint: "'badge history' lists the ids")
        }
        return (found.badge, found.png!)
    }

    /// The badge `name` in the directory `fd`; nil when there is none. The
    /// file must be a regular file (not a symlink, FIFO or device) with badge
    /// metadata whose id is a badge's. An entry of `history/` records when it
    /// was replaced (the time it was linked there).
    func read(_ name: String, in fd: Int32, url: URL, inHistory: Bool = false) throws -> StoredBadge? {
        try read(name, in: fd, url: url, inHistory: inHistory, withBytes: false)?.badge
    }

    /// `read`, and with `withBytes` the whole file too, from the same descriptor.
    private func read(_ name: String, in fd: Int32, url: URL, inHistory: Bool, withBytes: Bool) throws -> (badge: StoredBadge, png: Data?)? {
        let file: RegularFile
        do {
            file = try RegularFile(name, in: fd, followSymlinks: false)
        } catch .system(_, ENOENT) {
            return nil
        } catch {
            let hint = error.errno == EACCES || error.errno == EPERM
                ? Self.readHint(for: directory) : "move it away; 'badge generate' puts a new badge in its place"
            throw BadgeError(.store, "cannot read the badge", path: url.path, cause: error.description, hint: hint)
        }
        guard let metadata = BadgeMetadata(entries: try PNG.readHeaderText(from: file, path: url.path)) else {
            throw BadgeError(.store, "the file carries no badge metadata", path: url.path,
                             hint: "it was not written by badge; move it away or run 'badge generate' to replace it")
        }
        let badge = StoredBadge(url: url, metadata: metadata, byteCount: file.size, replacedAt: inHistory ? file.modified : nil)
        guard withBytes else { return (badge, nil) }
        do throws(RegularFile.Failure) {
            guard lseek(file.fd, 0, SEEK_SET) == 0 else { throw .system("lseek", errno) }
            return (badge, try file.readAll(limit: Self.maxBadgeBytes))
        } catch {
            throw BadgeError(.store, "cannot read the badge", path: url.path, cause: error.description)
        }
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
        guard let store = try open(create: false) else { return [] }
        return history(store)
    }

    private func history(_ store: Handle) -> [StoredBadge] {
        let currentID = currentID(store)
        return historyEntries(store).filter { $0.metadata.id != currentID }
    }

    /// The history's badges, the most recently replaced first; entries that cannot be read as badges are skipped.
    private func historyEntries(_ store: Handle) -> [StoredBadge] {
        guard let history = store.history else { return [] }
        return directoryEntries(history).filter { $0.hasSuffix(".png") && !$0.hasPrefix(".") }
            .compactMap { name in (try? read(name, in: history, url: historyURL.appendingPathComponent(name), inHistory: true)) ?? nil }
            .sorted {
                ($0.replacedAt ?? $0.metadata.createdAt, $0.metadata.createdAt, $0.metadata.id)
                    > ($1.replacedAt ?? $1.metadata.createdAt, $1.metadata.createdAt, $1.metadata.id)
            }
    }

    /// Finds a history entry by id or unique id prefix (at least 4 characters).
    public func historyEntry(matching prefix: String) throws -> StoredBadge {
        try historyEntry(matching: prefix, in: history())
    }

    private func historyEntry(matching prefix: String, in history: [StoredBadge]) throws -> StoredBadge {
        let query = prefix.lowercased()
        guard query.count >= 4 else {
            throw BadgeError(.usage, "the id \"\(prefix)\" is too short", hint: "give at least 4 characters of an id from 'badge history'")
        }
        let matches = history.filter { $0.metadata.id.hasPrefix(query) }
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

    /// Makes `badge` the current badge. A ``CheckedBadge`` is the only thing
    /// a commit takes: its bytes were admitted by the intake, stamped with its
    /// metadata and inflated by zlib before they got here.
    /// Blocking: call it through `BlockingExecutor` from async code.
    @discardableResult
    public func commit(_ badge: CheckedBadge) throws -> StoredBadge {
        try withLock { store in
            try replaceCurrent(with: badge.png, in: store)
            return StoredBadge(url: badgeURL, metadata: badge.metadata, byteCount: badge.png.count, tightened: store.tightened)
        }
    }

    /// Makes a history entry the current badge again, date and all. The badge
    /// it replaces goes into the history; restoring is itself a commit. The
    /// entry's bytes go back as they are, not as a ``CheckedBadge``: a new
    /// stamp would change what the file records (its generator's version, for
    /// `badge verify`), and its id and date are the promise kept. They are the
    /// file an earlier commit wrote, found by its id in the store's own
    /// history directory, and zlib inflates them again first: an entry damaged
    /// on disk since is refused, and the current badge stays.
    @discardableResult
    public func restore(id prefix: String) throws -> StoredBadge {
        try withLock { store in
            let entry = try historyEntry(matching: prefix, in: history(store))
            let name = entry.url.lastPathComponent
            let data: Data
            do throws(RegularFile.Failure) {
                data = try RegularFile.contents(of: name, in: store.history!, followSymlinks: false, limit: Self.maxBadgeBytes)
            } catch {
                throw BadgeError(.store, "cannot read the history entry", path: entry.url.path, cause: error.description)
            }
            do {
                try PNGDataCheck.verify(data)
            } catch var error as BadgeError {
                error.path = entry.url.path
                error.hint = "the history entry is damaged; the current badge is unchanged"
                throw error
            }
            // Its badge is current again, so the commit's pruning removes the entry.
            try replaceCurrent(with: data, in: store)
            return StoredBadge(url: badgeURL, metadata: entry.metadata, byteCount: data.count, tightened: store.tightened)
        }
    }

    /// The largest badge file read back whole (an 8192 px badge of noise is ~270 MB).
    public static let maxBadgeBytes = 512 << 20

    /// Removes temporaries left by killed writers. Takes the lock, so it never
    /// touches the file of a writer that is still running.
    public func sweep() throws {
        guard FileManager.default.fileExists(atPath: directory.path) else { return }
        try withLock { store in sweepTemporaries(store) }
    }

    /// Sweeps only if no other writer holds the lock right now (that writer
    /// sweeps itself). Cheap enough for the start of every run, so leftovers
    /// of killed runs never pile up even when later runs are killed too.
    public func sweepIfIdle() {
        guard let store = (try? open(create: false)) ?? nil,
              let fd = try? fileSystem.openat(store.directory, Self.lockFileName, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0o600) else { return }
        defer { try? fileSystem.close(fd) }
        guard (try? fileSystem.flock(fd, LOCK_EX | LOCK_NB)) != nil else { return }
        defer { try? fileSystem.flock(fd, LOCK_UN) }
        sweepTemporaries(store)
    }

    /// Files in the store that are temporaries (for tests and `sweep`).
    public func temporaryFiles() -> [String] {
        guard let store = (try? open(create: false)) ?? nil else { return [] }
        return temporaryNames(store).map { ($0.0 == store.directory ? directory : historyURL).appendingPathComponent($0.1).path }
    }

    private func temporaryNames(_ store: Handle) -> [(Int32, String)] {
        var found: [(Int32, String)] = []
        for fd in [store.directory, store.history].compactMap({ $0 }) {
            found += directoryEntries(fd).filter { $0.hasPrefix(".") && $0.hasSuffix(AtomicFileWriter.temporarySuffix) }.map { (fd, $0) }
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

    private func withLock<T>(_ body: (Handle) throws -> T) throws -> T {
        guard let store = try open(create: true) else {
            throw BadgeError(.store, "the store directory could not be created", path: directory.path)
        }
        let fd: Int32
        do {
            fd = try fileSystem.openat(store.directory, Self.lockFileName, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
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
        sweepTemporaries(store)
        store.tightened = tighten(store)
        return try body(store)
    }

    private func sweepTemporaries(_ store: Handle) {
        for (fd, name) in temporaryNames(store) { try? fileSystem.unlinkat(fd, name) }
    }

    /// The commit itself; the caller holds the lock. Files are created 0600:
    /// a promise is personal (the umask may take more away, never add).
    private func replaceCurrent(with png: Data, in store: Handle) throws {
        let writer = AtomicFileWriter(fileSystem: fileSystem)
        let temporary: String
        do {
            temporary = try writer.writeTemporary(png, for: Self.badgeFileName, in: store.directory, mode: 0o600)
        } catch {
            throw storeError("cannot write the new badge", error, path: directory.path)
        }
        TestHold.here("commit-after-fsync")
        do {
            try keepCurrentInHistory(store)
            TestHold.here("commit-after-history-link")
            do {
                try fileSystem.renameat(store.directory, temporary, store.directory, Self.badgeFileName)
            } catch {
                throw storeError("cannot replace the badge", error, path: badgeURL.path)
            }
        } catch {
            try? fileSystem.unlinkat(store.directory, temporary)
            throw error
        }
        TestHold.here("commit-after-rename")
        do {
            try fileSystem.fsync(store.directory)
        } catch {
            // Past the rename: the new badge is the current one, which the words say.
            throw BadgeError(.store, "the new badge is the current one, but the disk did not confirm the store's folder: a crash now could bring back the one before",
                             path: directory.path, cause: error.description,
                             hint: "check the disk (dmesg); badge show says which badge is current")
        }
        prune(store)
    }

    /// The id of the badge at `badge.png`, if it is a regular file with a
    /// badge's metadata (its id then is 16 hex digits: `BadgeMetadata` checks).
    private func currentID(_ store: Handle) -> String? {
        ((try? read(Self.badgeFileName, in: store.directory, url: badgeURL)) ?? nil)?.metadata.id
    }

    /// Hard-links the current badge into history/ under its id (anything at
    /// the badge path without a badge's metadata as `unknown-<time>.png`, or
    /// `unknown-<time>-<n>.png` when another foreign file was kept in the same
    /// second), and marks a badge's entry with the time it was replaced
    /// (`markReplaced`); a foreign file keeps its own times. Idempotent: an
    /// entry left by a writer killed before its rename is reused, for a
    /// foreign file too (found by its inode).
    private func keepCurrentInHistory(_ store: Handle) throws {
        var info = stat()
        guard fstatat(store.directory, Self.badgeFileName, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
        let history = store.history!
        let id = currentID(store)
        let name: String
        if let id {
            name = "\(id).png"
            try link(as: name, in: store, reusingExisting: true)
        } else if let kept = foreignEntry(sameAs: info, in: history) {
            name = kept
        } else {
            let second = Int(Date().timeIntervalSince1970)
            var attempt = 1
            while true {
                let candidate = Self.foreignName(second: second, attempt: attempt)
                if try link(as: candidate, in: store, reusingExisting: false) {
                    name = candidate
                    break
                }
                attempt += 1
                guard attempt <= 10_000 else {
                    throw storeError("cannot keep the current badge in the history", SystemCallError("link", EEXIST),
                                     path: historyURL.appendingPathComponent(candidate).path)
                }
            }
        }
        if id != nil { markReplaced(name, in: history) }
        do {
            try fileSystem.fsync(history)
        } catch {
            throw storeError("cannot flush the history directory", error, path: historyURL.path)
        }
    }

    /// Links badge.png into the history as `name`; false when that name is
    /// taken and `reusingExisting` is false (with it, a taken name is the
    /// entry: a badge's id names one badge).
    @discardableResult
    private func link(as name: String, in store: Handle, reusingExisting: Bool) throws -> Bool {
        do {
            try fileSystem.linkat(store.directory, Self.badgeFileName, store.history!, name)
            return true
        } catch where error.errno == EEXIST {
            return reusingExisting
        } catch {
            throw storeError("cannot keep the current badge in the history", error, path: historyURL.appendingPathComponent(name).path)
        }
    }

    /// Sets a badge entry's modification time (the inode's, which badge.png
    /// shares until the rename) to when it was replaced: the history's order
    /// and its "replaced" times. That is now, or just after the newest other
    /// entry's time when the clock has not passed it: two commits in one tick
    /// of the file system's clock, or a file system that keeps whole seconds
    /// (the time read back decides the step: 1 µs, else 1 s, else 2 s). An
    /// entry more than ``clockSkew`` ahead of now (a clock that was fast, a
    /// touched file) is not followed. When the time cannot be set, the entry
    /// keeps its write time, when it became current, and sorts one place early.
    private func markReplaced(_ name: String, in history: Int32) {
        let now = Self.realTimeNow()
        guard let newest = newestEntryTime(in: history, besides: name), newest.tv_sec - now.tv_sec <= Self.clockSkew else {
            try? fileSystem.setTimes(history, name, to: now)
            return
        }
        // Now (or 1 µs past the newest); when the file system kept less than that, 1 s and 2 s past it.
        for (attempt, step) in [1_000, 1_000_000_000, 2_000_000_000].enumerated() {
            let time = Self.replacementTime(after: newest, now: attempt == 0 ? now : newest, step: step)
            var info = stat()
            guard (try? fileSystem.setTimes(history, name, to: time)) != nil,
                  fstatat(history, name, &info, AT_SYMLINK_NOFOLLOW) == 0, !Self.isAfter(info.st_mtim, newest) else { return }
        }
    }

    /// How far ahead of now an entry's time is still taken for the clock's
    /// own jitter and followed: ten minutes.
    package static let clockSkew = 600

    /// Now, or `step` nanoseconds after `newest` when `newest` is not before
    /// now but at most ``clockSkew`` seconds after it.
    package static func replacementTime(after newest: timespec?, now: timespec, step: Int = 1_000) -> timespec {
        guard let newest, !isAfter(now, newest), newest.tv_sec - now.tv_sec <= clockSkew else { return now }
        let nanoseconds = newest.tv_nsec + step
        return timespec(tv_sec: newest.tv_sec + nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
    }

    static func isAfter(_ a: timespec, _ b: timespec) -> Bool {
        (a.tv_sec, a.tv_nsec) > (b.tv_sec, b.tv_nsec)
    }

    static func realTimeNow() -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now
    }

    /// The latest modification time of the history's badge entries other than `name`.
    private func newestEntryTime(in history: Int32, besides name: String) -> timespec? {
        directoryEntries(history).filter { $0 != name && $0.hasSuffix(".png") && !$0.hasPrefix(".") && Self.foreignOrder($0) == nil }
            .compactMap { entry -> timespec? in
                var info = stat()
                return fstatat(history, entry, &info, AT_SYMLINK_NOFOLLOW) == 0 ? info.st_mtim : nil
            }
            .max { Self.isAfter($1, $0) }
    }

    /// The name of a foreign entry that is the file `info` describes (the same
    /// inode): kept there by a writer killed before its rename.
    private func foreignEntry(sameAs info: stat, in history: Int32) -> String? {
        directoryEntries(history).first { name in
            var existing = stat()
            return Self.foreignOrder(name) != nil && fstatat(history, name, &existing, AT_SYMLINK_NOFOLLOW) == 0
                && existing.st_dev == info.st_dev && existing.st_ino == info.st_ino
        }
    }

    /// Keeps the newest `historyLimit` entries and drops the entry of the badge
    /// that is current again (after a restore). Files that were at the badge
    /// path without badge metadata are kept as `unknown-<time>.png`, outside
    /// the history's list; the newest `historyLimit` of those are kept too.
    private func prune(_ store: Handle) {
        guard let history = store.history else { return }
        let currentID = currentID(store)
        var kept = 0
        for entry in historyEntries(store) {
            if entry.metadata.id == currentID || kept >= historyLimit {
                try? fileSystem.unlinkat(history, entry.url.lastPathComponent)
            } else {
                kept += 1
            }
        }
        let foreign = directoryEntries(history).compactMap { name in Self.foreignOrder(name).map { ($0, name) } }
        for (_, name) in foreign.sorted(by: { ($0.0.second, $0.0.attempt) > ($1.0.second, $1.0.attempt) }).dropFirst(historyLimit) {
            try? fileSystem.unlinkat(history, name)
        }
    }

    private static let foreignPrefix = "unknown-"

    /// `unknown-<second>.png`, or `unknown-<second>-<attempt>.png` after the first.
    static func foreignName(second: Int, attempt: Int) -> String {
        attempt == 1 ? "\(foreignPrefix)\(second).png" : "\(foreignPrefix)\(second)-\(attempt).png"
    }

    /// The second and attempt of a foreign entry's name; nil for any other name.
    static func foreignOrder(_ name: String) -> (second: Int, attempt: Int)? {
        guard name.hasPrefix(foreignPrefix), name.hasSuffix(".png") else { return nil }
        let parts = name.dropFirst(foreignPrefix.count).dropLast(4).split(separator: "-", omittingEmptySubsequences: false)
        guard let second = parts.first.flatMap({ Int($0) }) else { return nil }
        switch parts.count {
        case 1: return (second, 1)
        case 2: return Int(parts[1]).map { (second, $0) }
        default: return nil
        }
    }
}
