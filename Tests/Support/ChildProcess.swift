#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Subprocess
import SystemPackage

/// A child process for tests, with the parts of Foundation's `Process` they use
/// (`executableURL`, `arguments`, `environment`, the working directory, the three
/// standard streams, `run`, `isRunning`, `waitUntilExit`, the termination
/// status), started and reaped by swift-subprocess.
///
/// Foundation's `Process` is not used: on Linux it learns that a child ended
/// when a socket the child holds closes, and its children inherit every
/// descriptor open at the moment of the spawn, so a child started while another
/// thread starts one holds the other's socket, and that child's end goes unseen
/// for as long as the first one lives. It also passes on the signals this test
/// process blocks and ignores. swift-subprocess 1.0.2 does what the tests need
/// (file:line in its checkout, `.build/checkouts/swift-subprocess/Sources/`):
///
/// - every descriptor above standard error is closed in the spawn itself, a
///   `posix_spawn_file_actions_addclosefrom_np` action appended last
///   (Subprocess/Platforms/Subprocess+Spawn.swift:374-394; without that action
///   it forks and closes them itself, Subprocess+Spawn.swift:122-128);
/// - the child starts with no signal blocked and every disposition the default
///   (Subprocess+Spawn.swift:396-404, _SubprocessCShims/process_shims.c:455-489),
///   but for glibc's own two signals, 32 and 33, which glibc's posix_spawn
///   leaves ignored in every child;
/// - `processGroupID = 0` puts it in a process group of its own, the group
///   Foundation's `Process` gives it (Subprocess+Spawn.swift:405-409);
/// - its end is learnt from a pidfd in epoll (Subprocess+Linux.swift:85-116),
///   which no other child can hold open (pidfds are close-on-exec and every
///   child closes all it inherits), and it is reaped by pid with
///   `waitid(P_PID)` (Subprocess+Unix.swift:810-813);
/// - signals go through that pidfd (`pidfd_send_signal`), or to the group
///   with `kill(-pid)` (Subprocess+Unix.swift:112-154).
///
/// One piece is this file's own. swift-subprocess signals a child only within
/// `run`'s body, and closes the pidfd once the body has returned and the child
/// has been reaped (Subprocess/Configuration.swift:98-101, 165-172); it offers
/// the body no way to wait for the child's end (`waitForProcessTermination`,
/// Subprocess+Linux.swift:69, is internal). So the body here waits for the end
/// itself, with `waitid(WEXITED | WNOWAIT)` on a thread of its own (which reaps
/// nothing), and a signal is sent only under the lock and only before the body
/// has said the child ended: never to a pid or a pidfd that may be another's.
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

    private typealias Running = Execution<FileDescriptorInput, FileDescriptorOutput, FileDescriptorOutput>

    private enum Phase {
        case notStarted
        /// `run()` has asked swift-subprocess for the child.
        case starting
        /// Signals may be sent: the child has not been seen to end, so its pidfd is open
        /// and its pid is its own.
        case running(Running)
        /// The child has ended and not yet been reaped: no signal is sent any more.
        case ending(pid_t)
        case ended(pid_t, TerminationStatus)
        case failed(any Error)
        /// `run()` gave up waiting for the spawn: a child started after that is killed.
        case abandoned
    }

    /// Guards `phase` and `waiters`; broadcast on every change of phase.
    private let condition = NSCondition()
    private var phase = Phase.notStarted
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter = 0

    package init() {}

    package struct SpawnError: Error, CustomStringConvertible {
        package var description: String
    }

    /// How long `run()` waits for swift-subprocess to start the child: a bound on a hang.
    static let spawnLimit: Duration = .seconds(300)

    /// Starts the child and returns once it runs. Throws if it cannot be started
    /// (no such program, no such directory).
    package func run() throws {
        guard let path = executableURL?.path else { throw SpawnError(description: "no executable") }
        let streams = try Streams(input: standardInput, output: standardOutput, error: standardError)
        var platform = PlatformOptions()
        platform.processGroupID = 0
        let configuration = Configuration(
            executable: .path(FilePath(path)),
            arguments: Arguments(arguments),
            environment: environment.map { variables in
                .custom(Dictionary(variables.compactMap { key, value in Environment.Key(rawValue: key).map { ($0, value) } },
                                   uniquingKeysWith: { $1 }))
            } ?? .inherit,
            workingDirectory: currentDirectoryURL.map { FilePath($0.path) },
            platformOptions: platform)

        condition.withLock {
            guard case .notStarted = phase else { preconditionFailure("a ChildProcess runs once") }
            phase = .starting
        }
        Task(executorPreference: TestThreads.pool) { [self] in
            do {
                let result = try await Subprocess.run(
                    configuration,
                    input: .fileDescriptor(streams.input, closeAfterSpawningProcess: false),
                    output: .fileDescriptor(streams.output, closeAfterSpawningProcess: false),
                    error: .fileDescriptor(streams.error, closeAfterSpawningProcess: false)
                ) { execution in
                    streams.closeChildEnds()
                    started(execution)
                    await Self.end(of: execution.processIdentifier.value)
                    change(to: .ending(execution.processIdentifier.value))
                }
                change(to: .ended(result.processIdentifier.value, result.terminationStatus))
            } catch {
                streams.closeChildEnds()
                change(to: .failed(error))
            }
        }

        let deadline = Date(timeIntervalSinceNow: Double(Self.spawnLimit.components.seconds))
        let outcome: Result<Void, any Error> = condition.withLock {
            while true {
                switch phase {
                case .starting:
                    guard condition.wait(until: deadline) else {
                        phase = .abandoned
                        return .failure(SpawnError(description: "\(path) was not started within \(Self.spawnLimit)"))
                    }
                case let .failed(error):
                    return .failure(SpawnError(description: "cannot start \(path): \(error)"))
                default:
                    return .success(())
                }
            }
        }
        try outcome.get()
    }

    private func started(_ execution: Running) {
        let abandoned: Bool = condition.withLock {
            guard case .starting = phase else { return true }
            phase = .running(execution)
            condition.broadcast()
            return false
        }
        if abandoned { try? execution.send(signal: .kill) }
    }

    private func change(to next: Phase) {
        let resumed: [CheckedContinuation<Void, Never>] = condition.withLock {
            if case .abandoned = phase { return [] }
            phase = next
            condition.broadcast()
            guard case .ended = next else { return [] }
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        resumed.forEach { $0.resume() }
    }

    /// Returns once `pid` has ended, without reaping it (swift-subprocess does, after
    /// the body has returned). Waits on a thread of its own.
    private static func end(of pid: pid_t) async {
        await withCheckedContinuation { (ended: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                var info = siginfo_t()
                while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
                ended.resume()
            }
            thread.name = "badge.test-child-end"
            thread.start()
        }
    }

    package var processIdentifier: Int32 {
        condition.withLock {
            switch phase {
            case let .running(execution): execution.processIdentifier.value
            case let .ending(pid), let .ended(pid, _): pid
            default: 0
            }
        }
    }

    /// True from `run()` until the child has ended and been reaped.
    package var isRunning: Bool {
        condition.withLock {
            switch phase {
            case .running, .ending: true
            default: false
            }
        }
    }

    private var hasEnded: Bool {
        if case .ended = phase { return true }
        return false
    }

    /// Blocks until the child has ended. Call it from a thread of its own, not from
    /// one of Swift's cooperative threads.
    package func waitUntilExit() {
        condition.withLock {
            guard isStarted else { return }
            while !hasEnded { condition.wait() }
        }
    }

    /// Blocks until the child has ended or `limit` has passed; returns whether it ended.
    package func waitUntilExit(timeout limit: Duration) -> Bool {
        let deadline = Date(timeIntervalSinceNow: Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18)
        return condition.withLock {
            guard isStarted else { return true }
            while !hasEnded {
                guard condition.wait(until: deadline) else { return hasEnded }
            }
            return true
        }
    }

    /// Blocks until the child has ended. One still running after `limit` (a
    /// hang: the limit bounds it, it measures nothing) is killed with its
    /// process group, and the answer is false.
    package func waitUntilExit(orKillAfter limit: Duration) -> Bool {
        if waitUntilExit(timeout: limit) { return true }
        signalGroup(SIGKILL)
        waitUntilExit()
        return false
    }

    /// Returns once the child has ended, or once the task is cancelled.
    package func exited() async {
        let id: Int = condition.withLock {
            nextWaiter += 1
            return nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now: Bool = condition.withLock {
                    guard isStarted, !hasEnded, !Task.isCancelled else { return true }
                    waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            condition.withLock { waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Waits (asynchronously) until the child has ended or `limit` has passed;
    /// returns whether it ended. The limit bounds a hang, it measures nothing.
    package func waitForExit(limit: Duration = .seconds(60)) async -> Bool {
        do {
            try await withDeadline("the child \(executableURL?.lastPathComponent ?? "") to end", limit: limit) { await self.exited() }
        } catch {}
        return condition.withLock { hasEnded }
    }

    /// Whether `run()` started the child (or is starting it).
    private var isStarted: Bool {
        switch phase {
        case .notStarted, .failed, .abandoned: false
        default: true
        }
    }

    /// Sends `signal` if the child has not ended (a pid that was reaped may be
    /// another process's by now). Returns whether it was sent.
    @discardableResult
    package func signal(_ signal: Int32) -> Bool {
        send(signal, toProcessGroup: false)
    }

    /// Sends `signal` to the child's process group (the child and what it started
    /// that stayed in the group), if the child has not ended. Returns whether it was sent.
    @discardableResult
    package func signalGroup(_ signal: Int32) -> Bool {
        send(signal, toProcessGroup: true)
    }

    private func send(_ signal: Int32, toProcessGroup: Bool) -> Bool {
        condition.withLock {
            guard case let .running(execution) = phase else { return false }
            do {
                try execution.send(signal: Subprocess.Signal(rawValue: signal), toProcessGroup: toProcessGroup)
                return true
            } catch {
                return false
            }
        }
    }

    /// SIGINT, as Ctrl-C sends it.
    package func interrupt() { signal(SIGINT) }
    /// SIGTERM.
    package func terminate() { signal(SIGTERM) }

    private var status: TerminationStatus? {
        condition.withLock {
            guard case let .ended(_, status) = phase else { return nil }
            return status
        }
    }

    /// The exit status, or the signal that ended the child (`terminationReason` says which).
    package var terminationStatus: Int32 {
        switch status {
        case let .exited(code), let .signaled(code): code
        case nil: 0
        }
    }

    package var terminationReason: Process.TerminationReason {
        if case .signaled = status { return .uncaughtSignal }
        return .exit
    }

    /// The descriptors the child's standard streams are bound to: the child's ends
    /// of the caller's pipes, the caller's files, or /dev/null opened here.
    private final class Streams: @unchecked Sendable {
        let input: FileDescriptor
        let output: FileDescriptor
        let error: FileDescriptor
        /// What this process closes, once, when the child has them (or could not be
        /// started): the child's ends of the pipes, /dev/null.
        private let lock = NSLock()
        private var handles: [FileHandle] = []
        private var opened: [FileDescriptor] = []

        init(input: Any?, output: Any?, error: Any?) throws {
            var handles: [FileHandle] = [], opened: [FileDescriptor] = []
            func descriptor(_ stream: Any?, reading: Bool) throws -> FileDescriptor {
                switch stream {
                case let pipe as Pipe:
                    let end = reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                    if !handles.contains(where: { $0 === end }) { handles.append(end) }
                    return FileDescriptor(rawValue: end.fileDescriptor)
                case let handle as FileHandle where handle !== FileHandle.nullDevice:
                    return FileDescriptor(rawValue: handle.fileDescriptor)
                default:
                    let null = try FileDescriptor.open("/dev/null", reading ? .readOnly : .writeOnly, options: .closeOnExec)
                    opened.append(null)
                    return null
                }
            }
            do {
                self.input = try descriptor(input, reading: true)
                self.output = try descriptor(output, reading: false)
                self.error = try descriptor(error, reading: false)
            } catch {
                for null in opened { try? null.close() }
                throw error
            }
            self.handles = handles
            self.opened = opened
        }

        /// The parent keeps only its own ends of the pipes.
        func closeChildEnds() {
            let (handles, opened) = lock.withLock {
                defer { self.handles = []; self.opened = [] }
                return (self.handles, self.opened)
            }
            for handle in handles { try? handle.close() }
            for null in opened { try? null.close() }
        }
    }
}
