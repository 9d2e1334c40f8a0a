#if canImport(Glibc)
import Glibc
#endif
import BadgeKit
import Foundation
import Logging
import Subprocess
import Synchronization
import SystemPackage

/// One run of a plugin program, from spawn to the death of everything it started.
///
/// - It runs in a session (and so a process group) of its own: a time limit,
///   a flood or a cancellation (Ctrl-C) ends the whole group, children included,
///   with SIGTERM and, after `grace`, SIGKILL.
/// - Standard input is the request, from an unlinked temporary file: the
///   program may read it or not, and badge never blocks on (or takes SIGPIPE
///   from) a program that does not.
/// - Standard output is read up to `maxOutputBytes`; beyond that the group is
///   killed. Standard error goes, line by line, to the logger, and its last
///   lines are kept for error messages.
struct PluginProcess: Sendable {
    var backend: String
    var executable: String
    var arguments: [String]
    var environment: [String: String]
    var workingDirectory: URL
    var timeout: Duration
    var grace: Duration = .seconds(2)
    var maxOutputBytes = 1 << 20
    var logger: Logger

    struct Finished: Sendable {
        var status: TerminationStatus
        var standardOutput: Data
        var standardError: [String]
    }

    /// Runs the program with `request` on its standard input. Throws
    /// BadgeError(.timeout), OutputFlood, the SubprocessError of a failed
    /// launch, or CancellationError; whatever happens, the process group has
    /// been sent SIGKILL when it returns.
    func run(request: Data) async throws -> Finished {
        let group = ProcessGroupID()
        OrphanReaper.runStarted()
        do {
            let finished = try await run(request: request, group: group)
            await OrphanReaper.runEnded(group: group.id)
            return finished
        } catch {
            await OrphanReaper.runEnded(group: group.id)
            throw error
        }
    }

    private func run(request: Data, group: ProcessGroupID) async throws -> Finished {
        let input = try RequestFile(request, backend: backend)
        var platform = PlatformOptions()
        // A new session makes the program the leader of a new process group whose
        // id is its pid, and detaches it from badge's terminal, so a Ctrl-C reaches
        // badge alone and badge decides how the plugin ends.
        platform.createSession = true
        platform.teardownSequence = [.gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: grace)]
        let configuration = Configuration(
            executable: .path(FilePath(executable)), arguments: Arguments(arguments),
            environment: .custom(Dictionary(uniqueKeysWithValues: environment.compactMap { key, value in
                Environment.Key(rawValue: key).map { ($0, value) }  // names are checked when the config is read
            })),
            workingDirectory: FilePath(workingDirectory.path), platformOptions: platform)

        let errors = StandardErrorLog(backend: backend, logger: logger)
        defer { group.killLeftovers() }
        let limit = maxOutputBytes, timeout = self.timeout
        let finished: Finished? = try await withThrowingTaskGroup(of: Finished?.self) { tasks in
            tasks.addTask {
                let result = try await Subprocess.run(
                    configuration, input: .fileDescriptor(input.take(), closeAfterSpawningProcess: true),
                    output: .sequence, error: .sequence
                ) { execution in
                    group.set(execution.processIdentifier.value)
                    return try await Self.readStreams(execution, limit: limit, errors: errors)
                }
                return Finished(status: result.terminationStatus, standardOutput: result.closureResult, standardError: errors.tail)
            }
            tasks.addTask {
                // The limit counts from the spawn, not from whenever this task first ran.
                await group.spawned()
                try await Task.sleep(for: timeout)
                // On a busy machine the timer and the program's exit can be noticed together:
                // a program that had already exited is not timed out, its run is about to end.
                for _ in 0..<100 where group.leaderHasExited { try await Task.sleep(for: .milliseconds(100)) }
                return nil
            }
            let first = try await tasks.next()!
            tasks.cancelAll()
            return first
        }
        guard let finished else {
            throw BadgeError(.timeout, "the plugin did not finish within its time limit of \(Self.seconds(timeout)); it was stopped",
                             backend: backend, cause: Self.lastWords(errors.tail),
                             hint: "raise timeoutSeconds for this backend if it needs longer")
        }
        return finished
    }

    /// Reads standard output (bounded) and standard error (to the log) together.
    private static func readStreams(
        _ execution: Execution<FileDescriptorInput, SequenceOutput, SequenceOutput>, limit: Int, errors: StandardErrorLog
    ) async throws -> Data {
        try await withThrowingTaskGroup(of: Data?.self) { streams in
            streams.addTask {
                for try await buffer in execution.standardError {
                    buffer.withUnsafeBytes { errors.append($0) }
                }
                errors.finish()
                return nil
            }
            streams.addTask {
                var output = Data()
                for try await buffer in execution.standardOutput {
                    buffer.withUnsafeBytes { output.append(contentsOf: $0) }
                    if output.count > limit {
                        // No grace for a flood: whatever it is doing, it is not answering.
                        try? execution.send(signal: .kill, toProcessGroup: true)
                        throw OutputFlood(limit: limit)
                    }
                }
                return output
            }
            var output = Data()
            while let next = try await streams.next() {
                if let next { output = next }
            }
            return output
        }
    }

    struct OutputFlood: Error {
        var limit: Int
    }

    static func seconds(_ duration: Duration) -> String {
        let (s, atto) = duration.components
        let value = Double(s) + Double(atto) / 1e18
        return value == value.rounded() ? "\(Int(value)) s" : String(format: "%.1f s", value)
    }

    /// The plugin's last lines on standard error, for an error's cause.
    static func lastWords(_ lines: [String]) -> String? {
        let recent = lines.suffix(5)
        return recent.isEmpty ? nil : "it said on standard error: " + recent.joined(separator: " | ")
    }
}

/// The plugin's process group, known once it is spawned, and killed again
/// after every run. swift-subprocess (1.0.2) cannot do this part: its teardown
/// stops as soon as the group *leader* has exited (it watches the leader's
/// pid, not the group), so a child that ignored SIGTERM, or one its parent
/// simply left behind, would outlive the backend. Nor does it offer Linux's
/// PR_SET_PDEATHSIG, so a plugin outlives a badge killed with SIGKILL.
final class ProcessGroupID: Sendable {
    private let value = Mutex<pid_t?>(nil)
    /// One element, when the program is spawned; `spawned` waits for it.
    private let spawn = AsyncStream.makeStream(of: Void.self)

    func set(_ pid: pid_t) {
        value.withLock { $0 = pid }
        LivePluginGroups.groups.withLock { _ = $0.insert(pid) }
        spawn.continuation.yield()
        spawn.continuation.finish()
    }

    /// Returns once the program has been spawned, or at once when the calling
    /// task is cancelled (a launch that failed: the run ends without it).
    func spawned() async {
        for await _ in spawn.stream { return }
    }

    var id: pid_t? { value.withLock { $0 } }

    /// Whether the program itself (the group's leader) has exited, reaped or not.
    var leaderHasExited: Bool {
        guard let pid = value.withLock({ $0 }) else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")")
        else { return true }
        let state = stat[close...].dropFirst(2).first
        return state == "Z" || state == "X"
    }

    func killLeftovers() {
        guard let pgid = value.withLock({ $0 }), pgid > 1 else { return }
        // The group id stays reserved while any member lives, so this reaches
        // only the plugin's own processes; ESRCH means none are left.
        _ = kill(-pgid, SIGKILL)
        LivePluginGroups.groups.withLock { _ = $0.remove(pgid) }
    }
}

/// The process groups of the plugins running now, for a process about to end
/// at once (a second Ctrl-C) that must not leave them behind: a plugin runs in
/// a session of its own, so the terminal's Ctrl-C never reaches it.
package enum LivePluginGroups {
    fileprivate static let groups = Mutex<Set<pid_t>>([])

    /// Sends SIGKILL to every running plugin's whole process group. A group is
    /// known here once swift-subprocess hands its pid to the run, which on a
    /// loaded machine can be well after the plugin started; so where every
    /// child of this process is a plugin (`OrphanReaper.isEnabled`), the group
    /// of each child that leads one is killed too.
    package static func killAll() {
        var leaders = groups.withLock { $0 }
        if OrphanReaper.isEnabled {
            for child in OrphanReaper.children(of: getpid()) where getpgid(child) == child && !OrphanReaper.isSpared(child) {
                leaders.insert(child)
            }
        }
        for pgid in leaders where pgid > 1 { _ = kill(-pgid, SIGKILL) }
    }
}

/// Standard error, split into lines: each is logged as it arrives and the last
/// few are kept. Lines are cut at 4 KiB and at most 1000 are logged per run,
/// so a chatty plugin cannot flood the log either.
final class StandardErrorLog: Sendable {
    private struct State {
        var partial = Data()
        var tail: [String] = []
        var logged = 0
        var dropped = 0
    }

    static let maxLineBytes = 4096
    static let maxLoggedLines = 1000
    static let tailLines = 20

    private let state = Mutex(State())
    private let backend: String
    private let logger: Logger

    init(backend: String, logger: Logger) {
        self.backend = backend
        self.logger = logger
    }

    var tail: [String] { state.withLock { $0.tail } }

    /// Splits what arrived into lines in one pass (memchr; no bytes moved
    /// but an unfinished line's), so standard error costs time in proportion
    /// to its size: removing each line from the front of a buffer took 5.5 s
    /// for 8 MB. Strings are made only of the lines that are logged and of
    /// the last few (the tail); the others are counted.
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let lines: [String] = state.withLock { state in
            var complete: [Range<Int>] = []
            var start = 0
            while start < bytes.count, let hit = memchr(base + start, 0x0A, bytes.count - start) {
                let end = UnsafeRawPointer(hit) - base
                complete.append(start..<end)
                start = end + 1
            }
            var lines: [String] = []
            // The line the last chunk left unfinished ends with the first range here.
            if let first = complete.first, !state.partial.isEmpty {
                state.partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[first]))
                lines.append(String(decoding: state.partial.prefix(Self.maxLineBytes), as: UTF8.self))
                state.partial.removeAll(keepingCapacity: true)
                complete.removeFirst()
            }
            let logRoom = max(0, Self.maxLoggedLines - state.logged - lines.count)
            for (index, range) in complete.enumerated() {
                if index < logRoom || index >= complete.count - Self.tailLines {
                    lines.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range.lowerBound..<min(range.upperBound, range.lowerBound + Self.maxLineBytes)]), as: UTF8.self))
                } else {
                    state.dropped += 1
                }
            }
            if start < bytes.count {
                state.partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...]))
                if state.partial.count > Self.maxLineBytes {
                    lines.append(String(decoding: state.partial.prefix(Self.maxLineBytes), as: UTF8.self))
                    state.partial.removeAll(keepingCapacity: true)
                }
            }
            return lines
        }
        lines.forEach(record)
    }

    func finish() {
        let rest = state.withLock { state -> String? in
            defer { state.partial.removeAll() }
            return state.partial.isEmpty ? nil : String(decoding: state.partial, as: UTF8.self)
        }
        rest.map(record)
        let dropped = state.withLock { $0.dropped }
        if dropped > 0 {
            logger.info("plugin: \(dropped) more lines on standard error not logged", metadata: ["backend": "\(backend)"])
        }
    }

    private func record(_ raw: String) {
        let line = String(raw.trimmingCharacters(in: .whitespacesAndNewlines).prefix(Self.maxLineBytes))
        guard !line.isEmpty else { return }
        let log = state.withLock { state -> Bool in
            state.tail.append(line)
            if state.tail.count > Self.tailLines { state.tail.removeFirst() }
            if state.logged < Self.maxLoggedLines {
                state.logged += 1
                return true
            }
            state.dropped += 1
            return false
        }
        if log { logger.info("plugin: \(line)", metadata: ["backend": "\(backend)"]) }
    }
}

/// The request as an unlinked temporary file, rewound, to be the plugin's
/// standard input. A file rather than a pipe: nothing to block on, no SIGPIPE.
final class RequestFile: Sendable {
    private let descriptor: Mutex<Int32?>

    init(_ data: Data, backend: String) throws {
        var template = Array("\(NSTemporaryDirectory())/badge-request-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw BadgeError(.io, "cannot create the plugin's request file", backend: backend,
                             path: NSTemporaryDirectory(), cause: BadgeError.errnoDescription(errno),
                             hint: "check that $TMPDIR exists and is writable")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let written = data.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
        guard written, lseek(fd, 0, SEEK_SET) == 0 else {
            let cause = BadgeError.errnoDescription(errno)
            close(fd)
            throw BadgeError(.io, "cannot write the plugin's request file", backend: backend, cause: cause)
        }
        descriptor = Mutex(fd)
    }

    /// Hands the descriptor over (to be closed by the spawn).
    func take() -> FileDescriptor {
        FileDescriptor(rawValue: descriptor.withLock { fd in defer { fd = nil }; return fd ?? -1 })
    }

    deinit {
        if let fd = descriptor.withLock({ $0 }) { close(fd) }
    }
}
