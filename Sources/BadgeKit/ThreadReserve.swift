import Foundation
import Synchronization

/// Threads of badge's own for blocking work (`BlockingExecutor`,
/// `BackgroundValue`), kept once their work is done for the next call's. A
/// call takes a thread that waits idle, else starts a new one, so no call ever
/// waits for another call's work to finish; a thread idle for `idleLimit`
/// ends. A server drawing hundreds of badges a second so spares each call a
/// thread's start and end (docs/PERFORMANCE.md, badge serve).
package final class ThreadReserve: Sendable {
    package static let blocking = ThreadReserve(name: "badge.blocking")
    package static let values = ThreadReserve(name: "badge.value")

    /// One thread's work, handed over through its semaphore.
    private final class Worker: @unchecked Sendable {
        // Written only by whoever holds the worker: its creator before the
        // thread starts, or the caller that took it from the idle list before
        // `wake` is signalled; read by the thread after that start or wait.
        var work: (@Sendable () -> Void)?
        let wake = DispatchSemaphore(value: 0)
    }

    /// At most 15 bytes, or Linux refuses it (`NamedThread`).
    let name: String
    let idleLimit: DispatchTimeInterval
    private let idle = Mutex<[Worker]>([])

    package init(name: String, idleLimit: DispatchTimeInterval = .seconds(10)) {
        self.name = name
        self.idleLimit = idleLimit
    }

    /// How many threads wait idle for work.
    package var idleCount: Int { idle.withLock { $0.count } }

    /// Runs `work` on one of the reserve's threads, at once.
    package func run(_ work: @escaping @Sendable () -> Void) {
        if let worker = idle.withLock({ $0.popLast() }) {
            worker.work = work
            worker.wake.signal()
            return
        }
        let worker = Worker()
        worker.work = work
        NamedThread.start(name) { [self] in serve(worker) }
    }

    /// A thread's life: its work, then waiting in the idle list for the next.
    private func serve(_ worker: Worker) {
        while true {
            // Taken out first, so what the work holds is let go before the thread waits idle.
            if let work = worker.work.take() { work() }
            idle.withLock { $0.append(worker) }
            if worker.wake.wait(timeout: .now() + idleLimit) == .timedOut {
                let retired = idle.withLock { list -> Bool in
                    guard let k = list.firstIndex(where: { $0 === worker }) else { return false }
                    list.remove(at: k)
                    return true
                }
                if retired { return }
                // A caller took this thread as the wait ran out: its work is on the way.
                worker.wake.wait()
            }
        }
    }
}
