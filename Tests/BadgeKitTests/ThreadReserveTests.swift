@testable import BadgeKit
import BadgeTestSupport
import Foundation
import Synchronization
import Testing

/// The threads blocking work runs on: kept for the next call once idle, a new
/// one whenever none waits (so no call waits for another's work), and gone
/// once idle for long enough.
@Suite(.threadsOfTheirOwn)
struct ThreadReserveTests {
    /// Calls made one after another run on the one thread, kept between them.
    @Test func anIdleThreadTakesTheNextCall() {
        let reserve = ThreadReserve(name: "badge.reserve1")
        let threads = Mutex<[String]>([])
        for _ in 0..<5 {
            let done = Gate()
            reserve.run {
                threads.withLock { $0.append(currentThreadID() ?? "?") }
                done.arrive()
            }
            #expect(done.wait())
            // The thread goes back to the idle list after its work: wait for it there.
            #expect(pollUntil { reserve.idleCount >= 1 })
        }
        let seen = threads.withLock { $0 }
        #expect(seen.count == 5)
        #expect(Set(seen).count == 1, "five calls in a row ran on \(Set(seen).count) threads")
    }

    /// Calls under way at once each have a thread: three that each wait for
    /// all three to have started finish only if none waits for another.
    @Test func callsUnderWayAtOnceEachHaveAThread() {
        let reserve = ThreadReserve(name: "badge.reserve2")
        let started = Gate(), finished = Gate()
        let names = Mutex<Set<String>>([]), ids = Mutex<Set<String>>([])
        for _ in 0..<3 {
            reserve.run {
                names.withLock { _ = $0.insert(currentThreadName() ?? "?") }
                ids.withLock { _ = $0.insert(currentThreadID() ?? "?") }
                started.arrive()
                if started.wait(for: 3) { finished.arrive() }
            }
        }
        #expect(finished.wait(for: 3), "only \(started.arrivals) of 3 calls started")
        #expect(ids.withLock { $0.count } == 3)
        #expect(names.withLock { $0 } == ["badge.reserve2"])
        #expect(pollUntil { reserve.idleCount == 3 })
    }

    /// What a call's work holds is let go once it has run, not kept while its
    /// thread waits idle for the next.
    @Test func whatAWorkHoldsIsLetGoOnceItHasRun() {
        final class Held: Sendable {}
        weak var released: Held?
        let reserve = ThreadReserve(name: "badge.reserve5")
        let done = Gate()
        do {
            let held = Held()
            released = held
            reserve.run {
                withExtendedLifetime(held) {}
                done.arrive()
            }
        }
        #expect(done.wait())
        #expect(pollUntil { reserve.idleCount == 1 })
        #expect(released == nil)
    }

    /// A thread left idle past the limit ends, and the next call starts a new one.
    @Test func anIdleThreadEndsAfterTheLimit() {
        let reserve = ThreadReserve(name: "badge.reserve3", idleLimit: .milliseconds(50))
        let first = Mutex<String?>(nil), second = Mutex<String?>(nil)
        let done = Gate()
        reserve.run {
            first.withLock { $0 = currentThreadID() }
            done.arrive()
        }
        #expect(done.wait())
        let tid = first.withLock { $0 } ?? "?"
        // Idle first, then gone: its kernel thread no longer exists.
        #expect(pollUntil { reserve.idleCount == 0 && !FileManager.default.fileExists(atPath: "/proc/self/task/\(tid)") })
        reserve.run {
            second.withLock { $0 = currentThreadID() }
            done.arrive()
        }
        #expect(done.wait(for: 2))
        #expect(second.withLock { $0 } != nil)
    }

    /// A call that arrives as an idle thread's wait runs out is still run.
    @Test func callsRacingTheIdleLimitAreAllRun() {
        let reserve = ThreadReserve(name: "badge.reserve4", idleLimit: .milliseconds(1))
        let done = Gate()
        for k in 0..<400 {
            reserve.run { done.arrive() }
            // Every few calls, let the idle threads' limits run out around the next ones.
            if k % 8 == 0 { usleep(1000) }
        }
        #expect(done.wait(for: 400), "\(done.arrivals) of 400 calls ran")
    }
}
