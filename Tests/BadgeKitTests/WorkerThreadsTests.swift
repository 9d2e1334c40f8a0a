@testable import BadgeKit
import BadgeTestSupport
import Foundation
import Synchronization
import Testing

/// badge's own threads for blocking work split into parts (drawing bands, PNG
/// bands, animation frames): never Dispatch's global queues, whose threads
/// Swift's tasks share on Linux.
@Suite(.threadsOfTheirOwn)
struct WorkerThreadsTests {
    /// Runs `work` on a thread of this test's own, off Swift's cooperative pool.
    private static func onThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: work()) }.start()
        }
    }

    private static var thisThread: UInt { UInt(bitPattern: Int(pthread_self())) }

    @Test func everyPartRunsOnceOnTheCallerOrThePoolsOwnThreads() async {
        let pool = WorkerThreads(threads: 3)
        let runs = Mutex<[Int: Int]>([:])
        let elsewhere = Atomic<Int>(0)
        let helped = Gate()
        await Self.onThread {
            let caller = Self.thisThread
            pool.perform(iterations: 64, threads: 4) { k in
                runs.withLock { $0[k, default: 0] += 1 }
                if WorkerThreads.isWorkerThread {
                    helped.arrive()
                } else if Self.thisThread != caller {
                    elsewhere.add(1, ordering: .relaxed)
                }
                // Part 0 waits until a pool thread has taken a part, so the pool is seen to help.
                if k == 0 { _ = helped.wait() }
            }
        }
        #expect(runs.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0..<64).map { ($0, 1) }))
        let strays = elsewhere.load(ordering: .relaxed), poolHelped = helped.arrivals > 0
        #expect(strays == 0, "parts ran on threads that are neither the caller nor the pool's")
        #expect(poolHelped, "no pool thread helped")
    }

    /// The caller works on its own job, so it is done even when every pool
    /// thread is busy, and nested jobs (a frame's PNG bands inside the
    /// animation's frames) cannot wait on each other.
    @Test func aJobIsDoneWhileEveryPoolThreadIsBusy() async {
        let pool = WorkerThreads(threads: 1)
        let release = Gate()
        let holding = Gate()
        // Occupies the pool's one thread until released. A thread of its own, not
        // a task: on a loaded run every cooperative thread can be held by other
        // tests for longer than any wait here, and a task would not start.
        let blockerDone = DispatchSemaphore(value: 0)
        Thread {
            pool.share(threads: 2) {
                if WorkerThreads.isWorkerThread {
                    holding.arrive()
                    _ = release.wait()
                } else {
                    _ = holding.wait()
                }
            }
            blockerDone.signal()
        }.start()
        let held = await Self.onThread { holding.wait() }
        #expect(held, "the pool's thread never took the blocker's part")
        let total = await Self.onThread { () -> Int in
            let sum = Atomic<Int>(0)
            pool.perform(iterations: 8, threads: 2) { k in
                pool.perform(iterations: 8, threads: 2) { j in sum.add(k * 8 + j, ordering: .relaxed) }
            }
            return sum.load(ordering: .relaxed)
        }
        #expect(total == (0..<64).reduce(0, +))
        release.arrive()
        await Self.onThread { blockerDone.wait() }
    }

    /// A job's parts may wait for each other when none waits for a part that
    /// nobody has taken: `share` runs one loop per thread over a shared list.
    @Test func sharedWorkIsFinishedByWhicheverThreadsCome() async {
        let pool = WorkerThreads(threads: 2)
        let left = Mutex<[Int]>(Array(0..<100))
        let done = Mutex<[Int]>([])
        await Self.onThread {
            pool.share(threads: 3) {
                while let k = left.withLock({ $0.popLast() }) { done.withLock { $0.append(k) } }
            }
        }
        #expect(done.withLock { $0.sorted() } == Array(0..<100))
    }

    /// Each of badge's threads carries its own name, not its creator's.
    @Test func badgesThreadsAreNamedForWhatTheyDo() async throws {
        let pool = WorkerThreads(threads: 1)
        let names = Mutex<Set<String>>([])
        let helped = Gate()
        await Self.onThread {
            // The caller's part waits for the pool's thread to take the other.
            pool.perform(iterations: 2, threads: 2) { _ in
                if WorkerThreads.isWorkerThread {
                    names.withLock { _ = $0.insert(currentThreadName() ?? "?") }
                    helped.arrive()
                } else {
                    _ = helped.wait()
                }
            }
        }
        #expect(names.withLock { $0 } == ["badge.worker"])
        #expect(try await BlockingExecutor.run { currentThreadName() } == "badge.blocking")
    }

    /// The caller's `ImageThreads.limit` holds on the pool's threads too.
    @Test func theHelpersDrawUnderTheCallersLimit() async throws {
        let pool = WorkerThreads(threads: 1)
        let seen = Mutex<[Int?]>([])
        let helped = Gate()
        await Self.onThread {
            ImageThreads.$limit.withValue(7) {
                pool.perform(iterations: 2, threads: 2) { _ in
                    if WorkerThreads.isWorkerThread {
                        seen.withLock { $0.append(ImageThreads.limit) }
                        helped.arrive()
                    } else {
                        _ = helped.wait()
                    }
                }
            }
        }
        #expect(seen.withLock { $0 } == [7])
    }

    /// Started many at once (when a new thread may run before `start()` has
    /// returned), every one still carries its own name.
    @Test func everyThreadStartedAtOnceCarriesItsName() {
        let names = Mutex<[String?]>([])
        let done = Gate()
        for _ in 0..<500 {
            NamedThread.start("badge.named") {
                names.withLock { $0.append(currentThreadName()) }
                done.arrive()
            }
        }
        #expect(done.wait(for: 500))
        let wrong = names.withLock { $0.filter { $0 != "badge.named" } }
        #expect(wrong.isEmpty, "\(wrong.count) of 500 threads were not named: \(Set(wrong.map { $0 ?? "nil" }))")
    }
}
