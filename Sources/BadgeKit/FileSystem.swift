#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// An errno from a system call, with the call's name.
package struct SystemCallError: Error, Sendable, Equatable, CustomStringConvertible {
    package var call: String
    package var errno: Int32
    package init(_ call: String, _ errno: Int32) {
        self.call = call
        self.errno = errno
    }
    package var description: String { "\(call): \(BadgeError.errnoDescription(errno))" }
}

/// The system calls the store makes, behind a protocol so tests can make any
/// one of them fail (ENOSPC on write, EIO on fsync, EROFS on open, a failing
/// rename) and check that nothing is lost. Names are relative to a directory
/// descriptor (`AT_FDCWD` for a path), so the store works inside the
/// directory it opened and a path planted in its contents cannot lead out.
package protocol StoreFileSystem: Sendable {
    func openat(_ directory: Int32, _ name: String, _ flags: Int32, _ mode: mode_t) throws(SystemCallError) -> Int32
    func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int
    func fsync(_ fd: Int32) throws(SystemCallError)
    func close(_ fd: Int32) throws(SystemCallError)
    func renameat(_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String) throws(SystemCallError)
    func linkat(_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String) throws(SystemCallError)
    func unlinkat(_ directory: Int32, _ name: String) throws(SystemCallError)
    func mkdirat(_ directory: Int32, _ name: String, _ mode: mode_t) throws(SystemCallError)
    func flock(_ fd: Int32, _ operation: Int32) throws(SystemCallError)
    /// Sets the access and modification times of `name` (not following a symbolic link).
    func setTimes(_ directory: Int32, _ name: String, to time: timespec) throws(SystemCallError)
}

/// The real thing: thin wrappers that retry on EINTR.
package struct PosixFileSystem: StoreFileSystem {
    package init() {}

    package func openat(_ directory: Int32, _ name: String, _ flags: Int32, _ mode: mode_t) throws(SystemCallError) -> Int32 {
        while true {
            let fd = Glibc.openat(directory, name, flags, mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw SystemCallError("open", errno) }
        }
    }

    package func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int {
        while true {
            let n = Glibc.write(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno != EINTR { throw SystemCallError("write", errno) }
        }
    }

    package func fsync(_ fd: Int32) throws(SystemCallError) {
        while Glibc.fsync(fd) != 0 {
            if errno != EINTR { throw SystemCallError("fsync", errno) }
        }
    }

    package func close(_ fd: Int32) throws(SystemCallError) {
        // Never retry close on EINTR: on Linux the descriptor is already gone.
        if Glibc.close(fd) != 0 && errno != EINTR { throw SystemCallError("close", errno) }
    }

    package func renameat(_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String) throws(SystemCallError) {
        if Glibc.renameat(fromDirectory, from, toDirectory, to) != 0 { throw SystemCallError("rename", errno) }
    }

    package func linkat(_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String) throws(SystemCallError) {
        if Glibc.linkat(fromDirectory, from, toDirectory, to, 0) != 0 { throw SystemCallError("link", errno) }
    }

    package func unlinkat(_ directory: Int32, _ name: String) throws(SystemCallError) {
        if Glibc.unlinkat(directory, name, 0) != 0 { throw SystemCallError("unlink", errno) }
    }

    package func mkdirat(_ directory: Int32, _ name: String, _ mode: mode_t) throws(SystemCallError) {
        if Glibc.mkdirat(directory, name, mode) != 0 { throw SystemCallError("mkdir", errno) }
    }

    package func flock(_ fd: Int32, _ operation: Int32) throws(SystemCallError) {
        while systemFlock(fd, operation) != 0 {
            if errno != EINTR { throw SystemCallError("flock", errno) }
        }
    }

    package func setTimes(_ directory: Int32, _ name: String, to time: timespec) throws(SystemCallError) {
        if utimensat(directory, name, [time, time], AT_SYMLINK_NOFOLLOW) != 0 { throw SystemCallError("utimensat", errno) }
    }
}

private func systemFlock(_ fd: Int32, _ operation: Int32) -> Int32 {
    flock(fd, operation)
}

/// Writing a whole file so that it is either all there or not there at all:
/// a temporary file created with O_EXCL beside the target, written, fsynced,
/// renamed over the target, and the directory fsynced.
package struct AtomicFileWriter: Sendable {
    package let fileSystem: any StoreFileSystem
    package static let temporarySuffix = ".tmp"

    package init(fileSystem: any StoreFileSystem = PosixFileSystem()) {
        self.fileSystem = fileSystem
    }

    /// The name of a temporary file for the file `name`: hidden, naming this
    /// host and process, so that a later run can tell one left by a killed run.
    package static func temporaryName(for name: String) -> String {
        var random = SystemRandomNumberGenerator()
        let tag = hexDigits(UInt64(random.next() as UInt32), count: 8)
        return ".\(name).\(host).\(getpid()).\(tag)\(temporarySuffix)"
    }

    /// Whether `name` is a temporary file (of `target`, if given) left by a
    /// process of this host that no longer exists. Other hosts' temporaries
    /// are never taken for abandoned: a shared directory's pids mean nothing here.
    package static func isAbandonedTemporary(_ name: String, of target: String? = nil) -> Bool {
        guard name.hasPrefix("." + (target.map { $0 + "." } ?? "")), name.hasSuffix(temporarySuffix) else { return false }
        let parts = name.split(separator: ".")
        guard parts.count >= 5, parts[parts.count - 4] == host, let pid = Int32(parts[parts.count - 3]) else { return false }
        return pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
    }

    /// This machine's name, reduced to characters that are safe in a file name.
    package static let host: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let name = String(decoding: bytes, as: UTF8.self).unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "-") ? Character(scalar) : "-"
        }
        return name.isEmpty ? "host" : String(name.prefix(64))
    }()

    /// Creates and fills a temporary file for `target` in the directory
    /// `directory` (a descriptor); returns the temporary's name there. On any
    /// failure the temporary file is removed before the error is thrown.
    package func writeTemporary(_ data: Data, for target: String, in directory: Int32, mode: mode_t = 0o644) throws(SystemCallError) -> String {
        let temporary = Self.temporaryName(for: target)
        let fd = try fileSystem.openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        var isOpen = true
        do throws(SystemCallError) {
            let written: Result<Void, SystemCallError> = data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let chunk = UnsafeRawBufferPointer(rebasing: raw[offset...])
                    do throws(SystemCallError) {
                        let n = try fileSystem.write(fd, chunk)
                        if n == 0 { return .failure(SystemCallError("write", EIO)) }
                        offset += n
                    } catch {
                        return .failure(error)
                    }
                }
                return .success(())
            }
            try written.get()
            try fileSystem.fsync(fd)
            isOpen = false
            try fileSystem.close(fd)
        } catch {
            if isOpen { _ = Glibc.close(fd) }
            try? fileSystem.unlinkat(directory, temporary)
            throw error
        }
        return temporary
    }

    /// Opens a directory for work relative to it.
    package func openDirectory(_ directory: URL) throws(SystemCallError) -> Int32 {
        try fileSystem.openat(AT_FDCWD, directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
    }

    /// Atomically replaces (or creates) `target` with `data`. Temporaries of
    /// `target` that a killed run left behind are removed first.
    package func write(_ data: Data, to target: URL, mode: mode_t = 0o644) throws(SystemCallError) {
        let directory = try openDirectory(target.deletingLastPathComponent())
        defer { try? fileSystem.close(directory) }
        let name = target.lastPathComponent
        for entry in directoryEntries(directory) where Self.isAbandonedTemporary(entry, of: name) {
            try? fileSystem.unlinkat(directory, entry)
        }
        let temporary = try writeTemporary(data, for: name, in: directory, mode: mode)
        do {
            try fileSystem.renameat(directory, temporary, directory, name)
        } catch {
            try? fileSystem.unlinkat(directory, temporary)
            throw error
        }
        try fileSystem.fsync(directory)
    }
}

/// The names in the directory open as `fd` (not "." and ".."), read through
/// a duplicate of the descriptor, so the directory listed is the one opened.
package func directoryEntries(_ fd: Int32) -> [String] {
    let copy = dup(fd)
    guard copy >= 0 else { return [] }
    guard let stream = fdopendir(copy) else {
        Glibc.close(copy)
        return []
    }
    defer { closedir(stream) }
    rewinddir(stream)
    var names: [String] = []
    while let entry = readdir(stream) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// Writes all of `data` to `fd`, retrying on EINTR; returns 0 or the errno.
func writeAll(_ fd: Int32, _ data: Data) -> Int32 {
    data.withUnsafeBytes { raw -> Int32 in
        var offset = 0
        while offset < raw.count {
            let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += n
        }
        return 0
    }
}

/// Reads a file the user named (a configuration, a manifest): opened once,
/// checked by descriptor and read from it, at most `maxBytes`. A failure
/// says in plain words whether it is missing, not a regular file (a FIFO,
/// /dev/zero), too large or unreadable. What it says is then taken only if
/// no other user could have written it (`FileTrust`).
func readUserFile(_ url: URL, what: String, code: BadgeError.Code, hint: String, maxBytes: Int = 64 << 20) throws -> Data {
    do {
        let file = try RegularFile(url.path)
        let data = try file.readAll(limit: maxBytes)
        try FileTrust.check(url.path, reading: file, what: what, code: code)
        return data
    } catch let error as RegularFile.Failure {
        let cause: String
        var why = hint
        switch error {
        case .system(_, ENOENT): cause = "no such file"
        case .system(_, EACCES), .system(_, EPERM): cause = "permission denied"
        case .system(_, EISDIR): cause = "it is a directory"
        case let .tooLarge(size, limit):
            throw BadgeError(code, "the \(what) is \(size) bytes; at most \(limit) bytes (\(limit >> 20) MiB) are read", path: url.path,
                             hint: "split it, or check that this is the right file")
        case .notRegular:
            cause = error.description
            why = "give a regular file; " + hint
        default: cause = error.description
        }
        throw BadgeError(code, "cannot read the \(what)", path: url.path, cause: cause, hint: why)
    }
}

/// Reads standard input to its end, or to `limit` bytes, whichever comes
/// first. read(2) is retried on EINTR: a signal (a resized terminal, a
/// child's exit) must not turn the rest of the input into "empty".
package func readStandardInput(limit: Int) throws -> Data {
    var data = Data()
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    while data.count < limit {
        let wanted = min(chunk.count, limit - data.count)
        let n = chunk.withUnsafeMutableBytes { Glibc.read(STDIN_FILENO, $0.baseAddress!, wanted) }
        if n == 0 { break }
        if n < 0 {
            if errno == EINTR { continue }
            throw BadgeError(.io, "cannot read standard input", cause: BadgeError.errnoDescription(errno))
        }
        data.append(contentsOf: chunk[0..<n])
    }
    return data
}

extension URL {
    /// `path` as a file URL, relative to `base` unless it starts with "/":
    /// joined as strings (Foundation's relative URLs remove ".." by hand),
    /// then `withoutDotComponents`.
    package static func file(_ path: String, relativeTo base: URL) -> URL {
        URL(fileURLWithPath: path.hasPrefix("/") ? path : base.path + "/" + path).withoutDotComponents
    }

    /// This file URL with its path's "." components and doubled slashes
    /// removed, and its ".." kept: the kernel resolves ".." after any
    /// symbolic link before it (`link/../x` is beside the link's target),
    /// which removing it by hand, as `standardizedFileURL` does, would not.
    package var withoutDotComponents: URL {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        return URL(fileURLWithPath: "/" + parts.joined(separator: "/"))
    }
}

/// Why `makeDirectories` stopped.
package enum MakeDirectoryFailure: Error, Sendable, Equatable {
    /// This path, on the way or the last, exists and is not a folder.
    case notAFolder(String)
    /// Creating this path failed (EACCES, EROFS, ENOSPC, ...).
    case system(String, SystemCallError)

    /// What went wrong, for a message naming `what` ("the output folder"):
    /// the path that stopped it and a hint.
    package func error(_ what: String, at target: URL, code: BadgeError.Code, hint: String) -> BadgeError {
        switch self {
        case let .notAFolder(path) where path == target.withoutDotComponents.path:
            return BadgeError(code, "\(what) is a file, not a folder", path: path, hint: hint)
        case let .notAFolder(path):
            return BadgeError(code, "\(what) cannot be there: \(path) is a file, not a folder", path: target.path, hint: hint)
        case let .system(path, failure):
            return BadgeError(code, "cannot create \(what)", path: path, cause: failure.description, hint: hint)
        }
    }
}

/// Creates `url` and the folders missing on its way, as `mkdir -p` does (a
/// symbolic link to a folder on the way is followed, and a ".." after it is
/// the kernel's to resolve: `withoutDotComponents`), each with `mode` less
/// the umask. The error names the path that stopped it.
package func makeDirectories(_ url: URL, mode: mode_t = 0o777) throws(MakeDirectoryFailure) {
    let path = url.withoutDotComponents.path
    var prefix = ""
    for part in path.split(separator: "/") {
        prefix += "/" + part
        if mkdir(prefix, mode) == 0 { continue }
        let code = errno
        var info = stat()
        if stat(prefix, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw .notAFolder(prefix) }
            continue
        }
        if code == ENOTDIR { throw .notAFolder(String(prefix[..<(prefix.lastIndex(of: "/") ?? prefix.startIndex)])) }
        throw .system(prefix, SystemCallError("mkdir", code))
    }
}
