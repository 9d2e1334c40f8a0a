import BadgeKit
import Synchronization

/// A plugin's "available" answer, kept for a short while. The pipeline asks
/// before every badge; in a batch that would start the plugin twice per badge
/// (an interpreter start each time) to learn the same thing. Only "available"
/// is kept: an unavailable plugin is asked again, so a fix is seen at once,
/// and a plugin that stops working in between still fails its run clearly.
package final class AvailabilityMemo: Sendable {
    package static let lifetime: Duration = .seconds(30)

    private let answer = Mutex<ContinuousClock.Instant?>(nil)

    var isFresh: Bool {
        answer.withLock { $0.map { ContinuousClock.now - $0 < Self.lifetime } ?? false }
    }

    func remember(_ availability: Availability) {
        answer.withLock { $0 = availability.isAvailable ? ContinuousClock.now : nil }
    }
}
