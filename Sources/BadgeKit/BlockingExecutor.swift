import Foundation
import Synchronization

/// badge's one executor for blocking work: C calls, large file I/O, waits on a
/// terminal, a pipe or a process. A `TaskExecutor` with a fixed bound on its
/// threads, which are badge's own (named "badge.blocking", started as work
/// arrives and kept), so Swift's cooperative pool never stalls on blocking
/// work, and a server asked for a thousand things at once queues them rather
/// than starting a thousand threads. Work runs in the order it arrives.
///
/// Async code hands it work with `run` (work whose task is cancelled before a
/// thread takes it is dropped) or `runToCompletion`. The work runs inside the
/// calling task, so that task's task-locals (`ImageThreads.limit`) hold in it.
/// Blocking code that wants a result later uses `BackgroundValue`; work that
/// must keep its order, `SerialLane`.
///
/// The bound cannot deadlock: nothing run here waits for work queued behind it.
/// A `BackgroundValue` or a `SerialLane` whose work no thread has taken yet
/// when a caller needs it runs that work on the caller's thread.
public final class BlockingExecutor: TaskExecutor, @unchecked Sendable {
    /// The one instance badge runs its blocking work on.
    public static let shared = BlockingExecutor(name: "badge.blocking", threads: max(16, 4 * ImageThreads.processorCount))

    /// How many threads it may have at once.
    package let threads: Int
    /// At most 15 bytes, or Linux refuses it (`NamedThread`).
    private let name: String

    private enum Work {
        case job(UnownedJob)
        case call(@Sendable () -> Void)
    }

    /// A thread waiting for work, woken through its own semaphore.
    private final class Parked: Sendable {
        let wake = DispatchSemaphore(value: 0)
    }

    // Read and written only with `lock` held.
    private let lock = NSLock()
    private var queue: [Work] = []
    private var head = 0
    private var started = 0
    private var parked: [Parked] = []

    package init(name: String, threads: Int) {
        self.name = name
        self.threads = max(1, threads)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        add(.job(UnownedJob(job)))
    }

    /// Runs `work` on one of the executor's threads, outside any task: for
    /// blocking code that hands work on (`BackgroundValue`, `SerialLane`) and
    /// for a loop that runs while it has work (curl's transfers).
    package func submit(_ work: @escaping @Sendable () -> Void) {
        add(.call(work))
    }

    /// How many threads have started so far (never more than `threads`).
    package var startedThreads: Int { lock.withLock { started } }

    private func add(_ work: Work) {
        lock.lock()
        queue.append(work)
        let waking = parked.popLast()
        let starting = waking == nil && started < threads
        if starting { started += 1 }
        lock.unlock()
        // Otherwise every thread is busy: the first to finish takes it.
        if let waking { waking.wake.signal() }
        if starting { NamedThread.start(name) { [self] in serve() } }
    }

    /// A thread's life: the oldest work waiting, else parked until there is some.
    private func serve() {
        let me = Parked()
        while true {
            lock.lock()
            guard head < queue.count else {
                parked.append(me)
                lock.unlock()
                me.wake.wait()
                continue
            }
            let work = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            lock.unlock()
            switch work {
            case let .job(job): job.runSynchronously(on: asUnownedTaskExecutor())
            case let .call(call): call()
            }
        }
    }

    /// Runs blocking `work` on the shared executor and returns its result.
    /// Cancelled before the work starts, or while it runs, it throws
    /// `CancellationError` (the work's result, if it ran, is dropped).
    public static func run<T: Sendable>(_ work: @Sendable () throws -> T) async throws -> T {
        try await shared.run(work)
    }

    /// Like `run`, but the work always runs, and a cancellation does not hide
    /// its result: what it did (a file written), it reports.
    public static func runToCompletion<T: Sendable>(_ work: @Sendable () throws -> T) async throws -> T {
        try await shared.runToCompletion(work)
    }

    /// `run` on this executor.
    package func run<T: Sendable>(_ work: @Sendable () throws -> T) async throws -> T {
        try await runToCompletion {
            try Task.checkCancellation()
            let value = try work()
            try Task.checkCancellation()
            return value
        }
    }

    /// `runToCompletion` on this executor, whatever the caller's isolation:
    /// `onThisExecutor` is nonisolated, so it starts on the preferred task executor.
    package func runToCompletion<T: Sendable>(_ work: @Sendable () throws -> T) async throws -> T {
        try await withTaskExecutorPreference(self) { try await Self.onThisExecutor(work) }
    }

    private nonisolated static func onThisExecutor<T: Sendable>(_ work: @Sendable () throws -> T) async throws -> T {
        try work()
    }
}

/// A value made once, by whichever thread first asks for it; a thread that
/// asks while another makes it waits for that one.
package final class OnceValue<Value: Sendable>: @unchecked Sendable {
    private enum State {
        case unmade
        case making
        case made(Value)
    }

    private let maker: @Sendable () -> Value
    // `state` is read and written only with `condition` locked.
    private var state = State.unmade
    private let condition = NSCondition()

    package init(_ make: @escaping @Sendable () -> Value) {
        maker = make
    }

    /// Makes it now, unless another thread has begun to.
    package func make() {
        condition.lock()
        guard case .unmade = state else { return condition.unlock() }
        state = .making
        condition.unlock()
        let value = maker()
        condition.lock()
        state = .made(value)
        condition.broadcast()
        condition.unlock()
    }

    /// The value: made now on this thread if no thread has begun to, else waited for.
    package var value: Value {
        make()
        condition.lock()
        defer { condition.unlock() }
        while true {
            if case let .made(value) = state { return value }
            condition.wait()
        }
    }
}

/// A value worked out on the blocking executor while the caller goes on with
/// other work, for blocking work whose result is needed only later (a font
/// looked up, a time zone's rules loaded). `value` waits for it, or works it
/// out itself if no thread has begun to.
package final class BackgroundValue<T: Sendable>: Sendable {
    private let once: OnceValue<Result<T, any Error>>

    package init(on executor: BlockingExecutor = .shared, _ work: @escaping @Sendable () throws -> T) {
        let once = OnceValue { Result { try work() } }
        self.once = once
        executor.submit { once.make() }
    }

    /// The value (blocking: read it off the cooperative pool).
    package var value: T {
        get throws { try once.value.get() }
    }
}

/// Blocking work run one piece after another, in the order handed, on the
/// blocking executor: at most one of its threads at a time, and none while
/// there is nothing to do. For work that must keep its order (a batch
/// journal's writes and syncs).
package final class SerialLane: @unchecked Sendable {
    private enum Phase {
        /// Nothing handed is waiting.
        case idle
        /// Work is waiting and a run of it is queued on the executor.
        case queued
        /// A thread is running the work.
        case running
    }

    private let executor: BlockingExecutor
    // Read and written only with `condition` locked.
    private let condition = NSCondition()
    private var waiting: [@Sendable () -> Void] = []
    private var phase = Phase.idle
    private var handed = 0
    private var done = 0

    package init(on executor: BlockingExecutor = .shared) {
        self.executor = executor
    }

    /// Hands `work` on; it runs after everything handed before it.
    package func async(_ work: @escaping @Sendable () -> Void) {
        condition.lock()
        waiting.append(work)
        handed += 1
        let queue = phase == .idle
        if queue { phase = .queued }
        condition.unlock()
        if queue { executor.submit { [self] in claimAndDrain() } }
    }

    /// Waits until everything handed so far has run, running it on this
    /// thread when no thread of the executor has begun to. Blocking: call it
    /// off the cooperative pool.
    package func waitUntilDone() {
        condition.lock()
        let target = handed
        while done < target {
            if phase == .queued {
                phase = .running
                condition.unlock()
                drain()
                condition.lock()
            } else {
                condition.wait()
            }
        }
        condition.unlock()
    }

    /// The executor's run of the work, unless a waiting caller has taken it on.
    private func claimAndDrain() {
        condition.lock()
        let claimed = phase == .queued
        if claimed { phase = .running }
        condition.unlock()
        if claimed { drain() }
    }

    /// Runs the waiting work in order until none is left (by the one thread in `.running`).
    private func drain() {
        condition.lock()
        while !waiting.isEmpty {
            let batch = waiting
            waiting.removeAll(keepingCapacity: true)
            condition.unlock()
            for work in batch {
                work()
                condition.lock()
                done += 1
                condition.broadcast()
                condition.unlock()
            }
            condition.lock()
        }
        phase = .idle
        condition.broadcast()
        condition.unlock()
    }
}
