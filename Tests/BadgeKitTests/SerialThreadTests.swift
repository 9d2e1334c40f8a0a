@testable import BadgeKit
import BadgeTestSupport
import Foundation
import Synchronization
import Testing

/// The thread a batch's journal is written and synced on: the work in the
/// order handed, all on one thread of badge's own, and the waits that the
/// journal's checkpoints and the manifest rely on.
@Suite(.threadsOfTheirOwn)
struct SerialThreadTests {
    private struct Run: Sendable {
        var index: Int
        var thread: pthread_t
        var name: String?
    }

    @Test func runsTheWorkInTheOrderHandedOnOneNamedThread() async throws {
        let runs = Mutex<[Run]>([])
        let caller = try await onOwnThread { () -> pthread_t in
            let serial = SerialThread(name: "badge.test-ser")
            for k in 0..<1000 {
                serial.async { runs.withLock { $0.append(Run(index: k, thread: pthread_self(), name: currentThreadName())) } }
            }
            serial.waitUntilDone()
            serial.finish()
            return pthread_self()
        }
        let all = runs.withLock { $0 }
        // waitUntilDone returned only once all 1000 had run, in the order handed.
        #expect(all.map(\.index) == Array(0..<1000))
        #expect(Set(all.map(\.thread)).count == 1)
        #expect(all.first?.thread != caller)
        #expect(Set(all.map(\.name)) == ["badge.test-ser"])
    }

    @Test func waitingWaitsForTheWorkStillRunning() async throws {
        let gate = DispatchSemaphore(value: 0)
        let finished = Atomic<Bool>(false)
        let sawFinished = try await onOwnThread { () -> [Bool] in
            let serial = SerialThread(name: "badge.test-ser")
            serial.async {
                gate.wait()
                finished.store(true, ordering: .sequentiallyConsistent)
            }
            // A second thread waits while the work is held at the gate.
            let waited = DispatchSemaphore(value: 0)
            let waiter = Mutex<String?>(nil)
            let seen = Mutex<Bool?>(nil)
            Thread {
                waiter.withLock { $0 = currentThreadID() }
                serial.waitUntilDone()
                seen.withLock { $0 = finished.load(ordering: .sequentiallyConsistent) }
                waited.signal()
            }.start()
            // The waiter is asleep (in waitUntilDone, the only wait it has) and has not returned.
            let blocked = pollUntil {
                guard let tid = waiter.withLock({ $0 }) else { return false }
                return threadState(tid) == "S"
            }
            let before = seen.withLock { $0 }
            gate.signal()
            waited.wait()
            // finish() waits too: work handed before it has run when it returns.
            let more = Atomic<Int>(0)
            for _ in 0..<50 { serial.async { more.add(1, ordering: .sequentiallyConsistent) } }
            serial.finish()
            return [blocked, before == nil, seen.withLock { $0 } == true, more.load(ordering: .sequentiallyConsistent) == 50]
        }
        #expect(sawFinished[0], "the waiting thread was never seen blocked in waitUntilDone")
        #expect(sawFinished[1], "waitUntilDone returned while the work was held at its gate")
        #expect(sawFinished[2], "waitUntilDone returned before the work it waited for had run")
        #expect(sawFinished[3], "finish() returned before the work handed before it had run")
    }

    /// The thread ends with `finish()` and with the last reference: none is left behind.
    @Test func theThreadEndsWhenFinishedOrDropped() async throws {
        let names = try await onOwnThread { () -> [Int] in
            func count() -> Int { Self.threadsNamed("badge.test-end") }
            let finished = SerialThread(name: "badge.test-end")
            finished.async {}
            finished.waitUntilDone()
            let whileRunning = count()
            finished.finish()
            let afterFinish = Self.waitFor { count() == 0 } ? 0 : count()
            do {
                let dropped = SerialThread(name: "badge.test-end")
                dropped.async {}
                dropped.waitUntilDone()
            }
            let afterDrop = Self.waitFor { count() == 0 } ? 0 : count()
            return [whileRunning, afterFinish, afterDrop]
        }
        #expect(names == [1, 0, 0])
    }

    /// The threads of this process named `name`, from /proc.
    private static func threadsNamed(_ name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) == name
        }.count
    }

    /// Polls `condition` (a thread that has returned takes a moment to leave
    /// /proc) for up to ten seconds, yielding between looks.
    private static func waitFor(_ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            sched_yield()
        }
        return condition()
    }
}
