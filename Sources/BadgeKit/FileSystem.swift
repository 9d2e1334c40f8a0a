#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// An errno from a system call, with the call's name.
public struct SystemCallError: Error, Sendable, Equatable, CustomStringConvertible {
    public var call: String
    public var errno: Int32
    public init(_ call: String, _ errno: Int32) {
        self.call = call
        self.errno = errno
    }
    public var description: String { "\(call): \(BadgeError.errnoDescription(errno))" }
}

/// The system calls the store makes, behind a protocol so tests can make any
/// one of them fail (ENOSPC on write, EIO on fsync, EROFS on open, a failing
/// rename) and check that nothing is lost.
public protocol StoreFileSystem: Sendable {
    func open(_ path: String, _ flags: Int32, _ mode: mode_t) throws(SystemCallError) -> Int32
    func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int
    func fsync(_ fd: Int32) throws(SystemCallError)
    func close(_ fd: Int32) throws(SystemCallError)
    func rename(_ from: String, _ to: String) throws(SystemCallError)
    func link(_ from: String, _ to: String) throws(SystemCallError)
    func unlink(_ path: String) throws(SystemCallError)
    func mkdir(_ path: String, _ mode: mode_t) throws(SystemCallError)
    func flock(_ fd: Int32, _ operation: Int32) throws(SystemCallError)
}

/// The real thing: thin wrappers that retry on EINTR.
public struct PosixFileSystem: StoreFileSystem {
    public init() {}

    public func open(_ path: String, _ flags: Int32, _ mode: mode_t) throws(SystemCallError) -> Int32 {
        while true {
            let fd = Glibc.open(path, flags, mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw SystemCallError("open", errno) }
        }
    }

    public func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int {
        while true {
            let n = Glibc.write(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno != EINTR { throw SystemCallError("write", errno) }
        }
    }

    public func fsync(_ fd: Int32) throws(SystemCallError) {
        while Glibc.fsync(fd) != 0 {
            if errno != EINTR { throw SystemCallError("fsync", errno) }
        }
    }

    public func close(_ fd: Int32) throws(SystemCallError) {
        // Never retry close on EINTR: on Linux the descriptor is already gone.
        if Glibc.close(fd) != 0 && errno != EINTR { throw SystemCallError("close", errno) }
    }

    public func rename(_ from: String, _ to: String) throws(SystemCallError) {
        if Glibc.rename(from, to) != 0 { throw SystemCallError("rename", errno) }
    }

    public func link(_ from: String, _ to: String) throws(SystemCallError) {
        if Glibc.link(from, to) != 0 { throw SystemCallError("link", errno) }
    }

    public func unlink(_ path: String) throws(SystemCallError) {
        if Glibc.unlink(path) != 0 { throw SystemCallError("unlink", errno) }
    }

    public func mkdir(_ path: String, _ mode: mode_t) throws(SystemCallError) {
        if Glibc.mkdir(path, mode) != 0 { throw SystemCallError("mkdir", errno) }
    }

    public func flock(_ fd: Int32, _ operation: Int32) throws(SystemCallError) {
        while systemFlock(fd, operation) != 0 {
            if errno != EINTR { throw SystemCallError("flock", errno) }
        }
    }
}

private func systemFlock(_ fd: Int32, _ operation: Int32) -> Int32 {
    flock(fd, operation)
}

/// Writing a whole file so that it is either all there or not there at all:
/// a temporary file created with O_EXCL beside the target, written, fsynced,
/// renamed over the target, and the directory fsynced.
public struct AtomicFileWriter: Sendable {
    public let fileSystem: any StoreFileSystem
    public static let temporarySuffix = ".tmp"

    public init(fileSystem: any StoreFileSystem = PosixFileSystem()) {
        self.fileSystem = fileSystem
    }

    /// The name of a temporary file for the file `name`: hidden, naming this
    /// host and process, so that a later run can tell one left by a killed run.
    public static func temporaryName(for name: String) -> String {
        var random = SystemRandomNumberGenerator()
        let tag = hexDigits(UInt64(random.next() as UInt32), count: 8)
        return ".\(name).\(host).\(getpid()).\(tag)\(temporarySuffix)"
    }

    /// Whether `name` is a temporary file (of `target`, if given) left by a
    /// process of this host that no longer exists. Other hosts' temporaries
    /// are never taken for abandoned: a shared directory's pids mean nothing here.
    public static func isAbandonedTemporary(_ name: String, of target: String? = nil) -> Bool {
        guard name.hasPrefix("." + (target.map { $0 + "." } ?? "")), name.hasSuffix(temporarySuffix) else { return false }
        let parts = name.split(separator: ".")
        guard parts.count >= 5, parts[parts.count - 4] == host, let pid = Int32(parts[parts.count - 3]) else { return false }
        return pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
    }

    /// This machine's name, reduced to characters that are safe in a file name.
    public static let host: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let name = String(decoding: bytes, as: UTF8.self).unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "-") ? Character(scalar) : "-"
        }
        return name.isEmpty ? "host" : String(name.prefix(64))
    }()

    /// Creates and fills a temporary file beside `target`; returns its path.
    /// On any failure the temporary file is removed before the error is thrown.
    public func writeTemporary(_ data: Data, besides target: URL, mode: mode_t = 0o644) throws(SystemCallError) -> String {
        let directory = target.deletingLastPathComponent().path
        let temporary = directory + "/" + Self.temporaryName(for: target.lastPathComponent)
        let fd = try fileSystem.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
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
            try? fileSystem.unlink(temporary)
            throw error
        }
        return temporary
    }

    /// Flushes a directory's entries (the rename) to disk.
    public func syncDirectory(_ directory: URL) throws(SystemCallError) {
        let fd = try fileSystem.open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        defer { try? fileSystem.close(fd) }
        try fileSystem.fsync(fd)
    }

    /// Atomically replaces (or creates) `target` with `data`. Temporaries of
    /// `target` that a killed run left behind are removed first.
    public func write(_ data: Data, to target: URL, mode: mode_t = 0o644) throws(SystemCallError) {
        let directory = target.deletingLastPathComponent()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        where Self.isAbandonedTemporary(name, of: target.lastPathComponent) {
            try? fileSystem.unlink(directory.appendingPathComponent(name).path)
        }
        let temporary = try writeTemporary(data, besides: target, mode: mode)
        do {
            try fileSystem.rename(temporary, target.path)
        } catch {
            try? fileSystem.unlink(temporary)
            throw error
        }
        try syncDirectory(target.deletingLastPathComponent())
    }
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

/// Reads a file the user named (a configuration, a manifest); a failure says
/// in plain words whether it is missing, a directory or unreadable.
func readUserFile(_ url: URL, what: String, code: BadgeError.Code, hint: String) throws -> Data {
    do {
        return try Data(contentsOf: url)
    } catch {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
        throw BadgeError(code, "cannot read the \(what)", path: url.path,
                         cause: !exists ? "no such file" : isDirectory.boolValue ? "it is a directory" : "permission denied",
                         hint: hint)
    }
}

/// Reads standard input to its end, or to `limit` bytes, whichever comes
/// first. read(2) is retried on EINTR: a signal (a resized terminal, a
/// child's exit) must not turn the rest of the input into "empty".
public func readStandardInput(limit: Int) throws -> Data {
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
