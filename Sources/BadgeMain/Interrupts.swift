import BadgeKit
import Dispatch
import Foundation

/// Ctrl-C (and SIGTERM) cancel the running command's task, so every stage
/// unwinds through its own cleanup and the store is left as it was. A second
/// signal ends the process at once, as that signal does by default (the shell
/// sees status 130 for SIGINT): the store's commit protocol makes that safe too,
/// and a later run sweeps whatever temporaries were left.
enum Interrupts {
    static func runCancellable(_ body: sending @escaping () async throws -> Void) async throws {
        // The signals are caught before the command starts: a Ctrl-C the moment it has
        // begun (its workspace made, say) cancels it rather than killing the process.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let interrupts = InterruptCounter()
        // A queue of its own: the global queues' threads (one a core) can all be
        // drawing a badge's bands, and Ctrl-C then waited for the drawing to end
        // (and, the pipeline past its last check by then, cancelled nothing).
        let queue = DispatchQueue(label: "badge.interrupts")
        let sources = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if interrupts.interrupt() > 1 {
                    signal(number, SIG_DFL)
                    raise(number)
                }
            }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        let task = Task { try await body() }
        interrupts.run(task)
        do {
            try await task.value
        } catch is CancellationError {
            throw BadgeError(.cancelled, "cancelled; the current badge is unchanged")
        }
    }
}

/// How many interrupts came, and the task they cancel (one that came before the
/// task started cancels it as it starts).
private final class InterruptCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var task: Task<Void, any Error>?

    /// Counts one interrupt and cancels the task; returns how many there have been.
    func interrupt() -> Int {
        lock.withLock {
            count += 1
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
