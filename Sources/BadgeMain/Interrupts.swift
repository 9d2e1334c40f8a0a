import BadgeKit
import ExecBackend
import Foundation
import Synchronization

/// Ctrl-C (and SIGTERM) cancel the running command's task, so every stage
/// unwinds through its own cleanup and the store is left as it was. A second
/// signal ends the process at once, as that signal does by default (the shell
/// sees status 130 for SIGINT), and the running exec plugins' process groups
/// with it: the store's commit protocol makes that safe too, and a later run
/// sweeps whatever temporaries were left.
enum Interrupts {
    /// Set by a command that says itself, at the first Ctrl-C, what stopping
    /// does (a batch: which badges are kept): the listener then says nothing.
    static let commandSaysItsStop = Atomic<Bool>(false)

    static func runCancellable(_ body: sending @escaping () async throws -> Void) async throws {
        // The handlers are in place before the command starts: a Ctrl-C the moment it
        // has begun (its workspace made, say) cancels it rather than killing the process.
        // Once it has ended, the signals get back the actions they had.
        let listener = InterruptListener.shared
        let previous = listener.catchSignals()
        defer { listener.restore(previous) }
        let task = Task { try await body() }
        listener.run(task)
        do {
            try await task.value
        } catch let choice as ChoiceCancelled {
            // The picker's own keys (q, Esc, Ctrl-C in raw mode) say what they mean.
            throw choice
        } catch {
            // Whatever the command threw once a signal had cancelled it came of the stop.
            if let number = listener.stopSignal {
                throw StoppedBySignal(signal: number, kept: error as? CommandStopped)
            }
            if let stopped = error as? CommandStopped { throw StoppedBySignal(signal: SIGINT, kept: stopped) }
            if error is CancellationError { throw BadgeError(.cancelled, "cancelled; the current badge is unchanged") }
            throw error
        }
    }
}

/// What a command that was stopped says it kept (a batch: the badges it
/// finished), thrown when it notices it has been cancelled.
struct CommandStopped: Error {
    var kept: String
    var hint: String?
}

/// A command the person stopped with Ctrl-C (or that SIGTERM stopped): not an
/// error. badge says so on a line of its own and exits 128 + the signal's
/// number, as a shell reports a program the signal ended: 130 for Ctrl-C.
struct StoppedBySignal: Error {
    var signal: Int32
    var kept: CommandStopped?

    var exitStatus: Int32 { 128 + signal }

    var message: String {
        let by = signal == SIGINT ? "Ctrl-C" : signal == SIGTERM ? "SIGTERM" : "signal \(signal)"
        var text = "badge: stopped (\(by)); " + (kept?.kept ?? "the current badge is unchanged")
        if let hint = kept?.hint { text += "\nhint: " + hint }
        return text
    }
}

/// The self-pipe that carries a caught signal out of its handler: the handler
/// only writes the signal's number to it, which is async-signal-safe, and
/// `InterruptListener` reads it, on the blocking executor. Written once, before any handler is
/// installed, and never closed: a handler may run on any thread at any time.
private nonisolated(unsafe) var interruptPipeWriteEnd: Int32 = -1

private let forwardInterrupt: @convention(c) (Int32) -> Void = { number in
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    // Non-blocking: were the pipe ever full, the signal is dropped rather than the thread stopped.
    _ = write(interruptPipeWriteEnd, &byte, 1)
    errno = saved
}

/// Turns SIGINT and SIGTERM, while a command runs, into the cancellation of
/// the task that `run` was given; one that came before the task cancels it as
/// it starts.
///
/// The handler is installed with `sigaction`, which is in force when it
/// returns, so no signal slips past between the command's start and the
/// listener being ready. Whichever thread the kernel delivers the signal to,
/// the handler passes it on through the pipe; it changes no thread's signal
/// mask, so child processes start with the mask badge itself was given.
private final class InterruptListener: @unchecked Sendable {
    static let shared = InterruptListener()

    private static let signals = [SIGINT, SIGTERM]
    /// Whether the pipe and its listener exist (they do unless the process is out of descriptors).
    private let listening: Bool
    private let lock = NSLock()
    private var count = 0
    private var first: Int32?
    private var task: Task<Void, any Error>?

    /// The signal that stopped the running command, if one did.
    var stopSignal: Int32? { lock.withLock { first } }

    private init() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            listening = false
            return
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        interruptPipeWriteEnd = ends[1]
        listening = true
        let readEnd = ends[0]
        // The listener waits on the pipe for the rest of the process's life, on
        // one of the blocking executor's threads.
        BlockingExecutor.shared.submit { [self] in listen(readEnd) }
    }

    /// Installs the handler for a command that starts now, with no interrupt
    /// counted yet; returns the actions it replaced. Without a pipe it installs
    /// nothing: the signals keep the actions badge was started with.
    func catchSignals() -> [Int32: sigaction] {
        lock.withLock {
            count = 0
            first = nil
            task = nil
        }
        Interrupts.commandSaysItsStop.store(false, ordering: .relaxed)
        guard listening else { return [:] }
        var previous: [Int32: sigaction] = [:]
        for number in Self.signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = forwardInterrupt
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            var old = sigaction()
            if sigaction(number, &action, &old) == 0 { previous[number] = old }
        }
        return previous
    }

    /// Puts back the actions `catchSignals` replaced.
    func restore(_ previous: [Int32: sigaction]) {
        for (number, old) in previous {
            var old = old
            sigaction(number, &old, nil)
        }
    }

    private func listen(_ readEnd: Int32) {
        var byte: UInt8 = 0
        while true {
            let got = read(readEnd, &byte, 1)
            if got < 0 && errno == EINTR { continue }
            guard got == 1 else { return }
            let count = interrupt(Int32(byte))
            if count == 1 && !Interrupts.commandSaysItsStop.load(ordering: .relaxed) {
                // Stopping may take a moment (a plugin's grace, a commit under way): say it is
                // heard, on a line of its own (a spinner's line is cleared first).
                Terminal.write(to: STDERR_FILENO, Data(((Terminal.stderrIsTerminal ? "\r\u{1B}[2K" : "") + "badge: stopping (again to end at once)\n").utf8))
            }
            if count > 1 {
                let number = Int32(byte)
                LivePluginGroups.killAll()
                signal(number, SIG_DFL)
                // This thread may have been started with the signal blocked.
                var set = sigset_t()
                sigemptyset(&set)
                sigaddset(&set, number)
                pthread_sigmask(SIG_UNBLOCK, &set, nil)
                raise(number)
            }
        }
    }

    /// Counts one interrupt and cancels the task; returns how many there have been.
    private func interrupt(_ number: Int32) -> Int {
        lock.withLock {
            count += 1
            if first == nil { first = number }
            task?.cancel()
            return count
        }
    }

    func run(_ task: Task<Void, any Error>) {
        lock.withLock {
            self.task = task
            if count > 0 { task.cancel() }
        }
    }
}
