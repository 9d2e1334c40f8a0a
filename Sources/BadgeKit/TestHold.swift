import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A seam for the tests of interrupted and killed runs. With `BADGE_TEST_HOLD`
/// set to a stage's name ("before-commit", "after-commit", or inside the
/// store's commit: "commit-after-fsync", "commit-after-history-link",
/// "commit-after-rename"), a run that reaches
/// that stage says so on standard error ("badge: held at STAGE") and waits there
/// until its standard input ends or its task is cancelled, so that a test can
/// signal it at a known moment. Without the variable it does nothing, and a
/// release build never reads it.
package enum TestHold {
    package static let variable = "BADGE_TEST_HOLD"

    package static func at(_ stage: String, _ environment: BadgeEnvironment) async {
        #if !DEBUG
        return
        #else
        guard environment.variables[variable] == stage else { return }
        FileHandle.standardError.write(Data("badge: held at \(stage)\n".utf8))
        let release = Release()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                release.wait(continuation)
                // The read blocks: on the blocking executor, off the cooperative pool.
                BlockingExecutor.shared.submit {
                    waitForInputsEnd()
                    release.fire()
                }
            }
        } onCancel: {
            release.fire()
        }
        #endif
    }

    /// The same seam inside blocking code that has no `BadgeEnvironment` (the
    /// store's commit, on a thread of its own): the stage is read from the
    /// process's environment, and the wait (for standard input's end) blocks
    /// this thread. Without the variable, or in a release build, it does nothing.
    package static func here(_ stage: String) {
        #if DEBUG
        guard ProcessInfo.processInfo.environment[variable] == stage else { return }
        FileHandle.standardError.write(Data("badge: held at \(stage)\n".utf8))
        waitForInputsEnd()
        #endif
    }

    private static func waitForInputsEnd() {
        var byte: UInt8 = 0
        while true {
            let n = read(STDIN_FILENO, &byte, 1)
            if n == 0 || (n < 0 && errno != EINTR) { break }
        }
    }

    /// Resumes the waiting continuation once, whichever comes first: input's end or cancellation.
    private final class Release: @unchecked Sendable {
        private let lock = NSLock()
        private var continuation: CheckedContinuation<Void, Never>?
        private var fired = false

        func wait(_ continuation: CheckedContinuation<Void, Never>) {
            let now = lock.withLock {
                if fired { return true }
                self.continuation = continuation
                return false
            }
            if now { continuation.resume() }
        }

        func fire() {
            let waiting = lock.withLock {
                guard !fired else { return nil as CheckedContinuation<Void, Never>? }
                fired = true
                defer { continuation = nil }
                return continuation
            }
            waiting?.resume()
        }
    }
}
