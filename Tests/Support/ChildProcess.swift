#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A child process for tests, with the parts of Foundation's `Process` they use
/// (`executableURL`, `arguments`, `environment`, the three standard streams,
/// `run`, `isRunning`, `waitUntilExit`, the termination status), spawned and
/// waited for so that many children coming and going at once never hide each
/// other's end:
///
/// - Foundation's `Process` on Linux learns that a child ended when a socket the
///   child holds closes. Its children inherit every descriptor not closed at the
///   moment of the spawn, and a descriptor another thread opens during its
///   spawn is not closed: a child started then holds another child's socket, and
///   that child's end goes unseen for as long as the first one lives.
/// - Here the child closes every descriptor above standard error in the spawn
///   itself (`posix_spawn_file_actions_addclosefrom_np`), and its end is read
///   from the kernel (`waitid`, `waitpid`), by pid, never from a descriptor.
/// - It starts with no signal blocked or ignored (the test process blocks and
///   ignores some), in a process group of its own as Foundation puts it.
package final class ChildProcess: @unchecked Sendable {
    package var executableURL: URL?
    package var arguments: [String] = []
    package var environment: [String: String]?
    /// Where the child starts; nil: where this process is.
    package var currentDirectoryURL: URL?
    /// A `Pipe`, a `FileHandle`, or nil for /dev/null (as `Process` takes them).
    package var standardInput: Any?
    package var standardOutput: Any?
    package var standardError: Any?

    private let lock = NSLock()
    private var pid: pid_t = 0
    /// The wait status, once the child has been reaped.
    private var waitStatus: Int32?

    package init() {}

    package struct SpawnError: Error, CustomStringConvertible {
        package var description: String
    }

    package var processIdentifier: Int32 { lock.withLock { pid } }

    /// Starts the child. Throws if it cannot be started (no such program).
    package func run() throws {
        guard let path = executableURL?.path else { throw SpawnError(description: "no executable") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, stream, reading) in [(Int32(0), standardInput, true), (1, standardOutput, false), (2, standardError, false)] {
            switch stream {
            case let pipe as Pipe:
                let end = reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, fd)
            case let handle as FileHandle where handle !== FileHandle.nullDevice:
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, fd)
            default:
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", reading ? O_RDONLY : O_WRONLY, 0)
            }
        }
        guard Self.addCloseFrom(&actions, 3) == 0 else { throw SpawnError(description: "cannot close descriptors in the child") }
        if let directory = currentDirectoryURL?.path {
            guard let chdir = Self.addChdir, chdir(&actions, directory) == 0 else {
                throw SpawnError(description: "cannot start \(path) in \(directory)")
            }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { env.forEach { free($0) } }
        var child: pid_t = 0
        let failure = posix_spawn(&child, path, &actions, &attributes, argv, env)
        guard failure == 0 else {
            throw SpawnError(description: "cannot start \(path): \(String(cString: strerror(failure)))")
        }
        lock.withLock { pid = child }
        // The child has its ends of the pipes; the parent keeps only its own.
        if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
        if let pipe = standardOutput as? Pipe { try? pipe.fileHandleForWriting.close() }
        if let pipe = standardError as? Pipe { try? pipe.fileHandleForWriting.close() }
    }

    /// True from `run()` until the child has ended (it is reaped here when it has).
    package var isRunning: Bool {
        lock.withLock {
            reapIfEnded()
            return pid > 0 && waitStatus == nil
        }
    }

    /// Blocks until the child has ended. Call it from a thread of its own, not from
    /// one of Swift's cooperative threads.
    package func waitUntilExit() {
        let child = processIdentifier
        guard child > 0 else { return }
        var info = siginfo_t()
        // Wait for the end without reaping it: the pid stays the child's until
        // `reapIfEnded` (under the lock) reaps it, so `signal` never hits a reused pid.
        while waitid(P_PID, id_t(child), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        while isRunning { usleep(1000) }
    }

    /// Sends `signal` if the child has not ended (a pid that was reaped may be
    /// another process's by now). Returns whether it was sent.
    @discardableResult
    package func signal(_ signal: Int32) -> Bool {
        lock.withLock {
            reapIfEnded()
            guard pid > 0, waitStatus == nil else { return false }
            return kill(pid, signal) == 0
        }
    }

    /// SIGINT, as Ctrl-C sends it.
    package func interrupt() { signal(SIGINT) }
    /// SIGTERM.
    package func terminate() { signal(SIGTERM) }

    /// The exit status, or the signal that ended the child (`terminationReason` says which).
    package var terminationStatus: Int32 {
        let status = lock.withLock { waitStatus } ?? 0
        return status & 0x7F != 0 ? status & 0x7F : (status >> 8) & 0xFF
    }

    package var terminationReason: Process.TerminationReason {
        (lock.withLock { waitStatus } ?? 0) & 0x7F != 0 ? .uncaughtSignal : .exit
    }

    /// Under the lock.
    private func reapIfEnded() {
        guard pid > 0, waitStatus == nil else { return }
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid {
            waitStatus = status
        } else if reaped < 0 && errno == ECHILD {
            // Reaped by someone else (nothing here does): it has ended, its status is lost.
            waitStatus = 0xFF << 8
        }
    }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc 2.34's `posix_spawn_file_actions_addclosefrom_np` (Swift's Glibc module
    /// does not declare it): every descriptor from `lowest` up is closed in the child,
    /// in the spawn itself, so none opened meanwhile by another thread slips through.
    private static let closeFrom: CloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: CloseFrom.self) }

    private typealias Chdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    /// glibc 2.29's `posix_spawn_file_actions_addchdir_np`, likewise undeclared.
    private static let addChdir: Chdir? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np")
        .map { unsafeBitCast($0, to: Chdir.self) }

    private static func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32) -> Int32 {
        if let closeFrom { return closeFrom(actions, lowest) }
        // An older C library: every descriptor open now (one opened meanwhile may slip through).
        let open = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
        for fd in open where fd >= lowest { posix_spawn_file_actions_addclose(actions, fd) }
        return 0
    }
}
