import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Threads of badge's own for blocking work split into parts that run at the
/// same time: a picture's bands, a PNG's bands, the frames of an animation.
/// Not Dispatch's global queues (`DispatchQueue`'s concurrent perform): on
/// Linux, Swift's tasks run on those queues' threads, about one a core, so a
/// band drawn there keeps every task queued behind it waiting for as long as
/// it takes (two pictures drawn at once on 2 cores: a task waited 2.98 s
/// behind their 3 s bands; on these threads, 0.02 s).
///
/// The calling thread always works on its own job, so a job is done even
/// when every thread of the pool is busy (with another picture, or with the
/// outer job this one is a part of): the pool's threads only help. A helper
/// that starts after the job is done does nothing. Parts are handed out in
/// no promised order; work whose parts depend on each other hands them out
/// itself, each once it is ready (see `share`).
package final class WorkerThreads: @unchecked Sendable {
    /// One thread fewer than the cores, since the caller works too.
    package static let shared = WorkerThreads(threads: max(1, ImageThreads.processorCount - 1))

    /// How many threads the pool has (started the first time they are needed).
    package let threads: Int
    // `pending`, `started` and `idle` are read and written only with `condition` locked.
    private let condition = NSCondition()
    private var pending: [Job] = []
    private var started = 0
    private var idle = 0

    package init(threads: Int) {
        self.threads = max(1, threads)
    }

    /// Whether the calling thread is one of a pool's own.
    package static var isWorkerThread: Bool { pthread_getspecific(workerKey) != nil }

    private static let workerKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Calls `body(k)` once for each k in 0..<iterations, on the calling
    /// thread and on up to `threads - 1` of the pool's, and returns when
    /// every call has returned. In no promised order.
    package func perform(iterations: Int, threads: Int, _ body: @Sendable (Int) -> Void) {
        guard iterations > 1, threads > 1 else {
            for k in 0..<iterations { body(k) }
            return
        }
        let next = Counter()
        withoutActuallyEscaping(body) { body in
            share(threads: min(threads, iterations)) {
                while let k = next.take(below: iterations) { body(k) }
            }
        }
    }

    /// Calls `work` on the calling thread and on up to `threads - 1` of the
    /// pool's threads at once, and returns when every call that started has
    /// returned. Each call takes parts of a shared job until none is left
    /// (and may wait for a part that another call is working on to make more
    /// ready), so the job is done by whichever threads come, however few.
    package func share(threads: Int, _ work: @Sendable () -> Void) {
        let helpers = min(threads - 1, self.threads)
        guard helpers > 0 else { return work() }
        // The helpers draw under the caller's thread limit too: a task-local
        // does not reach threads that are not the task's.
        let limit = ImageThreads.limit
        withoutActuallyEscaping(work) { work in
            let job = Job(work, limit: limit)
            enqueue(job, times: helpers)
            work()
            // Helpers not yet started are not waited for: they would find nothing left.
            condition.lock()
            pending.removeAll { $0 === job }
            condition.unlock()
            job.close()
        }
    }

    private func enqueue(_ job: Job, times: Int) {
        condition.lock()
        pending.append(contentsOf: repeatElement(job, count: times))
        let wanted = min(threads - started, max(0, pending.count - idle))
        started += wanted
        condition.broadcast()
        condition.unlock()
        for _ in 0..<wanted {
            NamedThread.start("badge.worker") { [self] in serve() }
        }
    }

    /// A pool thread's life: help with whatever job is pending.
    private func serve() {
        pthread_setspecific(Self.workerKey, UnsafeRawPointer(bitPattern: 1))
        while true {
            condition.lock()
            idle += 1
            while pending.isEmpty { condition.wait() }
            idle -= 1
            let job = pending.removeFirst()
            condition.unlock()
            job.help()
        }
    }

    /// One `share` call: its work, and how many helpers are working on it.
    private final class Job: @unchecked Sendable {
        // `work` and `active` are read and written only with `condition` locked;
        // `work` is nil once the caller's own call has returned.
        private let condition = NSCondition()
        private var work: (@Sendable () -> Void)?
        private var active = 0
        private let limit: Int?

        init(_ work: @escaping @Sendable () -> Void, limit: Int?) {
            self.work = work
            self.limit = limit
        }

        func help() {
            guard run() else { return }
            condition.lock()
            active -= 1
            if active == 0 { condition.broadcast() }
            condition.unlock()
        }

        /// Calls the work unless the job is closed; the reference to it ends
        /// with this function, before `close` can see the helper gone.
        private func run() -> Bool {
            condition.lock()
            guard let work else {
                condition.unlock()
                return false
            }
            active += 1
            condition.unlock()
            ImageThreads.$limit.withValue(limit) { work() }
            return true
        }

        /// Lets no more helpers start and waits for those working: then
        /// nothing holds `work` any longer.
        func close() {
            condition.lock()
            work = nil
            while active > 0 { condition.wait() }
            condition.unlock()
        }
    }

    private final class Counter: Sendable {
        private let value = Atomic<Int>(0)

        func take(below limit: Int) -> Int? {
            let k = value.add(1, ordering: .relaxed).oldValue
            return k < limit ? k : nil
        }
    }
}
