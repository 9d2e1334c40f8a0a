@testable import BadgeKit
import BadgeTestSupport
import Foundation
import Synchronization
import Testing

/// badge's one executor for blocking work, and the two things built on it: a
/// value worked out in the background, and work that keeps its order. The
/// bound on its threads holds, cancelled work that has not started is dropped,
/// the calling task's task-locals reach the work, and nothing built on it
/// waits for a thread when every thread is busy.
@Suite(.threadsOfTheirOwn)
struct BlockingExecutorTests {
    /// Holds one thread of `executor` until `release` is signalled; returns
    /// once that thread has begun.
    private static func occupy(_ executor: BlockingExecutor, until release: DispatchSemaphore) {
        let begun = Gate()
        executor.submit {
            begun.arrive()
            release.wait()
        }
        #expect(begun.wait())
    }

    @Test func theWorkRunsOnABlockingThreadWhateverTheCallersIsolation() async throws {
        #expect(try await BlockingExecutor.run { currentThreadName() } == "badge.blocking")
        let fromMainActor = try await Task { @MainActor in try await BlockingExecutor.run { currentThreadName() } }.value
        #expect(fromMainActor == "badge.blocking")
        #expect(BlockingExecutor.shared.threads >= 16)
    }

    @Test func theCallingTasksTaskLocalsHoldInTheWork() async throws {
        let limit = try await ImageThreads.$limit.withValue(3) { try await BlockingExecutor.run { ImageThreads.limit } }
        #expect(limit == 3)
        #expect(try await BlockingExecutor.run { ImageThreads.limit } == nil)
    }

    /// Twelve calls at once on an executor of three threads: never more than
    /// three run at a time, no fourth thread starts, and every call finishes.
    @Test func noMoreThreadsThanTheBoundRunAtOnce() async throws {
        let executor = BlockingExecutor(name: "badge.test-bnd", threads: 3)
        let counts = Concurrency()
        let started = Gate()
        let all = try await withThrowingTaskGroup(of: Int.self) { group in
            for k in 0..<12 {
                group.addTask {
                    try await executor.run {
                        counts.begin()
                        // The first three wait until all three run at once.
                        started.arrive()
                        _ = started.wait(for: 3)
                        counts.end()
                        return k
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(all.sorted() == Array(0..<12))
        #expect(counts.mostAtOnce == 3)
        #expect(executor.startedThreads == 3)
        #expect(counts.threadNames == ["badge.test-bnd"])
    }

    /// Threads are kept and reused: a hundred calls made one after another
    /// run on no more threads than the executor's bound of eight. (A call
    /// that comes while the thread that ran the one before is still on its
    /// way back to the queue starts another thread, up to the bound.)
    @Test func idleThreadsTakeTheNextCalls() async throws {
        let executor = BlockingExecutor(name: "badge.test-idl", threads: 8)
        var seen: Set<String> = []
        for _ in 0..<100 { seen.insert(try await executor.run { currentThreadID() ?? "?" }) }
        #expect(seen.count <= 8, "a hundred calls in a row ran on \(seen.count) threads")
        #expect(executor.startedThreads <= 8)
    }

    /// A call whose task is cancelled while it waits for a thread never runs
    /// and throws CancellationError; `runToCompletion` runs all the same.
    @Test func cancelledWorkThatHasNotStartedIsDropped() async throws {
        let executor = BlockingExecutor(name: "badge.test-cnc", threads: 1)
        let release = DispatchSemaphore(value: 0)
        Self.occupy(executor, until: release)
        let ran = Mutex(false), completed = Mutex(false)
        let dropped = Task { try await executor.run { ran.withLock { $0 = true } } }
        let kept = Task { try await executor.runToCompletion { completed.withLock { $0 = true } } }
        dropped.cancel()
        kept.cancel()
        release.signal()
        await #expect(throws: CancellationError.self) { try await dropped.value }
        try await kept.value
        #expect(!ran.withLock { $0 })
        #expect(completed.withLock { $0 })
    }

    /// What a call's work holds is let go once it has run.
    @Test func whatAWorkHoldsIsLetGoOnceItHasRun() async throws {
        final class Held: Sendable {}
        weak var released: Held?
        do {
            let held = Held()
            released = held
            try await BlockingExecutor.run { withExtendedLifetime(held) {} }
        }
        #expect(released == nil)
    }

    /// A background value runs on the executor; when every thread is busy,
    /// reading it works it out on the reader's thread rather than waiting.
    @Test func aBackgroundValueNeverWaitsForAThread() throws {
        let ran = Gate()
        let background = BackgroundValue { () -> String? in
            defer { ran.arrive() }
            return currentThreadName()
        }
        #expect(ran.wait())
        #expect(try background.value == "badge.blocking")
        let executor = BlockingExecutor(name: "badge.test-bgv", threads: 1)
        let release = DispatchSemaphore(value: 0)
        Self.occupy(executor, until: release)
        let reader = currentThreadID()
        let value = BackgroundValue(on: executor) { currentThreadID() }
        #expect(try value.value == reader)
        release.signal()
    }

    /// A lane runs its work in the order handed, one piece at a time, on the
    /// executor's threads.
    @Test func aLaneRunsItsWorkInOrderOneAtATime() {
        let executor = BlockingExecutor(name: "badge.test-lan", threads: 4)
        let lane = SerialLane(on: executor)
        let order = Mutex<[Int]>([])
        let counts = Concurrency()
        for k in 0..<1000 {
            lane.async {
                counts.begin()
                order.withLock { $0.append(k) }
                counts.end()
            }
        }
        lane.waitUntilDone()
        #expect(order.withLock { $0 } == Array(0..<1000))
        #expect(counts.mostAtOnce == 1)
        // The caller may have run some of it (below): the rest ran on the executor.
        #expect(counts.threadNames.isSubset(of: ["badge.test-lan", currentThreadName() ?? "?"]))
    }

    /// `waitUntilDone` returns only once the work running when it was called
    /// has finished.
    @Test func waitingWaitsForTheWorkStillRunning() throws {
        let lane = SerialLane(on: BlockingExecutor(name: "badge.test-wai", threads: 2))
        let started = Gate(), release = DispatchSemaphore(value: 0)
        let finished = Atomic<Bool>(false)
        lane.async {
            started.arrive()
            release.wait()
            finished.store(true, ordering: .sequentiallyConsistent)
        }
        #expect(started.wait())
        let waiter = Mutex<String?>(nil), sawFinished = Mutex<Bool?>(nil)
        let returned = Gate()
        Thread {
            waiter.withLock { $0 = currentThreadID() }
            lane.waitUntilDone()
            sawFinished.withLock { $0 = finished.load(ordering: .sequentiallyConsistent) }
            returned.arrive()
        }.start()
        // The waiter is asleep in waitUntilDone (its only wait) and has not returned.
        #expect(pollUntil { waiter.withLock { $0 }.map { threadState($0) == "S" } ?? false })
        #expect(sawFinished.withLock { $0 } == nil)
        release.signal()
        #expect(returned.wait())
        #expect(sawFinished.withLock { $0 } == true)
    }

    /// With every thread of the executor busy, a lane's waiter runs the work
    /// itself, in order: a journal's checkpoint never waits for a free thread.
    @Test func aLaneNeverWaitsForAThread() {
        let executor = BlockingExecutor(name: "badge.test-lnb", threads: 1)
        let release = DispatchSemaphore(value: 0)
        Self.occupy(executor, until: release)
        let lane = SerialLane(on: executor)
        let order = Mutex<[Int]>([]), threads = Mutex<Set<String>>([])
        for k in 0..<10 {
            lane.async {
                order.withLock { $0.append(k) }
                threads.withLock { _ = $0.insert(currentThreadID() ?? "?") }
            }
        }
        lane.waitUntilDone()
        #expect(order.withLock { $0 } == Array(0..<10))
        #expect(threads.withLock { $0 } == [currentThreadID() ?? "?"])
        release.signal()
        // The run the executor had queued finds nothing left to do, and later work still runs there.
        let later = Gate()
        lane.async { later.arrive() }
        #expect(later.wait())
    }
}

/// How many pieces of work run at once, the most that ever did, and the
/// names of the threads they ran on.
private final class Concurrency: Sendable {
    private let running = Atomic<Int>(0), most = Atomic<Int>(0)
    private let names = Mutex<Set<String>>([])

    func begin() {
        most.max(running.add(1, ordering: .sequentiallyConsistent).newValue, ordering: .sequentiallyConsistent)
        names.withLock { _ = $0.insert(currentThreadName() ?? "?") }
    }

    var threadNames: Set<String> { names.withLock { $0 } }

    func end() { running.subtract(1, ordering: .sequentiallyConsistent) }

    var mostAtOnce: Int { most.load(ordering: .sequentiallyConsistent) }
}
