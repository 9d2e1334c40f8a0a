#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A file read the one safe way: opened once with O_NONBLOCK (a FIFO or a
/// device never blocks the open), checked by its descriptor (fstat: a regular
/// file, within the size limit) and read from that descriptor, at most the
/// limit, so a file swapped in between a check and a read is never the one read.
public struct RegularFile: ~Copyable {
    public let fd: Int32
    /// The size fstat reported when the file was opened.
    public let size: Int
    /// When the file's contents last changed (its mtime): for a history
    /// entry, when the store moved it there (`BadgeStore` sets it then).
    public let modified: Date
    /// What fstat said of the descriptor when the file was opened.
    package let status: stat

    /// Why a file could not be read.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// open, fstat or read failed with this errno.
        case system(String, Int32)
        /// It is not a regular file: a FIFO, a device, a directory, a socket.
        case notRegular(String)
        /// It holds more than the limit.
        case tooLarge(size: Int, limit: Int)

        public var description: String {
            switch self {
            case let .system(call, code): return "\(call): \(BadgeError.errnoDescription(code))"
            case let .notRegular(kind): return "it is \(kind), not a regular file"
            case let .tooLarge(size, limit): return "it is \(size) bytes; at most \(limit) are read"
            }
        }

        public var errno: Int32? {
            if case let .system(_, code) = self { return code }
            return nil
        }
    }

    /// Opens `name` relative to `directory` (AT_FDCWD: a path as given).
    /// `followSymlinks: false` refuses a symbolic link (ELOOP).
    public init(_ name: String, in directory: Int32 = AT_FDCWD, followSymlinks: Bool = true) throws(Failure) {
        var fd: Int32
        repeat {
            fd = Glibc.openat(directory, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followSymlinks ? 0 : O_NOFOLLOW))
        } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw .system("open", errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .system("fstat", code)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            Glibc.close(fd)
            throw .notRegular(Self.kind(info.st_mode))
        }
        self.fd = fd
        self.status = info
        self.size = Int(info.st_size)
        self.modified = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
    }

    deinit { Glibc.close(fd) }

    /// What a file that is not regular is, in words.
    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFDIR: return "a directory"
        case S_IFSOCK: return "a socket"
        case S_IFLNK: return "a symbolic link"
        default: return "not a regular file"
        }
    }

    /// Reads up to `count` bytes from the current position (fewer at the end).
    public func read(upTo count: Int) throws(Failure) -> Data {
        var data = Data(count: count)
        var failure: Int32 = 0
        let got = data.withUnsafeMutableBytes { raw -> Int in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.read(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return offset
                }
                if n == 0 { break }
                offset += n
            }
            return offset
        }
        if failure != 0 { throw .system("read", failure) }
        data.count = got
        return data
    }

    /// The whole file, refused when fstat says it is larger than `limit`;
    /// never more than `limit` bytes are read, even if it grows meanwhile.
    /// The memory taken is the file's size, not the limit's: a byte more than
    /// fstat said is asked for, and only a file that has grown since is read
    /// on, a megabyte at a time.
    public func readAll(limit: Int) throws(Failure) -> Data {
        guard size <= limit else { throw .tooLarge(size: size, limit: limit) }
        let first = min(size + 1, limit)
        var data = try read(upTo: first)
        if data.count == first {
            while data.count < limit {
                let asked = min(limit - data.count, 1 << 20)
                let more = try read(upTo: asked)
                data.append(more)
                if more.count < asked { break }
            }
        }
        if data.count == limit, !(try read(upTo: 1)).isEmpty {
            throw .tooLarge(size: limit + 1, limit: limit)
        }
        return data
    }

    /// Reads the picture a user named (a source to import or transform) whole,
    /// up to `limit` bytes (`intake.maxFileBytes`), with errors that say what
    /// was wrong with the path and what to do.
    package static func picture(at path: String, limit: Int) throws -> Data {
        do {
            return try contents(of: path, limit: limit)
        } catch let .tooLarge(size, limit) {
            // limit + 1 is all a file that grew past the limit while it was read can say of its size.
            throw BadgeError(.imageTooLarge, size > limit + 1 ? "the file is \(size) bytes, more than the \(limit) allowed"
                                                 : "the file is larger than \(limit) bytes", path: path,
                             hint: "raise intake.maxFileBytes in the configuration, or use a smaller file")
        } catch .notRegular(let kind) {
            throw BadgeError(.io, "this is \(kind), not a picture", path: path, hint: "give the path of an image file")
        } catch .system(_, ENOENT) {
            throw BadgeError(.io, "no such file", path: path, hint: "check the path of the picture")
        } catch {
            throw BadgeError(.io, "cannot read the picture", path: path, cause: error.description)
        }
    }

    /// Reads the regular file `name` (relative to `directory`) whole, up to `limit` bytes.
    public static func contents(
        of name: String, in directory: Int32 = AT_FDCWD, followSymlinks: Bool = true, limit: Int
    ) throws(Failure) -> Data {
        let file = try RegularFile(name, in: directory, followSymlinks: followSymlinks)
        return try file.readAll(limit: limit)
    }
}
