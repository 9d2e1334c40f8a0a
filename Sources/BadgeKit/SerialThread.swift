import Foundation

/// One thread of badge's own that runs the work handed to it one piece after
/// another, in the order handed: for blocking work that must keep its order
/// (a batch journal's writes and syncs) and must hold up none of Dispatch's
/// threads, which on Linux are Swift's cooperative threads too.
///
/// The thread starts with the first piece of work and ends with `finish()`
/// (or when the last reference goes), after what was handed before it.
package final class SerialThread: Sendable {
    private let state: State

    /// `name`: at most 15 bytes (see `NamedThread`).
    package init(name: String) {
        state = State(name: name)
    }

    deinit { state.finish(wait: false) }

    /// Hands `work` to the thread; it runs after everything handed before it.
    /// Handing work after `finish()` is a programming error.
    package func async(_ work: @escaping @Sendable () -> Void) {
        state.hand(work)
    }

    /// Waits until everything handed so far has run. Blocking: call it off
    /// the cooperative threads.
    package func waitUntilDone() {
        state.waitUntilDone()
    }

    /// Waits until everything handed so far has run, then lets the thread end.
    /// Blocking, like `waitUntilDone()`.
    package func finish() {
        state.finish(wait: true)
    }

    /// What the caller and the thread share, under `condition`'s lock: the
    /// thread holds this, never the `SerialThread`, so dropping the last
    /// reference to that still ends the thread.
    private final class State: @unchecked Sendable {
        private let name: String
        private let condition = NSCondition()
        private var queue: [@Sendable () -> Void] = []
        private var head = 0
        private var handed = 0
        private var done = 0
        private var started = false
        private var finished = false

        init(name: String) { self.name = name }

        func hand(_ work: @escaping @Sendable () -> Void) {
            condition.lock()
            precondition(!finished, "work handed to the \(name) thread after finish()")
            queue.append(work)
            handed += 1
            let start = !started
            started = true
            condition.signal()
            condition.unlock()
            if start { NamedThread.start(name) { [self] in serve() } }
        }

        func waitUntilDone() {
            condition.lock()
            let target = handed
            while done < target { condition.wait() }
            condition.unlock()
        }

        func finish(wait: Bool) {
            condition.lock()
            finished = true
            condition.broadcast()
            condition.unlock()
            if wait { waitUntilDone() }
        }

        private func serve() {
            condition.lock()
            while true {
                while head == queue.count && !finished { condition.wait() }
                if head == queue.count {
                    condition.unlock()
                    return
                }
                let work = queue[head]
                head += 1
                if head == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    head = 0
                }
                condition.unlock()
                work()
                condition.lock()
                done += 1
                condition.broadcast()
            }
        }
    }
}
