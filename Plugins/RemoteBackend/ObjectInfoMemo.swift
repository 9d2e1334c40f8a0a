import BadgeKit
import Synchronization

/// ComfyUI's `GET /object_info`, fetched once for all the backends that probe
/// the same server with the same credentials: eight backends of one server
/// cost one fetch of what can be megabytes. An answer is kept for `lifetime`,
/// so a server that has since gained a model or a node is seen soon after;
/// a fetch that failed, or was answered with an error, is not kept.
final class ObjectInfoMemo: Sendable {
    static let shared = ObjectInfoMemo()
    static let lifetime: Duration = .seconds(30)
    /// Servers remembered at once; the oldest goes first.
    static let capacity = 8

    private struct Entry: Sendable {
        let key: String
        let started: ContinuousClock.Instant
        let answer: Task<HTTPResponse, any Error>
    }

    private let entries = Mutex<[Entry]>([])

    /// `request`'s answer: the one fetched (or being fetched) for the same URL and
    /// headers within `lifetime`, or a new one.
    func response(to request: HTTPRequest, via http: any HTTPTransport) async throws -> HTTPResponse {
        let key = ([request.url.absoluteString] + request.headers.map { "\($0.name): \($0.value)" }).joined(separator: "\n")
        let now = ContinuousClock.now
        let answer = entries.withLock { entries in
            entries.removeAll { now - $0.started > Self.lifetime }
            if let found = entries.first(where: { $0.key == key }) { return found.answer }
            let answer = Task { try await http.send(request) }
            entries.append(Entry(key: key, started: now, answer: answer))
            if entries.count > Self.capacity { entries.removeFirst() }
            return answer
        }
        do {
            let response = try await answer.value
            // An error's answer (a server still starting) is not kept either.
            if !(200..<300).contains(response.status) { forget(key, started: now) }
            return response
        } catch {
            forget(key, started: now)
            throw error
        }
    }

    private func forget(_ key: String, started: ContinuousClock.Instant) {
        entries.withLock { entries in entries.removeAll { $0.key == key && $0.started == started } }
    }
}
