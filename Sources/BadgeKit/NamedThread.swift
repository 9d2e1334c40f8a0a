import Foundation

/// Threads of badge's own, named so that `top -H`, `perf` and a debugger say
/// what each is. swift-corelibs-foundation drops a `Thread`'s name set before
/// `start()` (the new thread keeps its creator's: "oot.default-qos", the end
/// of Dispatch's "com.apple.root.default-qos"), and a name set on the new
/// thread reaches Linux only once `start()` has recorded which thread it
/// started, after the thread may already be running (6 of 400 threads kept
/// their creator's name). So the new thread waits for `start()` to return,
/// then names itself.
package enum NamedThread {
    /// Starts `body` on a new thread named `name`: at most 15 bytes, or Linux
    /// refuses the name.
    package static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let started = DispatchSemaphore(value: 0)
        let thread = Thread {
            started.wait()
            Thread.current.name = name
            body()
        }
        thread.start()
        started.signal()
    }
}
