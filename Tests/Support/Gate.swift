import Foundation

/// A count that threads raise and other threads wait on, with a bound: how a
/// test's own threads (not tasks) wait for each other's state without
/// polling. `arrive()` raises it by one; `wait(for:)` blocks until it has
/// reached a number, or the bound passes.
package final class Gate: @unchecked Sendable {
    /// Guards `count`; broadcast on every arrival.
    private let condition = NSCondition()
    private var count = 0

    package init() {}

    /// Raises the count by one and wakes every thread waiting on it.
    package func arrive() {
        condition.lock()
        count += 1
        condition.broadcast()
        condition.unlock()
    }

    /// How many have arrived.
    package var arrivals: Int {
        condition.lock()
        defer { condition.unlock() }
        return count
    }

    /// Blocks the calling thread until `n` have arrived; false if `limit`
    /// passed first. The bound is for a hang, not a speed.
    package func wait(for n: Int = 1, limit: Duration = .seconds(120)) -> Bool {
        let (seconds, attoseconds) = limit.components
        let deadline = Date().addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        while count < n {
            if !condition.wait(until: deadline) { return count >= n }
        }
        return true
    }
}
