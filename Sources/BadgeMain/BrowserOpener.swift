#if canImport(Glibc)
import Glibc
#endif
import BadgeKit
import ExecBackend
import Foundation
import Subprocess
import Synchronization
import SystemPackage

/// `serve --open`: the studio's URL, token and all, goes into a file of the
/// user's alone (0600, in a new 0700 folder), and xdg-open is given that
/// file, a page that sends the browser on to the URL, as Jupyter does. Every
/// user can read a process's command line (/proc/PID/cmdline); no one else
/// can read that file. The folder is removed when the server stops.
///
/// xdg-open runs in a session of its own, spared by the orphan reaper (the
/// browser it starts may outlive it as badge's child), with every signal at
/// its default. A failure is a warning: the URL is printed anyway.
final class BrowserOpener: Sendable {
    private let folder = Mutex<String?>(nil)

    /// Writes the page that leads to `url`, and hands it to xdg-open.
    func open(_ url: String) {
        do {
            let page = try write(url)
            Task.detached { await Self.run(page: page) }
        } catch {
            warn("cannot open a browser: \(error); open the URL above")
        }
    }

    /// Removes the folder and what it holds.
    func remove() {
        guard let folder = folder.withLock({ $0.take() }) else { return }
        for name in ["open.html", "xdg-open.log"] { unlink(folder + "/" + name) }
        rmdir(folder)
    }

    /// The page in a new folder of the runtime directory (`$XDG_RUNTIME_DIR`
    /// when it is the user's alone), else of the temporary one.
    private func write(_ url: String) throws -> String {
        var template = Array((Self.parent() + "/badge-serve-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw BadgeError(.io, "cannot make a folder for the page that opens the studio", cause: BadgeError.errnoDescription(errno))
        }
        let path = String(cString: made)
        folder.withLock { $0 = path }
        let page = path + "/open.html"
        let fd = Glibc.open(page, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw BadgeError(.io, "cannot write the page that opens the studio", path: page, cause: BadgeError.errnoDescription(errno))
        }
        defer { close(fd) }
        let escaped = url.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta http-equiv="refresh" content="0;url=\(escaped)">
            <title>Opening the Promise Badge studio</title></head>
            <body><p>Opening the studio. If nothing happens, <a href="\(escaped)">open it here</a>.</p></body></html>

            """
        let bytes = Array(html.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw BadgeError(.io, "cannot write the page that opens the studio", path: page, cause: BadgeError.errnoDescription(errno))
        }
        return page
    }

    private static func parent() -> String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            var info = stat()
            if lstat(runtime, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 {
                return runtime
            }
        }
        let temporary = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        return temporary.hasSuffix("/") && temporary.count > 1 ? String(temporary.dropLast()) : temporary
    }

    /// xdg-open, given the page as a file: URL. Its standard error goes to a
    /// file beside the page (the browser it starts may keep writing there),
    /// of which the first lines are shown should it fail.
    private static func run(page: String) async {
        let log = (page as NSString).deletingLastPathComponent + "/xdg-open.log"
        let fd = Glibc.open(log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return warn("cannot open a browser: \(log): \(BadgeError.errnoDescription(errno)); open the URL above") }
        var platform = PlatformOptions()
        platform.createSession = true
        let target = URL(fileURLWithPath: page).absoluteString
        do {
            let status = try await OrphanReaper.sparingTheSession { spare in
                try await Subprocess.run(
                    .name("xdg-open"), arguments: [target], platformOptions: platform, input: .none, output: .discarded,
                    error: .fileDescriptor(FileDescriptor(rawValue: fd), closeAfterSpawningProcess: true)
                ) { execution in await spare(execution.processIdentifier.value) }.terminationStatus
            }
            if !status.isSuccess {
                let said = (try? RegularFile(log).readAll(limit: 2048)).map { String(decoding: $0, as: UTF8.self) } ?? ""
                let words = OutsideText.printable(said, keepingNewlines: false).trimmingCharacters(in: .whitespaces)
                let how = switch status {
                case let .exited(code): "exit status \(code)"
                case let .signaled(signal): "ended by signal \(signal)"
                }
                warn("xdg-open could not open a browser (\(how)\(words.isEmpty ? "" : ": " + words)); open the URL above")
            }
        } catch {
            warn("cannot open a browser (xdg-open: \(error)); open the URL above")
        }
    }

    private static func warn(_ text: String) {
        Terminal.write(to: STDERR_FILENO, Data("badge: warning: \(text)\n".utf8))
    }

    private func warn(_ text: String) { Self.warn(text) }
}
