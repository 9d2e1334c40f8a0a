import Synchronization

/// Admission for renders: at most `limit` run at once, at most `queueLimit`
/// wait for a slot, and any more are turned away at once (the server answers
/// 503 with Retry-After) rather than queued without bound. A waiter that is
/// cancelled (its client gone, the server stopping) leaves the queue.
package final class RenderGate: Sendable {
    package struct Full: Error {}

    private struct State {
        var running = 0
        var waiting: [(id: UInt64, slot: CheckedContinuation<Void, any Error>)] = []
        var nextID: UInt64 = 0
    }

    package let limit: Int
    package let queueLimit: Int
    private let state = Mutex(State())

    package init(limit: Int, queueLimit: Int) {
        self.limit = max(1, limit)
        self.queueLimit = max(0, queueLimit)
    }

    /// Renders running and waiting now.
    package var load: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.waiting.count) } }

    /// Runs `work` in a slot. Throws `Full` when every slot is taken and the
    /// queue is full, and `CancellationError` when cancelled while waiting.
    package func run<T: Sendable>(_ work: () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await work()
    }

    private func acquire() async throws {
        enum Admission { case now, full, wait(UInt64) }
        let admission: Admission = state.withLock { state in
            if state.running < limit {
                state.running += 1
                return .now
            }
            if state.waiting.count >= queueLimit { return .full }
            state.nextID += 1
            return .wait(state.nextID)
        }
        switch admission {
        case .now: return
        case .full: throw Full()
        case let .wait(id):
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (slot: CheckedContinuation<Void, any Error>) in
                    let cancelled = state.withLock { state -> Bool in
                        if Task.isCancelled { return true }
                        state.waiting.append((id, slot))
                        return false
                    }
                    if cancelled { slot.resume(throwing: CancellationError()) }
                }
            } onCancel: {
                let slot = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                    guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiting.remove(at: index).slot
                }
                slot?.resume(throwing: CancellationError())
            }
        }
    }

    /// Hands the slot to the first waiter, or frees it.
    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst().slot
        }
        next?.resume()
    }
}
