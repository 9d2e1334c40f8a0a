import BadgeKit
import Foundation

/// A failed conformance requirement: which one, and what was seen.
public struct ConformanceFailure: Error, CustomStringConvertible {
    public var requirement: String
    public var detail: String
    public var description: String { "\(requirement): \(detail)" }
}

/// The checks every backend must pass, written once and run by each backend's
/// own tests (`try await GeneratorConformance.check(makeGenerator)`). They hold a
/// backend to the requirements documented on `BadgeGenerator`.
public enum GeneratorConformance {
    /// A backend made to wait, for the check that it stops when cancelled mid-run: a
    /// generator and a request it does not finish on its own (a plugin that hangs, a
    /// server that never answers), and `started`, which turns true once it is at work.
    public struct Waiting: Sendable {
        public var generator: any BadgeGenerator
        public var request: BadgeRequest
        public var started: @Sendable () -> Bool

        public init(_ generator: any BadgeGenerator, request: BadgeRequest, started: @escaping @Sendable () -> Bool) {
            self.generator = generator
            self.request = request
            self.started = started
        }
    }

    /// Runs every check. `request` should be one the backend can serve in a
    /// test environment; `waiting`, when the backend can be made to wait, adds
    /// the check that it stops when cancelled in the middle of its work.
    public static func check(
        _ generator: any BadgeGenerator,
        request: BadgeRequest,
        expectDeterministic: Bool = false,
        waiting: Waiting? = nil
    ) async throws {
        // Availability is cheap and says why not.
        let availability = await generator.availability()
        if case let .unavailable(reason, _) = availability {
            guard !reason.isEmpty else {
                throw ConformanceFailure(requirement: "availability", detail: "unavailable without a reason")
            }
            throw ConformanceFailure(requirement: "availability", detail: "the test request needs an available backend: \(reason)")
        }

        // One image, inside the workspace, that the intake accepts.
        let (_, firstBytes, strays) = try await generateOnce(generator, request)
        guard strays.isEmpty else {
            throw ConformanceFailure(requirement: "workspace", detail: "wrote files beside its image: \(strays)")
        }
        do {
            _ = try ImageIntake(limits: .default).inspect(firstBytes, accepting: [.png])
        } catch {
            throw ConformanceFailure(requirement: "image", detail: "the intake refused the image: \(error)")
        }

        if expectDeterministic {
            let (_, secondBytes, _) = try await generateOnce(generator, request)
            guard secondBytes == firstBytes else {
                throw ConformanceFailure(requirement: "determinism", detail: "the same request gave different bytes")
            }
        }

        // A model that makes several images a call: as many as asked (or fewer), each
        // its own file inside the workspace, each one the intake accepts, nothing beside them.
        if let several = generator as? any MultiImageGenerator, several.imagesPerCall(for: request) >= 2 {
            try await checkSeveral(several, request)
        }

        // Concurrent calls on one instance.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<3 { group.addTask { _ = try await generateOnce(generator, request) } }
            try await group.waitForAll()
        }

        // Cancellation, already requested when the call begins: however fast the backend,
        // it ends with CancellationError or .cancelled, and makes no image.
        let cancelledBefore = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await generateOnce(generator, request)
        }
        try await expectCancellation(cancelledBefore, "cancelled before it began")

        // Cancellation in the middle of the work, for a backend made to wait.
        if let waiting {
            let cancelledDuring = Task { try await generateOnce(waiting.generator, waiting.request) }
            let deadline = ContinuousClock.now + .seconds(300)
            while !waiting.started() {
                guard ContinuousClock.now < deadline else {
                    cancelledDuring.cancel()
                    throw ConformanceFailure(requirement: "cancellation", detail: "the waiting request did not start within 300 s")
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            cancelledDuring.cancel()
            try await expectCancellation(cancelledDuring, "cancelled while at work")
        }
    }

    /// The task ends with a cancellation: not an image, not another error, and not
    /// never. The 60 s are a bound for a backend that ignores cancellation and runs
    /// on, not a speed test: under a full parallel `swift test` on two cores an
    /// exec plugin's spawn and teardown took over 10 s twice in a day.
    private static func expectCancellation(_ task: Task<(GeneratedImage, Data, [String]), any Error>, _ when: String) async throws {
        let first = FirstAnswer()
        let failure: ConformanceFailure? = await withCheckedContinuation { continuation in
            first.set(continuation)
            let timer = Task {
                try await Task.sleep(for: .seconds(60))
                first.answer(ConformanceFailure(requirement: "cancellation", detail: "\(when), it took more than 60 s to stop"))
            }
            Task {
                defer { timer.cancel() }
                do {
                    _ = try await task.value
                    first.answer(ConformanceFailure(requirement: "cancellation", detail: "\(when), it finished with an image instead of stopping"))
                } catch is CancellationError {
                    first.answer(nil)
                } catch let error as BadgeError where error.code == .cancelled {
                    first.answer(nil)
                } catch {
                    first.answer(ConformanceFailure(requirement: "cancellation", detail: "\(when), it threw \(error) instead of a cancellation"))
                }
            }
        }
        if let failure { throw failure }
    }

    /// Resumes a continuation with the first answer given; later ones are dropped.
    private final class FirstAnswer: @unchecked Sendable {
        private let lock = NSLock()
        private var continuation: CheckedContinuation<ConformanceFailure?, Never>?

        func set(_ continuation: CheckedContinuation<ConformanceFailure?, Never>) {
            lock.withLock { self.continuation = continuation }
        }

        func answer(_ failure: ConformanceFailure?) {
            let waiting = lock.withLock {
                defer { continuation = nil }
                return continuation
            }
            waiting?.resume(returning: failure)
        }
    }

    private static func checkSeveral(_ generator: any MultiImageGenerator, _ request: BadgeRequest) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("badge-conformance-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let workspace = Workspace(directory: directory)
        let images = try await generator.generate(request, count: 2, in: workspace)
        guard (1...2).contains(images.count) else {
            throw ConformanceFailure(requirement: "several images", detail: "asked for 2, returned \(images.count)")
        }
        let names = images.map(\.file.lastPathComponent)
        guard Set(names).count == names.count else {
            throw ConformanceFailure(requirement: "several images", detail: "two images share the file \(names)")
        }
        for image in images {
            guard workspace.contains(image.file) else {
                throw ConformanceFailure(requirement: "workspace", detail: "returned \(image.file.path), outside \(directory.path)")
            }
            do {
                _ = try ImageIntake(limits: .default).inspect(try Data(contentsOf: image.file), accepting: Set(ImageFormat.allCases))
            } catch {
                throw ConformanceFailure(requirement: "image", detail: "the intake refused \(image.file.lastPathComponent): \(error)")
            }
        }
        let strays = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !names.contains($0) }
        guard strays.isEmpty else {
            throw ConformanceFailure(requirement: "workspace", detail: "wrote files beside its images: \(strays)")
        }
    }

    /// Generates once in a fresh workspace; returns the result, the bytes, and
    /// any other files left in the workspace. Removes the workspace.
    public static func generateOnce(
        _ generator: any BadgeGenerator, _ request: BadgeRequest
    ) async throws -> (GeneratedImage, Data, [String]) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("badge-conformance-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let workspace = Workspace(directory: directory)
        let image = try await generator.generate(request, in: workspace)
        guard workspace.contains(image.file) else {
            throw ConformanceFailure(requirement: "workspace", detail: "returned \(image.file.path), outside \(directory.path)")
        }
        let bytes: Data
        do {
            bytes = try Data(contentsOf: image.file)
        } catch {
            throw ConformanceFailure(requirement: "image", detail: "the returned file cannot be read: \(error)")
        }
        let others = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0 != image.file.lastPathComponent }
        return (image, bytes, others)
    }
}
