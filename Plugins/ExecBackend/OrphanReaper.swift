#if canImport(Glibc)
import Glibc
#endif
import BadgeKit
internal import CProcessControl
import Foundation
import Synchronization

/// Plugins' descendants that escaped their process group. A plugin runs in a
/// session of its own, and its group is killed after every run; but a child
/// that calls `setsid` (a daemon) starts a session of its own too, and the
/// group kill never reaches it. With `PR_SET_CHILD_SUBREAPER`, such a
/// process, once its parent exits, becomes badge's child instead of init's:
/// whenever no plugin run is in flight, every child of badge that is not one
/// badge started is one of them, and is killed and reaped.
///
/// Only a program that starts no children of its own besides plugins may
/// enable it (the `badge` executable): in a process that also runs, say, test
/// servers, those would be taken for orphans. The one other program badge
/// starts, xdg-open (`serve --open`), runs in a session of its own that is
/// `spare`d: it and the browser it leaves behind are never taken for orphans.
package enum OrphanReaper {
    private struct State {
        var enabled = false
        var running = 0
        var sparedSessions: Set<pid_t> = []
    }

    private static let state = Mutex(State())

    /// Makes this process the subreaper of its descendants. Returns false
    /// when the kernel refused (a setsid grandchild then outlives the run).
    @discardableResult
    package static func enable() -> Bool {
        guard badge_become_child_subreaper() == 0 else { return false }
        state.withLock { $0.enabled = true }
        return true
    }

    /// Runs `run`, which starts a program that must outlive badge in a
    /// session of its own and calls `spare` with its pid as soon as it has
    /// it. Until then no orphans are killed; from then on every process of
    /// that session is left alone, however long `run` goes on.
    package static func sparingTheSession<T: Sendable>(
        _ run: (_ spare: @Sendable (pid_t) async -> Void) async throws -> T
    ) async rethrows -> T {
        runStarted()
        let held = Mutex(true)
        @Sendable func release() async {
            guard held.withLock({ held in defer { held = false }; return held }) else { return }
            await runEnded(group: nil)
        }
        do {
            let value = try await run { leader in
                state.withLock { _ = $0.sparedSessions.insert(leader) }
                await release()
            }
            await release()
            return value
        } catch {
            await release()
            throw error
        }
    }

    /// Whether `pid` is in a session `sparingTheSession` was told of.
    static func isSpared(_ pid: pid_t) -> Bool {
        let session = getsid(pid)
        return session > 0 && state.withLock { $0.sparedSessions.contains(session) }
    }

    /// Whether this process takes in orphans: then every child of it is a
    /// plugin, a plugin's orphan, or of a spared session.
    static var isEnabled: Bool { state.withLock { $0.enabled } }

    /// A plugin run begins.
    static func runStarted() {
        state.withLock { $0.running += 1 }
    }

    /// A plugin run has ended and its group was killed: when it was the last
    /// in flight, what remains of any plugin's descendants is killed.
    static func runEnded(group: pid_t?) async {
        let last = state.withLock { state -> Bool in
            state.running -= 1
            return state.enabled && state.running == 0
        }
        guard last else { return }
        // Detached: a cancelled run (Ctrl-C) still has its orphans killed.
        await Task.detached {
            try? await BlockingExecutor.run {
            // A process killed with its group reparents its own children only when it
            // has really exited: wait (bounded) for the group to be gone first. Its
            // members that came to badge as they died are zombies still in the group
            // until reaped, which this does as it waits.
            if let group, group > 1 {
                let deadline = ContinuousClock.now.advanced(by: .seconds(2))
                while ContinuousClock.now < deadline {
                    var status: Int32 = 0
                    while waitpid(-group, &status, WNOHANG) > 0 {}
                    guard kill(-group, 0) == 0 else { break }
                    usleep(2_000)
                }
            }
            killOrphans()
            }
        }.value
    }

    /// Kills and reaps every child of this process but those of spared
    /// sessions (in the badge executable, once no plugin runs, all the others
    /// are plugins' orphans). Repeats while it finds any: a killed orphan's
    /// own children come to badge in turn.
    static func killOrphans() {
        let me = getpid()
        for _ in 0..<50 {
            let children = children(of: me)
            let spared = children.filter(isSpared), orphans = children.filter { !isSpared($0) }
            // A spared process that has ended (the browser, once closed) is only reaped;
            // not the session's leader, whose end the one who started it waits for.
            for pid in spared where getsid(pid) != pid {
                var status: Int32 = 0
                _ = waitpid(pid, &status, WNOHANG)
            }
            if orphans.isEmpty { return }
            for pid in orphans { _ = kill(pid, SIGKILL) }
            for pid in orphans {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            }
        }
    }

    /// The processes whose parent is `parent`, from /proc.
    static func children(of parent: pid_t) -> [pid_t] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return names.compactMap { name -> pid_t? in
            guard let pid = pid_t(name),
                  let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")")
            else { return nil }
            // After the command's ")": state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 1, pid_t(fields[1]) == parent else { return nil }
            return pid
        }
    }
}
