import BadgeTestSupport
import Foundation
import Testing

/// The trait every suite carries (Tests/Support): tests run on threads of the
/// test process's own, as many as block at once.
@Suite(.threadsOfTheirOwn)
struct TestThreadsTests {
    @Test func aSynchronousTestRunsOnATestThread() {
        #expect(TestThreads.isCurrent, "ran on \(Thread.current.name ?? "an unnamed thread")")
    }

    /// Sixteen jobs that each block until all sixteen have started: on the
    /// global queues (one thread a core) they would wait for ever.
    @Test func asManyJobsBlockAtOnceAsNeedTo() async {
        let count = 16
        let arrived = NSCondition()
        nonisolated(unsafe) var started = 0
        let all = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<count {
                group.addTask {
                    arrived.withLock {
                        started += 1
                        arrived.broadcast()
                        let limit = Date(timeIntervalSinceNow: 60)
                        while started < count, arrived.wait(until: limit) {}
                        return started == count
                    }
                }
            }
            return await group.allSatisfy { $0 }
        }
        #expect(all, "\(started) of \(count) jobs started while the others blocked")
    }

    @Test func slotsAreTakenInTurnAndGivenBack() async {
        let slots = TestSlots(count: 1)
        await slots.acquire()
        let second = Task { await slots.acquire(); return true }
        slots.release()
        #expect(await second.value)
        slots.release()
    }
}
