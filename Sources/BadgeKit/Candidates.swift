import Foundation

/// Several takes on one request, for a person to choose from (`generate --choose`),
/// as Image Playground's sheet shows several images for one description. Each is made
/// by `Pipeline.render`, the road every badge takes, and none is committed: the one
/// picked (a ``CheckedBadge``) goes on through `Pipeline.commit`.
package enum Candidates {
    /// How many candidates one choice shows.
    package static let countRange = 2...9

    /// One candidate: what was asked, and the badge made or why it failed.
    package struct Candidate: Sendable {
        /// 1-based, as shown and picked.
        package var number: Int
        package var request: BadgeRequest
        package var result: Result<CheckedBadge, BadgeError>

        package var made: CheckedBadge? { try? result.get() }
        package var failure: BadgeError? {
            if case let .failure(error) = result { return error }
            return nil
        }
    }

    /// The requests for `count` candidates of `request`, the `round`-th set of them
    /// (0 first; `r` in the picker asks for the next): seeds `request.seed`,
    /// `request.seed + 1`, ... (the first of round 0 is the badge a plain generate
    /// with that seed makes), the next round's after them. `styles`, when given (no
    /// `--style` and a backend that has styles), are cycled from `request.style`,
    /// so the candidates also differ in look.
    package static func requests(for request: BadgeRequest, count: Int, round: Int = 0, styles: [String]? = nil) -> [BadgeRequest] {
        let first = round * count
        var start = 0
        if let styles, let style = request.style, let index = styles.firstIndex(of: style) { start = index }
        return (0..<count).map { i in
            var each = request
            each.seed = request.seed &+ UInt64(first + i)
            if let styles, !styles.isEmpty { each.style = styles[(start + first + i) % styles.count] }
            return each
        }
    }

    /// Renders `requests` through `pipeline`, at most `limit` calls to the backend
    /// at once, and returns them in order. A backend whose model makes several
    /// images in one call (``MultiImageGenerator``: a model's `n`) is asked for
    /// as many as one call takes, when the requests differ in their seeds alone;
    /// any other is called once per candidate. A candidate that fails is returned
    /// as failed; the others are still made. Throws only `CancellationError`
    /// (Ctrl-C), when nothing is kept.
    /// `progress`, when given, hears of each candidate as its call starts (the
    /// numbers being made) and as it ends, in the order they end.
    package static func make(
        _ requests: [BadgeRequest], pipeline: Pipeline, backend: BackendInstance, fallbacks: [BackendInstance],
        commitment: Pipeline.Commitment, extra: [String: String] = [:], limit: Int, progress: (any CandidateProgress)? = nil
    ) async throws -> [Candidate] {
        let calls = Self.calls(for: requests, backend: backend)
        var results = [Result<CheckedBadge, BadgeError>?](repeating: nil, count: requests.count)
        try await withThrowingTaskGroup(of: [(Int, Result<CheckedBadge, BadgeError>)].self) { group in
            var next = 0
            func startNext() {
                let indices = calls[next]
                next += 1
                progress?.started(indices.map { $0 + 1 })
                group.addTask {
                    do {
                        let made = try await pipeline.renderTogether(
                            indices.map { requests[$0] }, backend: backend, fallbacks: fallbacks, commitment: commitment, extra: extra)
                        return Array(zip(indices, made))
                    } catch {
                        let failure = BadgeError.wrap(error, backend: backend.name, message: "the backend failed")
                        if failure.code == .cancelled || Task.isCancelled { throw CancellationError() }
                        return indices.map { ($0, .failure(failure)) }
                    }
                }
            }
            while next < min(max(1, limit), calls.count) { startNext() }
            for try await made in group {
                for (index, result) in made {
                    results[index] = result
                    progress?.finished(Candidate(number: index + 1, request: requests[index], result: result))
                }
                if next < calls.count { startNext() }
            }
        }
        try Task.checkCancellation()
        return requests.indices.map { Candidate(number: $0 + 1, request: requests[$0], result: results[$0]!) }
    }

    /// Which requests go to the backend together: runs of up to as many as one
    /// call makes, for a ``MultiImageGenerator`` given requests that differ in
    /// their seeds alone (image `i` of a call is made with the call's seed + `i`,
    /// as `requests(for:)` numbers them); one request a call otherwise.
    package static func calls(for requests: [BadgeRequest], backend: BackendInstance) -> [[Int]] {
        let singly = requests.indices.map { [$0] }
        guard let first = requests.first, let generator = backend.generator as? any MultiImageGenerator else { return singly }
        let perCall = generator.imagesPerCall(for: first)
        let seedsInOrder = requests.enumerated().allSatisfy { index, request in
            var same = request
            same.seed = first.seed
            return same == first && request.seed == first.seed &+ UInt64(index)
        }
        guard perCall > 1, seedsInOrder else { return singly }
        return stride(from: 0, to: requests.count, by: perCall).map { Array($0..<min($0 + perCall, requests.count)) }
    }
}

/// What a front end shows while candidates are made: each as its call to the
/// backend starts, and each as it is ready or has failed.
package protocol CandidateProgress: Sendable {
    func started(_ numbers: [Int])
    func finished(_ candidate: Candidates.Candidate)
}

/// Makes the sets of candidates one choice shows: the first, and each new set asked for.
package struct CandidateMaker: Sendable {
    package var request: BadgeRequest
    package var count: Int
    /// The styles to cycle through (no --style, a backend with styles), or nil.
    package var styles: [String]?
    package var pipeline: Pipeline
    package var backend: BackendInstance
    package var fallbacks: [BackendInstance]
    package var commitment: Pipeline.Commitment
    package var extra: [String: String]
    /// How many the backend makes at once.
    package var limit: Int

    package init(
        request: BadgeRequest, count: Int, styles: [String]?, pipeline: Pipeline, backend: BackendInstance,
        fallbacks: [BackendInstance], commitment: Pipeline.Commitment, extra: [String: String], limit: Int
    ) {
        self.request = request
        self.count = count
        self.styles = styles
        self.pipeline = pipeline
        self.backend = backend
        self.fallbacks = fallbacks
        self.commitment = commitment
        self.extra = extra
        self.limit = limit
    }

    /// The `round`-th set (0 first).
    package func make(round: Int) async throws -> [Candidates.Candidate] {
        try await Candidates.make(
            Candidates.requests(for: request, count: count, round: round, styles: styles), pipeline: pipeline, backend: backend,
            fallbacks: fallbacks, commitment: commitment, extra: extra, limit: limit)
    }
}
