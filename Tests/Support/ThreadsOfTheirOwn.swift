import Foundation
import Testing

/// Runs each test on threads of the test process's own, never on the global
/// concurrent queues.
///
/// On Linux the Swift tasks of a test process share Dispatch's global threads,
/// one a core. Many tests are synchronous and busy for seconds (drawing a 4096 px
/// badge, decoding a zip bomb, filtering a picture): two of them on a two-core
/// machine held both threads, every other test waited, and a test with a clock of
/// its own (a job polled for 30 s, a key pressed once the screen shows a line)
/// timed out while it was never run. Under this trait a test's jobs go to
/// `TestThreads.pool`, which starts a thread whenever no idle one is waiting:
/// a test that blocks holds its own thread, and the kernel shares the cores.
/// So that the cores are not shared by every test at once (a plugin's 10 s
/// availability check timed out when all 570 started together), a test first
/// waits for one of `TestSlots.shared`'s slots, four a core: its clocks start
/// once it holds one.
///
/// Every suite in Tests/ carries it (`scripts/check-suites.py`, run by
/// `make test`, says which do not).
package struct ThreadsOfTheirOwn: SuiteTrait, TestTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        await TestSlots.shared.acquire()
        defer { TestSlots.shared.release() }
        try await withTaskExecutorPreference(TestThreads.pool) { try await function() }
    }
}

/// At most `count` tests at once; the others wait, first come first served,
/// suspended (holding no thread).
package final class TestSlots: @unchecked Sendable {
    package static let shared = TestSlots(count: 4 * max(1, ProcessInfo.processInfo.activeProcessorCount))

    private let lock = NSLock()
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init(count: Int) {
        free = count
    }

    package func acquire() async {
        await withCheckedContinuation { (slot: CheckedContinuation<Void, Never>) in
            let now: Bool = lock.withLock {
                guard free > 0 else {
                    waiting.append(slot)
                    return false
                }
                free -= 1
                return true
            }
            if now { slot.resume() }
        }
    }

    package func release() {
        let next: CheckedContinuation<Void, Never>? = lock.withLock {
            guard !waiting.isEmpty else {
                free += 1
                return nil
            }
            return waiting.removeFirst()
        }
        next?.resume()
    }
}

extension Trait where Self == ThreadsOfTheirOwn {
    /// The test's jobs run on threads of the test process's own (`ThreadsOfTheirOwn`).
    package static var threadsOfTheirOwn: Self { ThreadsOfTheirOwn() }
}

/// A task executor with no bound on its threads: a job goes to an idle thread
/// when one is waiting, else to a new one. A thread that has had nothing to do
/// for 10 seconds ends.
package final class TestThreads: TaskExecutor, @unchecked Sendable {
    package static let pool = TestThreads()

    private let condition = NSCondition()
    /// Jobs not yet taken, oldest first, from `head` on.
    private var queue: [UnownedJob] = []
    private var head = 0
    /// Threads waiting for a job.
    private var idle = 0

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            queue.append(job)
            // Each waiting job needs a thread of its own to be sure of running
            // while the busy threads stay busy.
            if idle >= queue.count - head {
                condition.signal()
            } else {
                let thread = Thread { [self] in work() }
                thread.stackSize = 8 << 20
                thread.start()
            }
        }
    }

    /// Whether the caller runs on one of the pool's threads.
    package static var isCurrent: Bool { Thread.current.threadDictionary[marker] != nil }

    private static let marker = "badge.test-thread"

    private func work() {
        Thread.current.name = "test-thread"
        Thread.current.threadDictionary[Self.marker] = true
        condition.lock()
        while true {
            if head < queue.count {
                let job = queue[head]
                head += 1
                if head == queue.count { queue.removeAll(keepingCapacity: true); head = 0 }
                condition.unlock()
                job.runSynchronously(on: asUnownedTaskExecutor())
                condition.lock()
                continue
            }
            idle += 1
            let signalled = condition.wait(until: Date(timeIntervalSinceNow: 10))
            idle -= 1
            if !signalled && head == queue.count { break }
        }
        condition.unlock()
    }
}
