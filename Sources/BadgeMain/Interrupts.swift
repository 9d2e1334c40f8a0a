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
        let task = Task { try await body() }
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
                if interrupts.increment() > 1 {
                    signal(number, SIG_DFL)
                    raise(number)
                }
                task.cancel()
            }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        do {
            try await task.value
        } catch is CancellationError {
            throw BadgeError(.cancelled, "cancelled; the current badge is unchanged")
        }
    }
}

private final class InterruptCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }
}
