import Foundation

/// A wait that ran out: what was awaited, and for how long.
package struct WaitTimedOut: Error, CustomStringConvertible {
    package var awaited: String
    package var timeout: Duration
    package var description: String { "gave up after \(timeout) waiting for \(awaited)" }
}

/// Polls `condition` until it holds; throws `WaitTimedOut` naming `awaited` if it
/// does not within `timeout`. The limit bounds a hang, not a speed: in a full
/// parallel `swift test` on a loaded 2-core machine, work queued behind the other
/// suites' drawing has waited over a minute for a thread.
package func waitUntil(
    _ awaited: @autoclosure () -> String, timeout: Duration = .seconds(300), every interval: Duration = .milliseconds(10),
    _ condition: () throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else { throw WaitTimedOut(awaited: awaited(), timeout: timeout) }
        try await Task.sleep(for: interval)
    }
}

/// Blocks the calling thread, polling `condition` until it holds; false if it
/// does not within `timeout`. For a test's own threads (not tasks), which
/// cannot await. The limit bounds a hang, not a speed.
package func pollUntil(timeout: Duration = .seconds(120), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return condition() }
        usleep(1000)
    }
    return true
}

/// The calling thread's kernel thread id (its directory in /proc/self/task).
package func currentThreadID() -> String? {
    // "/proc/thread-self" links to "<pid>/task/<tid>".
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?.split(separator: "/").last.map(String.init)
}

/// The scheduler state Linux shows for thread `tid` of this process: "R"
/// running, "S" asleep in a wait (a lock, a condition, a read), and so on;
/// nil once the thread has gone.
package func threadState(_ tid: String) -> String? {
    guard let stat = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return nil }
    // "tid (comm) S ...": the name may hold spaces and parentheses, the state follows the last ")".
    return stat[stat.index(after: close)...].split(separator: " ").first.map(String.init)
}
