import Foundation

/// Threads of badge's own, named so that `top -H`, `perf` and a debugger say
/// what each is. swift-corelibs-foundation applies a `Thread`'s name only when
/// it is set on that thread itself: one set before `start()` is dropped, and
/// the new thread keeps its creator's name ("oot.default-qos", the end of
/// Dispatch's "com.apple.root.default-qos"). So the name is set first thing
/// on the new thread.
package enum NamedThread {
    /// Starts `body` on a new thread named `name`: at most 15 bytes, or Linux
    /// refuses the name.
    package static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        Thread {
            Thread.current.name = name
            body()
        }.start()
    }
}
