import BadgeKit
import ProceduralBackend
import Foundation
import Synchronization

/// One press of Generate in the studio: the candidates being made for one
/// request, kept in memory (never in the store) until one is picked, the
/// sheet is closed, or newer sets push it out. Its events are kept in order
/// and replayed to each listener, so a listener that connects late misses
/// nothing. Cancelling it cancels the backend's task.
package final class StudioJob: Sendable, CandidateProgress {
    package let id: String
    package let count: Int
    package let backend: BackendInstance
    package let commitment: Pipeline.Commitment
    let started = ContinuousClock.now

    private struct State {
        var events: [String] = []
        var listeners: [UInt64: AsyncStream<String>.Continuation] = [:]
        var nextListener: UInt64 = 0
        var made: [Int: CheckedBadge] = [:]
        var ended = false
        var task: Task<Void, Never>?
    }

    private let state = Mutex(State())

    init(count: Int, backend: BackendInstance, commitment: Pipeline.Commitment) {
        self.id = ServeSettings.newToken().prefix(24).lowercased()
        self.count = count
        self.backend = backend
        self.commitment = commitment
    }

    /// Whether the job has ended (made every candidate, failed, or cancelled).
    package var ended: Bool { state.withLock { $0.ended } }

    /// The candidate numbered `number` (1-based), if it was made.
    package func candidate(_ number: Int) -> CheckedBadge? { state.withLock { $0.made[number] } }

    /// Starts making the candidates with `make`, which reports through this job.
    func start(_ make: @escaping @Sendable (StudioJob) async throws -> Void) {
        send("started", StartedEvent(job: id, count: count, backend: backend.name, backendType: backend.type))
        let task = Task {
            let status: String
            var failure: (message: String, hint: String?)?
            do {
                try await make(self)
                status = Task.isCancelled ? "cancelled" : "finished"
            } catch is CancellationError {
                status = "cancelled"
            } catch let error as BadgeError where error.code == .cancelled || Task.isCancelled {
                status = "cancelled"
            } catch {
                let error = BadgeError.wrap(error, backend: backend.name, message: "the backend failed")
                status = "failed"
                failure = (error.message, error.hint)
            }
            end(DoneEvent(status: status, message: failure?.message, hint: failure?.hint))
        }
        state.withLock { $0.task = task }
    }

    /// Cancels the work and waits until it has stopped.
    package func cancel() async {
        let task = state.withLock { $0.task }
        task?.cancel()
        await task?.value
    }

    /// Every event so far, then each new one, until the job ends or `stop`
    /// is called (the client has gone, the server is stopping).
    package func listen() -> (events: AsyncStream<String>, stop: @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .unbounded)
        state.withLock { state in
            for event in state.events { continuation.yield(event) }
            if state.ended {
                continuation.finish()
                return
            }
            let id = state.nextListener
            state.nextListener += 1
            state.listeners[id] = continuation
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.listeners.removeValue(forKey: id) }
            }
        }
        return (stream, { continuation.finish() })
    }

    // MARK: - CandidateProgress

    package func started(_ numbers: [Int]) {
        for number in numbers {
            send("candidate", CandidateEvent(number: number, status: "working", seconds: elapsed))
        }
    }

    package func finished(_ candidate: Candidates.Candidate) {
        switch candidate.result {
        case let .success(made):
            state.withLock { $0.made[candidate.number] = made }
            send("candidate", CandidateEvent(
                number: candidate.number, status: "ready", seconds: elapsed,
                image: "/api/jobs/\(id)/candidates/\(candidate.number).png",
                vector: Provenance.isRedrawable(made.metadata) ? "/api/jobs/\(id)/candidates/\(candidate.number).svg" : nil,
                style: made.metadata.styleDrawn?.name,
                seed: made.metadata.seed.map(String.init), backend: made.metadata.backend,
                fallbackFrom: made.metadata.extra["fallback-from"].map { OutsideText.printable($0, keepingNewlines: false) },
                caption: made.metadata.captionDrawn.map { OutsideText.printable($0, keepingNewlines: false) },
                captionNote: Self.captionNote(made.metadata)))
        case let .failure(error):
            send("candidate", CandidateEvent(
                number: candidate.number, status: "failed", seconds: elapsed,
                message: OutsideText.printable(error.message, keepingNewlines: false),
                hint: error.hint.map { OutsideText.printable($0, keepingNewlines: false) }))
        }
    }

    private var elapsed: Double {
        let duration = ContinuousClock.now - started
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return (seconds * 1000).rounded() / 1000
    }

    // MARK: - Events

    struct StartedEvent: Encodable {
        var job: String
        var count: Int
        var backend: String
        var backendType: String
    }

    struct CandidateEvent: Encodable {
        var number: Int
        var status: String
        var seconds: Double
        var image: String?
        /// The candidate as SVG, for a badge the art engine can draw again.
        var vector: String?
        var style: String?
        var seed: String?
        var backend: String?
        var fallbackFrom: String?
        /// The caption as drawn, and why it was shortened or left out.
        var caption: String?
        var captionNote: String?
        var message: String?
        var hint: String?
    }

    /// Why a candidate's caption is not the promise whole: not drawn (or not
    /// every letter of it), left out, or shortened; nil when it is whole.
    static func captionNote(_ metadata: BadgeMetadata) -> String? {
        let note: String?
        if let warning = metadata.extra["warning"], warning.hasPrefix("the caption") {
            note = warning
        } else if metadata.captionDrawn == nil, let omitted = metadata.extra["caption-omitted"] {
            note = "no caption: " + omitted
        } else if let shortened = metadata.extra["caption-shortened"] {
            note = "the caption was shortened: " + shortened
        } else {
            note = nil
        }
        // The studio has no caption field: advice to use --caption is for the terminal.
        return note.map { note in
            let advice = note.range(of: "; give ", options: .backwards).flatMap { note[$0.lowerBound...].contains("--caption") ? $0 : nil }
            return OutsideText.printable(advice.map { String(note[..<$0.lowerBound]) } ?? note, keepingNewlines: false)
        }
    }

    struct DoneEvent: Encodable {
        var status: String
        var message: String?
        var hint: String?
    }

    private func send(_ name: String, _ event: some Encodable) {
        let line = Self.serverSentEvent(name, event)
        state.withLock { state in
            guard !state.ended else { return }
            state.events.append(line)
            for listener in state.listeners.values { listener.yield(line) }
        }
    }

    private func end(_ done: DoneEvent) {
        let line = Self.serverSentEvent("done", done)
        let listeners = state.withLock { state -> [AsyncStream<String>.Continuation] in
            guard !state.ended else { return [] }
            state.events.append(line)
            state.ended = true
            defer { state.listeners = [:] }
            return Array(state.listeners.values)
        }
        for listener in listeners {
            listener.yield(line)
            listener.finish()
        }
    }

    /// `event: NAME` and one `data:` line of JSON (which never holds a line break).
    static func serverSentEvent(_ name: String, _ event: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = (try? encoder.encode(event)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return "event: \(name)\ndata: \(json)\n\n"
    }
}
