#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The directory a batch writes into, held open by descriptor: every file is
/// created relative to it (openat, renameat) with O_EXCL and O_NOFOLLOW, so
/// nothing is written outside it, through a planted symlink, or over a file
/// half-way: each output appears whole, by rename, or not at all.
package final class BatchOutputDirectory: @unchecked Sendable {
    package let url: URL
    private let fd: Int32

    /// Opens `url`, creating it (and its parents) if needed.
    package init(url: URL) throws {
        self.url = url
        do throws(MakeDirectoryFailure) {
            try makeDirectories(url)
        } catch {
            throw error.error("the output folder", at: url, code: .io, hint: "choose a folder you can write to with --output DIR")
        }
        let fd = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            throw BadgeError(.io, "cannot open the output directory", path: url.path, cause: BadgeError.errnoDescription(errno),
                             hint: "--output must name a directory")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Only plain names that stay in this directory.
    static func check(_ name: String) throws {
        guard !name.isEmpty, !name.hasPrefix("."), !name.contains("/"), !name.utf8.contains(0) else {
            throw BadgeError(.usage, "\(JSONWriter.quote(name)) is not a plain file name")
        }
    }

    /// Atomically writes `data` as `name`: a hidden temporary created with
    /// O_EXCL|O_NOFOLLOW, written, fsynced, then renamed over `name` (rename
    /// replaces a planted symlink itself, never what it points to).
    package func write(_ data: Data, as name: String) throws {
        try Self.check(name)
        let temporary = AtomicFileWriter.temporaryName(for: name)
        let file = openat(fd, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw ioError("cannot create a file in the output directory", name: temporary, errno) }
        var failure = writeAll(file, data)
        if failure == 0 && fsync(file) != 0 { failure = errno }
        if close(file) != 0 && failure == 0 && errno != EINTR { failure = errno }
        if failure == 0 && renameat(fd, temporary, fd, name) != 0 { failure = errno }
        if failure != 0 {
            unlinkat(fd, temporary, 0)
            throw ioError("cannot write the badge", name: name, failure)
        }
    }

    /// Atomically writes `name` from pieces: `produce` hands each piece to the
    /// function it is given, and the file (a hidden temporary until it is
    /// fsynced and renamed, as in `write`) never holds the whole in memory.
    /// If `produce` throws, nothing appears and the temporary is removed.
    package func writeStreaming(_ name: String, _ produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        try Self.check(name)
        let temporary = AtomicFileWriter.temporaryName(for: name)
        let file = openat(fd, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw ioError("cannot create a file in the output directory", name: temporary, errno) }
        do {
            try produce { piece in
                let code = Self.writeBytes(file, piece)
                if code != 0 { throw ioError("cannot write the file", name: name, code) }
            }
        } catch {
            close(file)
            unlinkat(fd, temporary, 0)
            throw error
        }
        var failure: Int32 = 0
        if fsync(file) != 0 { failure = errno }
        if close(file) != 0 && failure == 0 && errno != EINTR { failure = errno }
        if failure == 0 && renameat(fd, temporary, fd, name) != 0 { failure = errno }
        if failure != 0 {
            unlinkat(fd, temporary, 0)
            throw ioError("cannot write the file", name: name, failure)
        }
    }

    /// Creates `name` afresh for writing and reading back in place, not
    /// through a temporary: for a journal that grows while a run goes. What
    /// was there (a killed run's journal, a planted symlink) is removed first,
    /// never followed. The descriptor is the caller's to close.
    package func openJournal(_ name: String) throws -> Int32 {
        try Self.check(name)
        unlinkat(fd, name, 0)
        let file = openat(fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw ioError("cannot create a file in the output directory", name: name, errno) }
        var info = stat()
        guard fstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(file)
            throw ioError("cannot use the file in the output directory", name: name, EINVAL)
        }
        return file
    }

    /// Removes `name` if it is there (a symlink is removed, not followed).
    package func remove(_ name: String) {
        guard (try? Self.check(name)) != nil else { return }
        unlinkat(fd, name, 0)
    }

    /// Hands `name` (a regular file, not a symlink) to `output` in pieces.
    package func copy(_ name: String, to output: (Data) -> Void) throws {
        try Self.check(name)
        let file = openat(fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard file >= 0 else { throw ioError("cannot read the file", name: name, errno) }
        defer { close(file) }
        var info = stat()
        guard fstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw ioError("cannot read the file", name: name, EINVAL) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw ioError("cannot read the file", name: name, errno) }
            if n == 0 { return }
            output(Data(buffer[0..<n]))
        }
    }

    static func writeBytes(_ file: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(file, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return errno }
            offset += n
        }
        return 0
    }

    /// The bytes of `name` if it is a regular file (not a symlink, not a
    /// directory) of at most `maxBytes`; nil otherwise.
    package func read(_ name: String, maxBytes: Int = 256 << 20) -> Data? {
        guard (try? Self.check(name)) != nil else { return nil }
        let file = openat(fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard file >= 0 else { return nil }
        defer { close(file) }
        var info = stat()
        guard fstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) <= maxBytes else { return nil }
        var data = Data(count: Int(info.st_size))
        let complete = data.withUnsafeMutableBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.read(file, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
        return complete ? data : nil
    }

    /// Flushes the directory's entries, so finished renames survive a crash.
    package func sync() {
        fsync(fd)
    }

    /// Removes temporaries of this host's runs that were killed (their pid is
    /// gone). Temporaries carry the host name because shards on other machines
    /// may share the directory: their pids mean nothing here, so they are left alone.
    package func sweepStaleTemporaries() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: url.path) else { return }
        for name in names where AtomicFileWriter.isAbandonedTemporary(name) {
            unlinkat(fd, name, 0)
        }
    }

    /// This machine's name, as temporary files carry it.
    package static var host: String { AtomicFileWriter.host }

    private func ioError(_ message: String, name: String, _ code: Int32) -> BadgeError {
        BadgeError(.io, message, path: url.appendingPathComponent(name).path, cause: BadgeError.errnoDescription(code),
                   hint: code == ENOSPC || code == EFBIG || code == EDQUOT
                       ? "free some space (or raise ulimit -f) and rerun: finished badges are kept"
                       : "check that the output directory is writable")
    }
}
