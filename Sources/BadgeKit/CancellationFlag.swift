import Synchronization

/// Task cancellation, readable from threads that are not Swift tasks: the drawing
/// threads of a large badge check it between bands and inside long filters, so
/// Ctrl-C stops a 4096 px render within a fraction of a second. Set it from
/// `withTaskCancellationHandler`'s `onCancel`.
public final class CancellationFlag: Sendable {
    private let state = Atomic<Bool>(false)

    public init() {}

    public func cancel() { state.store(true, ordering: .releasing) }

    public var isCancelled: Bool { state.load(ordering: .acquiring) }

    /// Runs blocking `work` on a thread of its own, with this flag set when the calling task is cancelled.
    public static func run<T: Sendable>(_ work: @escaping @Sendable (CancellationFlag) throws -> T) async throws -> T {
        let flag = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await BlockingExecutor.run { try work(flag) }
        } onCancel: {
            flag.cancel()
        }
    }
}
