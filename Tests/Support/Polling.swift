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
