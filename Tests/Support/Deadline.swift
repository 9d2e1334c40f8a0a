import Foundation
import Synchronization

/// Bounds a hang in a test, counted from when the work starts.
///
/// Swift Testing's `.timeLimit` starts its clock when the test case starts,
/// and every test case of a run starts at once (no limit on parallel tests
/// since Swift 6.3), so it also counts the test's wait for one of
/// `TestSlots`' slots (`ThreadsOfTheirOwn`), minutes in a loaded run. These
/// run the work on a thread of its own or as a task on the tests' threads
/// (`TestThreads`), start the clock when it starts, and watch it from a
/// thread of their own, which no queue delays.
///
/// `onThreadOfItsOwn` runs blocking work (a call that could block for ever,
/// such as opening a FIFO) on a thread of its own; `withDeadline` runs async
/// work as a task and cancels it when the time is up. Either throws
/// `WaitTimedOut` naming `awaited` when the work is not done within `limit`;
/// work still blocked then is left on its thread.
package func onThreadOfItsOwn<T: Sendable>(
    _ awaited: @autoclosure () -> String, limit: Duration = .seconds(60), _ work: @escaping @Sendable () throws -> T
) async throws -> T {
    let race = Race<T>(awaited: awaited(), limit: limit)
    let thread = Thread {
        race.startClock(onTimeout: {})
        race.finish(Result { try work() })
    }
    thread.name = "badge.test-work"
    return try await race.result { thread.start() }
}

/// See `onThreadOfItsOwn`.
package func withDeadline<T: Sendable>(
    _ awaited: @autoclosure () -> String, limit: Duration = .seconds(60), _ work: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = Race<T>(awaited: awaited(), limit: limit)
    let started = TaskBox()
    return try await race.result {
        // The work runs on the tests' own threads (TestThreads), as the test waiting for it does.
        let task = Task(executorPreference: TestThreads.pool) {
            // The clock starts when the task does.
            race.startClock(onTimeout: { started.task.withLock { $0 }?.cancel() })
            let result: Result<T, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            race.finish(result)
        }
        started.task.withLock { $0 = task }
    }
}

/// The task `withDeadline` runs, for its clock to cancel.
private final class TaskBox: Sendable {
    let task = Mutex<Task<Void, Never>?>(nil)
}

/// The work's result or the deadline, whichever comes first.
private final class Race<T: Sendable>: Sendable {
    private enum State {
        case running(CheckedContinuation<T, any Error>?)
        case finished(Result<T, any Error>)
        case delivered
    }

    private let awaited: String
    private let limit: Duration
    private let state = Mutex<State>(.running(nil))
    private let done = DispatchSemaphore(value: 0)

    init(awaited: String, limit: Duration) {
        self.awaited = awaited
        self.limit = limit
    }

    /// Starts the watch on a thread of its own: at the deadline, the race is
    /// lost to `WaitTimedOut` and `onTimeout` runs.
    func startClock(onTimeout: @escaping @Sendable () -> Void) {
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        let watch = Thread { [self] in
            if done.wait(timeout: .now() + seconds) == .timedOut {
                finish(.failure(WaitTimedOut(awaited: awaited, timeout: limit)))
                onTimeout()
            }
        }
        watch.name = "badge.test-deadline"
        watch.start()
    }

    /// The first result wins; later ones are dropped.
    func finish(_ result: Result<T, any Error>) {
        let continuation: CheckedContinuation<T, any Error>? = state.withLock { state in
            guard case let .running(continuation) = state else { return nil }
            if let continuation {
                state = .delivered
                return continuation
            }
            state = .finished(result)
            return nil
        }
        done.signal()
        continuation?.resume(with: result)
    }

    /// Starts the work with `start` and waits for the race's outcome.
    func result(start: () -> Void) async throws -> T {
        start()
        return try await withCheckedThrowingContinuation { continuation in
            let ready: Result<T, any Error>? = state.withLock { state in
                switch state {
                case .running:
                    state = .running(continuation)
                    return nil
                case let .finished(result):
                    state = .delivered
                    return result
                case .delivered:
                    return nil
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}

/// A bound on a hang for a blocking read of a child's output or a wait for
/// its end: SIGKILLs the child unless `cancel()` comes within `seconds`,
/// which ends the read and the wait. Watched from a thread of its own.
package final class KillTimer: Sendable {
    private let cancelled = DispatchSemaphore(value: 0)
    private let killed = Atomic<Bool>(false)
    package let seconds: Double

    package init(_ process: ChildProcess, after seconds: Double) {
        self.seconds = seconds
        Thread { [self] in
            if cancelled.wait(timeout: .now() + seconds) == .timedOut {
                killed.store(true, ordering: .relaxed)
                process.signal(SIGKILL)
            }
        }.start()
    }

    /// Stops the timer: the child ended (or said what was awaited) in time.
    package func cancel() { cancelled.signal() }

    /// Whether the time ran out and the child was killed.
    package var fired: Bool { killed.load(ordering: .relaxed) }
}
