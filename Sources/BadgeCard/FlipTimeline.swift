import Foundation

/// The angle of the card, over time, as it turns over once and snaps into
/// place with the app's wiggle: a spring carries it past the back to 10°
/// beyond, a quicker, bouncier one pulls it 6° short, and a calmer one lets
/// it settle (the three `withAnimation(.spring(...))` calls of the app's
/// `snapWithWiggle`). Each phase starts where the last one left the card,
/// with its velocity, and ends when it has settled.
package struct FlipTimeline: Sendable {
    package struct Phase: Sendable, Equatable {
        package var spring: Spring
        /// Degrees past (+) or short of (−) the face the card turns to.
        package var offset: Double
        package var start: Double
        package var duration: Double
    }

    /// Which way the card turns, as a drag that way turns it: `right` carries
    /// the face to the right (its right edge goes away from you, a positive
    /// angle, as CSS `rotateY` counts), `left` the other way.
    package enum Direction: String, Sendable, CaseIterable {
        case left, right
        var sign: Double { self == .right ? 1 : -1 }
    }

    /// The app's springs: (response, damping fraction) and where each one pulls.
    package static let wiggle: [(spring: Spring, offset: Double)] = [
        (Spring(response: 0.55, dampingFraction: 0.70), 10),
        (Spring(response: 0.35, dampingFraction: 0.55), -6),
        (Spring(response: 0.35, dampingFraction: 0.75), 0),
    ]

    package let direction: Direction
    /// Degrees the card turns through: 180 turns it over once.
    package let turn: Double
    package let phases: [Phase]

    package init(direction: Direction = .left, turn: Double = 180) {
        self.direction = direction
        self.turn = turn
        var phases: [Phase] = []
        var position = 0.0, velocity = 0.0, start = 0.0
        for (spring, offset) in Self.wiggle {
            let target = turn + offset
            let duration = spring.settlingTime(from: position, velocity: velocity, to: target)
            phases.append(Phase(spring: spring, offset: offset, start: start, duration: duration))
            (position, velocity) = spring.state(at: duration, from: position, velocity: velocity, to: target)
            start += duration
        }
        self.phases = phases
    }

    /// Seconds from the first movement until the card rests on its new face.
    package var duration: Double { phases.last.map { $0.start + $0.duration } ?? 0 }

    /// The signed angle in degrees at time `t`; exactly ±`turn` from `duration` on.
    package func angle(at t: Double) -> Double {
        direction.sign * unsignedAngle(at: t)
    }

    private func unsignedAngle(at t: Double) -> Double {
        if t <= 0 { return 0 }
        if t >= duration { return turn }
        var position = 0.0, velocity = 0.0
        for phase in phases {
            let target = turn + phase.offset
            if t < phase.start + phase.duration {
                return phase.spring.state(at: t - phase.start, from: position, velocity: velocity, to: target).position
            }
            (position, velocity) = phase.spring.state(at: phase.duration, from: position, velocity: velocity, to: target)
        }
        return turn
    }

    /// One angle per frame at `frameRate`: the first at rest on the front, the
    /// last at rest on the back, and one every 1/frameRate s in between.
    package func angles(frameRate: Double) -> [Double] {
        let count = Int((duration * frameRate).rounded(.up))
        return (0...count).map { angle(at: Double($0) / frameRate) }
    }
}

/// Which face of the card shows at an angle, and how that face itself is
/// turned: the back is counter-rotated by 180° (as the app's back view is)
/// so its text always reads the right way round.
package enum CardSide: String, Sendable, Equatable {
    case front, back

    package static func showing(at degrees: Double) -> (side: CardSide, faceAngle: Double) {
        var normalized = degrees.truncatingRemainder(dividingBy: 360)
        if normalized < 0 { normalized += 360 }
        if normalized < 90 || normalized > 270 {
            return (.front, normalized > 180 ? normalized - 360 : normalized)
        }
        return (.back, normalized - 180)
    }
}
