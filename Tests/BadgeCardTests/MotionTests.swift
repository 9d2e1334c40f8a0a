import BadgeCard
import BadgeTestSupport
import Foundation
import Testing

/// The springs and the flip's timeline: the app's parameters, its snap and
/// wiggle, and which face shows at which angle.
@Suite(.threadsOfTheirOwn)
struct MotionTests {
    @Test func springUsesSwiftUIsParametrisation() {
        let spring = Spring(response: 0.55, dampingFraction: 0.70)
        #expect(abs(spring.stiffness - pow(2 * .pi / 0.55, 2)) < 1e-9)
        #expect(abs(spring.damping - 4 * .pi * 0.70 / 0.55) < 1e-9)
    }

    @Test func anUnderdampedSpringOvershootsByTheTextbookAmount() {
        // A step from 0 to 1 peaks at 1 + exp(-ζπ/√(1-ζ²)).
        for zeta in [0.55, 0.70, 0.75] {
            let spring = Spring(response: 0.35, dampingFraction: zeta)
            let peak = stride(from: 0.0, to: 1.0, by: 0.0005).map { spring.state(at: $0, from: 0, velocity: 0, to: 1).position }.max()!
            let expected = 1 + exp(-zeta * .pi / (1 - zeta * zeta).squareRoot())
            #expect(abs(peak - expected) < 1e-4, "ζ=\(zeta): peak \(peak), expected \(expected)")
        }
    }

    @Test func aSpringIsSettledWhenItStopsMoving() {
        let spring = Spring(response: 0.35, dampingFraction: 0.55)
        let t = spring.settlingTime(from: 0, velocity: 0, to: 100)
        #expect(t > 0.3 && t < 2, "\(t)")
        for later in stride(from: t, to: t + 2, by: 0.01) {
            let s = spring.state(at: later, from: 0, velocity: 0, to: 100)
            #expect(abs(s.position - 100) <= Spring.defaultTolerance)
        }
        // Just before, it was still visibly moving.
        let before = spring.state(at: t - 0.05, from: 0, velocity: 0, to: 100)
        #expect(abs(before.position - 100) > 0.1 || abs(before.velocity) / 60 > 0.1)
    }

    @Test func theTimelineIsTheAppsThreeSprings() {
        let timeline = FlipTimeline()
        #expect(timeline.phases.map(\.spring) == [
            Spring(response: 0.55, dampingFraction: 0.70),
            Spring(response: 0.35, dampingFraction: 0.55),
            Spring(response: 0.35, dampingFraction: 0.75),
        ])
        #expect(timeline.phases.map(\.offset) == [10, -6, 0])
        // Phases follow one another without gaps.
        for (a, b) in zip(timeline.phases, timeline.phases.dropFirst()) {
            #expect(abs(a.start + a.duration - b.start) < 1e-12)
        }
    }

    @Test func theCardOvershootsPullsBackAndSettlesOnTheBack() {
        let timeline = FlipTimeline(direction: .right)
        let samples = stride(from: 0.0, through: timeline.duration, by: 0.001).map { (t: $0, angle: timeline.angle(at: $0)) }
        let peak = samples.max { $0.angle < $1.angle }!
        #expect(peak.angle >= 190 - Spring.defaultTolerance, "overshoots to 10° past the back: \(peak.angle)")
        let trough = samples.filter { $0.t > peak.t }.min { $0.angle < $1.angle }!
        #expect(trough.angle <= 174 + Spring.defaultTolerance, "pulls back to 6° short: \(trough.angle)")
        #expect(trough.angle > 160)
        #expect(timeline.angle(at: timeline.duration) == 180)
        #expect(timeline.angle(at: timeline.duration + 5) == 180)
        #expect(timeline.angle(at: 0) == 0)
        // Continuous: within a millisecond the card never moves more than a few degrees.
        for (a, b) in zip(samples, samples.dropFirst()) { #expect(abs(b.angle - a.angle) < 3) }
    }

    @Test func directionTurnsTheOtherWay() {
        let left = FlipTimeline(direction: .left), right = FlipTimeline(direction: .right)
        for t in stride(from: 0.0, through: left.duration, by: 0.05) {
            #expect(left.angle(at: t) == -right.angle(at: t))
        }
        #expect(left.angle(at: left.duration) == -180)
    }

    /// One loop turns the card all the way round: front, a rest, the turn to
    /// the back, a rest, the turn on to the front, whose rest is the loop's first frame.
    @Test func framesComeAtTheFrameRateAndHoldOnBothFaces() {
        for rate in [10, 30, 60] {
            let animation = FlipAnimation(frameRate: rate, size: 64, hold: 0.8)
            let frames = animation.frames
            let duration = animation.timeline.duration
            let half = Int((duration * Double(rate)).rounded(.up)) + 1
            #expect(frames.count == 2 * half - 2)
            #expect(frames.first?.angle == 0 && abs(frames[half - 1].angle) == 180)
            #expect(frames.first?.duration == 0.8 && frames[half - 1].duration == 0.8)
            for (k, frame) in frames.enumerated() where k != 0 && k != half - 1 { #expect(abs(frame.duration - 1 / Double(rate)) < 1e-12) }
            // Frame k shows the card as it is k/rate seconds into a turn; the second turn goes on from the back.
            for (k, frame) in frames.enumerated() {
                let expected = k < half ? animation.timeline.angle(at: Double(k) / Double(rate))
                    : animation.timeline.angle(at: Double(k - half + 1) / Double(rate)) + animation.timeline.angle(at: duration)
                #expect(abs(frame.angle - expected) < 1e-9)
            }
            // The loop's last frame is nearly round to the front again: no snap back to it.
            #expect(abs(abs(frames.last!.angle) - 360) < 10, "\(frames.last!.angle)")
            // Each frame starts when the one before ends.
            for (a, b) in zip(frames, frames.dropFirst()) { #expect(abs(a.time + a.duration - b.time) < 1e-9) }
        }
        // The whole turn, wiggle included, takes about as long as the app's springs do.
        let duration = FlipTimeline().duration
        #expect(duration > 0.7 && duration < 2.5, "\(duration)")
    }

    @Test func theFrontShowsUntil90DegreesThenTheBackCounterRotated() {
        #expect(CardSide.showing(at: 0) == (.front, 0))
        #expect(CardSide.showing(at: 45) == (.front, 45))
        #expect(CardSide.showing(at: 89.9).side == .front)
        #expect(CardSide.showing(at: 90.1).side == .back)
        #expect(CardSide.showing(at: 100) == (.back, -80))
        #expect(CardSide.showing(at: 180) == (.back, 0))
        #expect(CardSide.showing(at: 190) == (.back, 10))
        #expect(CardSide.showing(at: -100) == (.back, 80))
        #expect(CardSide.showing(at: -180) == (.back, 0))
        #expect(CardSide.showing(at: 300) == (.front, -60))
        #expect(CardSide.showing(at: 360) == (.front, 0))
        // Every frame: the front while under 90°, then the back, which itself is
        // never turned more than 90° (so its text is never mirrored).
        for frame in FlipAnimation(frameRate: 60, size: 64).frames {
            let turned = abs(frame.angle).truncatingRemainder(dividingBy: 360)
            #expect(frame.side == (turned < 90 || turned > 270 ? .front : .back), "\(frame.angle)")
            #expect(abs(frame.faceAngle) <= 90)
        }
    }
}
