import Foundation

/// Runs `work` on a thread of its own and awaits its result: long blocking
/// work in a test (parsing a million values, decoding a big picture) never
/// holds one of Swift's few cooperative threads, which the async tests
/// running beside it need.
package func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// The calling thread's name as Linux keeps it (what `top -H` and `perf`
/// show): "badge.blocking" on a thread of `BlockingExecutor`'s, say.
package func currentThreadName() -> String? {
    (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
}
