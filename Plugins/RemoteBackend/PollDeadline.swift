/// How long badge follows a run on a server (`timeoutSeconds`): it polls
/// until the deadline, and the last poll is at the deadline itself, so a run
/// that finishes before it is never given up on for the want of one more look.
struct PollDeadline {
    let end: ContinuousClock.Instant

    /// The longest one poll may take, and the least the look at the deadline gets.
    static let longestPoll: Duration = .seconds(30)
    static let lastLook: Duration = .seconds(2)

    init(after timeout: Duration, from start: ContinuousClock.Instant = .now) {
        end = start.advanced(by: timeout)
    }

    /// How long to wait before the next poll: `wait`, or what is left when that
    /// is less; nil once the deadline has passed, when the run has taken too long.
    func wait(_ wait: Duration, now: ContinuousClock.Instant = .now) -> Duration? {
        let left = end - now
        return left > .zero ? min(wait, left) : nil
    }

    /// The timeout of a poll sent now: what is left of the deadline, within
    /// `lastLook` and `longestPoll`, so a slow or huge answer cannot carry
    /// the run far past it.
    func pollTimeout(now: ContinuousClock.Instant = .now) -> Duration {
        min(Self.longestPoll, max(Self.lastLook, end - now))
    }
}
