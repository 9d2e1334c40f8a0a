#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Who may have written a file badge takes orders from: a configuration, a
/// batch manifest, an exec backend's program and its script. Whoever could
/// change one could make badge run anything, or send any file, as its user.
/// So, as ssh has it for `authorized_keys` and the store for itself:
///
/// - the file belongs to badge's user or to root, and neither its group nor
///   other users may write it (a group of the user's own, as Debian makes for
///   each user and a umask of 002 lets write, counts as the user);
/// - so does every folder on the way to it, from `/` down, both as the path
///   is written and as its symbolic links resolve; a sticky folder (`/tmp`)
///   may be writable by all, since no one may replace what others own there;
/// - a symbolic link on the way belongs to badge's user or to root (in a
///   sticky folder anyone may make one).
package enum FileTrust {
    /// Why a file is not trusted, or nil when it is. `path` is taken as it is
    /// (absolute, or relative to the working directory), `..` as the kernel
    /// takes it (after the link before it). `opened`: the status of the
    /// descriptor the file was read from, which must still be open (a closed
    /// file's inode number can be given to the next file made); the path
    /// must still lead to that file, or it was swapped (`.replaced`). Without
    /// it, a path that leads nowhere is the reader's to report (nil).
    package static func distrust(of path: String, opened: stat? = nil) -> Distrust? {
        let me = geteuid()
        func trusted(_ uid: uid_t) -> Bool { uid == me || uid == 0 }
        /// The write bits of others, and of the group unless it is the user's own. (A POSIX
        /// ACL's named users hide behind the group bits, its mask: write access the owner
        /// gave someone by name is the owner's choice, as with a group of the owner's own.)
        func othersWrite(_ info: stat, _ path: String) -> Bool {
            guard info.st_mode & 0o002 == 0 else { return true }
            return info.st_mode & 0o020 != 0 && !isPrivateGroup(info.st_gid)
        }
        var info = stat()
        guard stat(path, &info) == 0 else { return opened == nil ? nil : .replaced }
        if let opened, opened.st_dev != info.st_dev || opened.st_ino != info.st_ino { return .replaced }
        if !trusted(info.st_uid) { return .owner(info.st_uid) }
        if othersWrite(info, path) { return .writable(info.st_mode & 0o7777) }

        func folder(_ folder: String, _ info: stat) -> Distrust? {
            if !trusted(info.st_uid) { return .folderOwner(folder, info.st_uid) }
            if othersWrite(info, folder) && info.st_mode & S_ISVTX == 0 { return .folderWritable(folder, info.st_mode & 0o7777) }
            return nil
        }
        // As written: each name on the way, its links not followed (but those before it).
        let written = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        for prefix in prefixes(of: written) {
            var entry = stat()
            guard lstat(prefix, &entry) == 0 else { return opened == nil ? nil : .replaced }
            if entry.st_mode & S_IFMT == S_IFLNK {
                if !trusted(entry.st_uid) { return .linkOwner(prefix, entry.st_uid) }
            } else if prefix != written, let problem = folder(prefix, entry) {
                return problem
            }
        }
        // As resolved: the folders the file is really in.
        guard let resolved = realpath(written, nil) else { return opened == nil ? nil : .replaced }
        let real = String(cString: resolved)
        free(resolved)
        for prefix in prefixes(of: real) where prefix != real {
            var entry = stat()
            guard stat(prefix, &entry) == 0 else { return .replaced }
            if let problem = folder(prefix, entry) { return problem }
        }
        return nil
    }

    /// Throws the error that says why `path` is not trusted, and what fixes it.
    package static func check(_ path: String, what: String, code: BadgeError.Code, backend: String? = nil) throws {
        guard let distrust = distrust(of: path) else { return }
        throw distrust.error(path: path, what: what, code: code, backend: backend)
    }

    /// Throws unless `path` is trusted and still leads to `file`, the file
    /// read from it (borrowed, so open for the whole check).
    package static func check(_ path: String, reading file: borrowing RegularFile, what: String, code: BadgeError.Code) throws {
        guard let distrust = distrust(of: path, opened: file.status) else { return }
        throw distrust.error(path: path, what: what, code: code, backend: nil)
    }

    /// Whether `gid` is the group of badge's user alone: named as the user is,
    /// with no member but the user (Debian's "user private group").
    package static func isPrivateGroup(_ gid: gid_t) -> Bool {
        var user = passwd()
        var group = group()
        var userResult: UnsafeMutablePointer<passwd>?
        var groupResult: UnsafeMutablePointer<group>?
        var userBuffer = [CChar](repeating: 0, count: 16 << 10)
        var groupBuffer = [CChar](repeating: 0, count: 64 << 10)
        guard getpwuid_r(geteuid(), &user, &userBuffer, userBuffer.count, &userResult) == 0, userResult != nil,
              getgrgid_r(gid, &group, &groupBuffer, groupBuffer.count, &groupResult) == 0, groupResult != nil,
              let userName = user.pw_name, let groupName = group.gr_name, strcmp(userName, groupName) == 0
        else { return false }
        var member = group.gr_mem
        while let name = member?.pointee {
            if strcmp(name, userName) != 0 { return false }
            member = member?.advanced(by: 1)
        }
        // A user whose primary group it is belongs to it without being listed.
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        setpwent()
        defer { endpwent() }
        while getpwent_r(&entry, &buffer, buffer.count, &found) == 0, found != nil {
            if entry.pw_gid == gid && entry.pw_uid != geteuid() { return false }
        }
        return true
    }

    /// `/`, `/a`, `/a/b`, ... `path` itself.
    private static func prefixes(of path: String) -> [String] {
        var prefixes = ["/"]
        var current = ""
        for part in path.split(separator: "/") where part != "." {
            current += "/" + part
            prefixes.append(current)
        }
        return prefixes
    }

    package enum Distrust: Equatable, Sendable {
        /// The file belongs to another user.
        case owner(uid_t)
        /// Its group or every user may write it (its mode).
        case writable(mode_t)
        /// A folder on the way belongs to another user.
        case folderOwner(String, uid_t)
        /// A folder on the way may be written by its group or every user (its mode), and is not sticky.
        case folderWritable(String, mode_t)
        /// A symbolic link on the way belongs to another user.
        case linkOwner(String, uid_t)
        /// What was read is no longer what the path leads to: swapped, moved or removed meanwhile.
        case replaced

        func error(path: String, what: String, code: BadgeError.Code, backend: String?) -> BadgeError {
            let (message, hint) = words(path: path, what: what)
            return BadgeError(code, message, backend: backend, path: path, hint: hint)
        }

        /// What is wrong, in words ("the configuration file can be written by
        /// every user (mode 0666), ..."), and what fixes it.
        package func words(path: String, what: String) -> (message: String, hint: String) {
            let octal = { (mode: mode_t) in String(format: "%04o", mode) }
            let who = { (mode: mode_t) in mode & 0o002 != 0 ? "every user" : "its group" }
            let message: String
            let hint: String
            switch self {
            case let .owner(uid):
                message = "the \(what) belongs to another user (uid \(uid)), who could change what badge does as you"
                hint = "use a copy of your own, or take it over (as root): chown \(geteuid()) \(path)"
            case let .writable(mode):
                message = "the \(what) can be written by \(who(mode)) (mode \(octal(mode))), who could change what badge does as you"
                hint = "make it yours alone to write: chmod go-w \(path)"
            case let .folderOwner(folder, uid):
                message = "the \(what) is in \(folder), which belongs to another user (uid \(uid)), who could replace it"
                hint = "keep it in a folder of your own"
            case let .folderWritable(folder, mode):
                message = "the \(what) is in \(folder), which \(who(mode)) can write to (mode \(octal(mode))), who could replace it"
                hint = "chmod go-w \(folder), or keep the file in a folder of your own"
            case .replaced:
                message = "the \(what) was replaced, moved or removed while badge read it, so what was read cannot be vouched for"
                hint = "check who else can change it, and run the command again"
            case let .linkOwner(link, uid):
                message = "the \(what) is reached through a symbolic link of another user (uid \(uid)), who could point it anywhere: \(link)"
                hint = "give the path without that link, or replace the link with one of your own"
            }
            return (message, hint)
        }
    }
}
