@testable import BadgeServer
import BadgeTestSupport
import Synchronization
import Testing

/// The render gate: a fixed number at once, a bounded queue, and a refusal
/// (never a wait without end) past it; a cancelled waiter leaves the queue.
@Suite(.threadsOfTheirOwn) struct RenderGateTests {
    /// Work that runs until it is let go, reporting that it started.
    final class Latch: Sendable {
        private let state = Mutex<(started: Int, released: Bool, waiters: [CheckedContinuation<Void, Never>])>((0, false, []))

        var started: Int { state.withLock { $0.started } }

        func work() async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    state.started += 1
                    if state.released { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }

        func release() {
            let waiters = state.withLock { state in
                state.released = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Waits for `condition` to hold (polling, with `waitUntil`'s generous
    /// deadline); if it never does, lets the latch's work go, so that no task
    /// is left waiting on it, and throws.
    static func waitFor(_ awaited: @autoclosure () -> String, releasing latch: Latch, _ condition: () -> Bool) async throws {
        do {
            try await waitUntil(awaited(), condition)
        } catch {
            latch.release()
            throw error
        }
    }

    @Test func atMostTheLimitRunAndThoseBeyondTheQueueAreRefused() async throws {
        let gate = RenderGate(limit: 2, queueLimit: 3)
        let latch = Latch()
        let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    try await gate.run { await latch.work() }
                    return "ran"
                }
            }
            // Two running bodies (inside latch.work) and three queued: then no third starts.
            try await Self.waitFor("2 running and 3 queued (\(gate.load), \(latch.started) started)", releasing: latch) {
                gate.load == (2, 3) && latch.started == 2
            }
            await Task.yield()
            #expect(latch.started == 2, "more than the limit started")
            // The queue is full: the next is refused at once.
            await #expect(throws: RenderGate.Full.self) { try await gate.run { 1 } }
            latch.release()
            var outcomes: [String] = []
            for try await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        #expect(outcomes == Array(repeating: "ran", count: 5))
        #expect(latch.started == 5)
        #expect(gate.load == (0, 0))
    }

    @Test func aCancelledWaiterLeavesTheQueueAndFreesItsPlace() async throws {
        let gate = RenderGate(limit: 1, queueLimit: 1)
        let latch = Latch()
        let running = Task { try await gate.run { await latch.work() } }
        try await Self.waitFor("the first to start (\(latch.started) started)", releasing: latch) { latch.started == 1 }
        let waiting = Task { try await gate.run { "late" } }
        try await Self.waitFor("1 running and 1 queued (\(gate.load))", releasing: latch) { gate.load == (1, 1) }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(gate.load == (1, 0))
        // Its place in the queue is free again.
        let next = Task { try await gate.run { "next" } }
        try await Self.waitFor("1 running and 1 queued (\(gate.load))", releasing: latch) { gate.load == (1, 1) }
        latch.release()
        try await running.value
        #expect(try await next.value == "next")
        #expect(gate.load == (0, 0))
    }

    @Test func aQueueOfZeroRefusesAnyWait() async throws {
        let gate = RenderGate(limit: 1, queueLimit: 0)
        let latch = Latch()
        let running = Task { try await gate.run { await latch.work() } }
        try await Self.waitFor("the first to start (\(latch.started) started)", releasing: latch) { latch.started == 1 }
        await #expect(throws: RenderGate.Full.self) { try await gate.run { 0 } }
        latch.release()
        try await running.value
        #expect(try await gate.run { 7 } == 7)
    }
}
