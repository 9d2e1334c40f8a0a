#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A file the user names for a command to write (`--output`, `card back`,
/// `card flip`, `card html DIR`, `batch --contact-sheet`): one policy for all.
///
/// - `-` is standard output (as `--source -` is standard input); never a terminal.
/// - A FIFO or a character device (`/dev/null`, a tty) is written into; nothing is renamed over it.
/// - A symbolic link is followed (up to 40 links); what it leads to gets the same rules, so a
///   regular file there is replaced atomically in its own folder. A link into `/proc` (such as
///   `/dev/stdout`, which leads to `/proc/self/fd/1`) names an open descriptor and is written into.
/// - In a sticky folder others may write to (`/tmp`), a symbolic link or a FIFO that belongs
///   neither to badge's user nor to the folder's owner is refused: another user planted it, to
///   have a file of yours overwritten or to read the badge. These are the kernel's
///   `fs.protected_symlinks` and `fs.protected_fifos` (2), which badge's own resolving of links
///   would otherwise get around.
/// - A regular file, or a name with nothing there, is written whole or not at all: a temporary
///   file beside it, fsynced and renamed over it (`AtomicFileWriter`).
/// - A directory, a block device, a socket or anything else is an error that says what it is.
public enum OutputTarget: Sendable, Equatable, CustomStringConvertible {
    case standardOutput
    case path(URL)

    /// `-` is standard output; anything else a path (`~` expanded), relative to `directory`.
    public init(_ argument: String, relativeTo directory: URL) {
        self = argument == "-" ? .standardOutput : .path(BadgeConfig.resolvePath(argument, relativeTo: directory))
    }

    public var description: String {
        switch self {
        case .standardOutput: return "standard output"
        case let .path(url): return url.path
        }
    }

    /// The path the result is reported under: `-` for standard output.
    public var displayPath: String {
        switch self {
        case .standardOutput: return "-"
        case let .path(url): return url.path
        }
    }

    /// What a path leads to, and so how it is written.
    package enum Resolution: Equatable {
        /// Nothing is there yet, or a regular file: write a temporary beside it and rename.
        case replace(String)
        /// A FIFO or a character device, or a descriptor named through /proc: open it and write into it.
        case writeInto(String)
    }

    /// Follows `path` through its symbolic links and says how to write it, or why it cannot be.
    package static func resolve(_ path: String) throws(OutputFailure) -> Resolution {
        var current = path
        for _ in 0..<40 {
            var info = stat()
            if lstat(current, &info) != 0 {
                let code = errno
                if code == ENOENT { return .replace(current) }
                throw .system("lstat", code, current)
            }
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                return .replace(current)
            case S_IFIFO:
                try refusePlanted(current, info, kind: "a FIFO")
                return .writeInto(current)
            case S_IFCHR:
                return .writeInto(current)
            case S_IFLNK:
                if !current.hasPrefix("/proc/") { try refusePlanted(current, info, kind: "a symbolic link") }
                // /proc/<pid>/fd/N and friends are links to open descriptors, not names.
                if current.hasPrefix("/proc/") { return .writeInto(current) }
                guard let target = readLink(current) else { throw .system("readlink", errno, current) }
                if target.hasPrefix("/proc/") { return .writeInto(target) }
                let base = URL(fileURLWithPath: current).deletingLastPathComponent()
                current = URL.file(target, relativeTo: base).path
            default:
                throw .notAFile(RegularFile.kind(info.st_mode), current)
            }
        }
        throw .system("readlink", ELOOP, path)
    }

    /// Throws when `path` (a link or a FIFO, `info` its lstat) is in a sticky
    /// folder that others may write to, and belongs neither to badge's user
    /// nor to the folder's owner.
    private static func refusePlanted(_ path: String, _ info: stat, kind: String) throws(OutputFailure) {
        guard info.st_uid != geteuid() else { return }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var folderInfo = stat()
        guard stat(folder, &folderInfo) == 0, folderInfo.st_mode & S_ISVTX != 0, folderInfo.st_mode & 0o022 != 0,
              info.st_uid != folderInfo.st_uid else { return }
        throw .planted(kind, path, owner: info.st_uid, folder: folder)
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n >= 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Why an output could not be written.
package enum OutputFailure: Error, Equatable {
    /// A call failed with an errno, on a path.
    case system(String, Int32, String)
    /// The path leads to something that is not a file to write (a directory, a socket).
    case notAFile(String, String)
    /// Standard output is a terminal: a picture there would be noise.
    case terminal
    /// A FIFO with no process reading it.
    case noReader(String)
    /// A symbolic link or a FIFO (its kind, its path) that another user (`owner`) put in a sticky
    /// folder others may write to (`folder`).
    case planted(String, String, owner: uid_t, folder: String)
}

/// Writes a file the user named under the `OutputTarget` policy.
package struct OutputWriter: Sendable {
    package let fileSystem: any StoreFileSystem

    package init(fileSystem: any StoreFileSystem = PosixFileSystem()) {
        self.fileSystem = fileSystem
    }

    /// Writes `data` to `target`; a failure is a `BadgeError` naming `what` ("the badge",
    /// "the contact sheet"), the path and what to do. Blocking: run it off Swift's threads.
    package func write(_ data: Data, to target: OutputTarget, what: String, mode: mode_t = 0o644) throws {
        do throws(OutputFailure) {
            try writeOrFail(data, to: target, mode: mode)
        } catch {
            throw Self.error(error, what: what, target: target)
        }
    }

    package func writeOrFail(_ data: Data, to target: OutputTarget, mode: mode_t = 0o644) throws(OutputFailure) {
        switch target {
        case .standardOutput:
            if isatty(STDOUT_FILENO) == 1 { throw .terminal }
            let code = writeAll(STDOUT_FILENO, data)
            if code != 0 { throw .system("write", code, "standard output") }
        case let .path(url):
            switch try OutputTarget.resolve(url.path) {
            case let .replace(path):
                do {
                    try AtomicFileWriter(fileSystem: fileSystem).write(data, to: URL(fileURLWithPath: path), mode: mode)
                } catch {
                    throw .system(error.call, error.errno, path)
                }
            case let .writeInto(path):
                try writeInto(path, data)
            }
        }
    }

    /// Opens a FIFO or a device (or a descriptor's /proc link) and writes into it.
    /// The open never blocks: a FIFO with no reader is an error, not a hang.
    private func writeInto(_ path: String, _ data: Data) throws(OutputFailure) {
        // A /proc descriptor link must be followed; anything else must not be a link by now.
        let follow = path.hasPrefix("/proc/")
        var fd: Int32
        repeat {
            fd = Glibc.open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW))
        } while fd < 0 && errno == EINTR
        guard fd >= 0 else {
            let code = errno
            throw code == ENXIO ? .noReader(path) : .system("open", code, path)
        }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .system("fstat", errno, path) }
        switch info.st_mode & S_IFMT {
        case S_IFIFO, S_IFCHR, S_IFSOCK:
            break
        case S_IFREG where follow:
            // A descriptor the shell opened on a file (`> file`): it is the file's contents now.
            if ftruncate(fd, 0) != 0 { throw .system("ftruncate", errno, path) }
        default:
            // Something else was put there after the path was looked at.
            throw .notAFile(RegularFile.kind(info.st_mode), path)
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        let code = writeAll(fd, data)
        if code != 0 { throw .system("write", code, path) }
    }

    static func error(_ failure: OutputFailure, what: String, target: OutputTarget) -> BadgeError {
        switch failure {
        case .terminal:
            return BadgeError(.usage, "standard output is a terminal; \(what) is not printed there", path: "-",
                              hint: "pipe it into a program or a file (--output - | ...), or give a file name")
        case let .planted(kind, path, owner, folder):
            let where_ = path == target.displayPath ? "" : " (where \(target.displayPath) leads)"
            return BadgeError(.io, "cannot write \(what): \(path)\(where_) is \(kind) of another user (uid \(owner)) in \(folder), "
                                  + "a folder others can write to; badge does not write through it", path: path,
                              hint: "give a name of your own, or a folder only you can write to")
        case let .noReader(path):
            return BadgeError(.io, "cannot write \(what): no process is reading the FIFO", path: path,
                              hint: "start the reader first, or give a file name")
        case let .notAFile(kind, path):
            let where_ = path == target.displayPath ? "" : " (where \(target.displayPath) leads)"
            return BadgeError(.usage, "cannot write \(what): \(path)\(where_) is \(kind), not a file", path: path,
                              hint: kind == "a directory" ? "give a file name inside it" : "give the name of a regular file")
        case let .system(call, code, path):
            let hint: String
            switch code {
            case ENOENT: hint = "create the folder first, or give a path in a folder that exists"
            case EACCES, EPERM, EROFS: hint = "choose a folder you can write to"
            case ENOSPC, EDQUOT: hint = "free some disk space and try again"
            case ELOOP: hint = "the path leads through more than 40 symbolic links, or a loop of them"
            case EPIPE: hint = "the program reading it stopped first"
            default: hint = "check that the directory exists and is writable"
            }
            return BadgeError(.io, "cannot write \(what)", path: path, cause: SystemCallError(call, code).description, hint: hint)
        }
    }
}
