import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The tests' bounds on a hang, counted from when the work starts: they
/// must end a test whose work hangs, and say what it was waiting for.
@Suite(.threadsOfTheirOwn)
struct DeadlineTests {
    @Test func blockingWorkThatHangsIsCutAtItsDeadline() async throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("badge-deadline-\(UUID().uuidString)")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        defer { unlink(fifo.path) }
        let error = await #expect(throws: WaitTimedOut.self) {
            // Opening a FIFO for reading waits for a writer: for ever, here.
            try await onThreadOfItsOwn("a FIFO opened for reading", limit: .seconds(1)) { () -> Int32 in open(fifo.path, O_RDONLY) }
        }
        #expect(error?.awaited == "a FIFO opened for reading")
        #expect(error?.description == "gave up after 1.0 seconds waiting for a FIFO opened for reading", "\(String(describing: error))")
        // Lets the thread left blocked in open() go.
        let writer = open(fifo.path, O_WRONLY | O_NONBLOCK)
        if writer >= 0 { close(writer) }
    }

    @Test func asyncWorkThatHangsIsCancelledAtItsDeadline() async throws {
        let cancelled = Atomic<Bool>(false)
        let error = await #expect(throws: WaitTimedOut.self) {
            try await withDeadline("a task that sleeps for ten minutes", limit: .seconds(1)) {
                do {
                    try await Task.sleep(for: .seconds(600))
                } catch {
                    cancelled.store(true, ordering: .relaxed)
                    throw error
                }
            }
        }
        #expect(error?.awaited == "a task that sleeps for ten minutes")
        try await waitUntil("the task to see its cancellation", timeout: .seconds(60)) { cancelled.load(ordering: .relaxed) }
    }

    @Test func workDoneInTimeGivesItsResult() async throws {
        #expect(try await onThreadOfItsOwn("a sum") { (1...10).reduce(0, +) } == 55)
        #expect(try await withDeadline("a sum") { (1...10).reduce(0, +) } == 55)
        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await onThreadOfItsOwn("a refusal") { () throws -> Int in throw Refused() } }
    }
}
