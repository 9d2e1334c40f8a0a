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
    /// Runs every check. `request` should be one the backend can serve in a
    /// test environment; `makeGenerator` builds a fresh instance.
    public static func check(
        _ generator: any BadgeGenerator,
        request: BadgeRequest,
        expectDeterministic: Bool = false
    ) async throws {
        // Availability is cheap and says why not.
        let availability = await generator.availability()
        if case let .unavailable(reason, _) = availability {
            guard !reason.isEmpty else {
                throw ConformanceFailure(requirement: "availability", detail: "unavailable without a reason")
            }
            throw ConformanceFailure(requirement: "availability", detail: "the test request needs an available backend: \(reason)")
        }

        // One image, inside the workspace, described truthfully.
        let (first, firstBytes, strays) = try await generateOnce(generator, request)
        guard strays.isEmpty else {
            throw ConformanceFailure(requirement: "workspace", detail: "wrote files beside its image: \(strays)")
        }
        let header: ImageIntake.Header
        do {
            header = try ImageIntake(limits: .default).inspect(firstBytes, accepting: Set(ImageFormat.allCases.filter { $0 == .png }))
        } catch {
            throw ConformanceFailure(requirement: "image", detail: "the intake refused the image: \(error)")
        }
        guard header.format == first.format, header.width == first.width, header.height == first.height else {
            throw ConformanceFailure(
                requirement: "truthful result",
                detail: "reported \(first.format) \(first.width)x\(first.height), file is \(header.format) \(header.width)x\(header.height)")
        }

        if expectDeterministic {
            let (_, secondBytes, _) = try await generateOnce(generator, request)
            guard secondBytes == firstBytes else {
                throw ConformanceFailure(requirement: "determinism", detail: "the same request gave different bytes")
            }
        }

        // Concurrent calls on one instance.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<3 { group.addTask { _ = try await generateOnce(generator, request) } }
            try await group.waitForAll()
        }

        // Cancellation: a cancelled task ends with CancellationError or .cancelled, promptly.
        let cancelled = Task { try await generateOnce(generator, request) }
        cancelled.cancel()
        let clock = ContinuousClock()
        let started = clock.now
        do {
            _ = try await cancelled.value
            // Finishing before noticing the cancellation is allowed for fast backends.
        } catch is CancellationError {
        } catch let error as BadgeError where error.code == .cancelled {
        } catch {
            throw ConformanceFailure(requirement: "cancellation", detail: "threw \(error) instead of a cancellation")
        }
        // A bound for a backend that ignores cancellation and runs on, not a
        // speed test: under a full parallel `swift test` on two cores (the
        // kill loop spawning badges all the while) an exec plugin's spawn and
        // teardown took over 10 s twice in a day.
        if clock.now - started > .seconds(30) {
            throw ConformanceFailure(requirement: "cancellation", detail: "took more than 30 s to stop")
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
