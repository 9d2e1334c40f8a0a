import Foundation

/// A damped harmonic oscillator of unit mass, set up the way SwiftUI's
/// `.spring(response:dampingFraction:)` is, so the card moves here with the
/// same feel as in the app: stiffness (2π/response)², damping 4π·ζ/response.
package struct Spring: Sendable, Equatable {
    package var response: Double
    package var dampingFraction: Double

    package init(response: Double, dampingFraction: Double) {
        precondition(response > 0, "a spring needs a positive response")
        self.response = response
        self.dampingFraction = dampingFraction
    }

    package var stiffness: Double { pow(2 * .pi / response, 2) }
    package var damping: Double { 4 * .pi * dampingFraction / response }

    /// Where the spring is at time `t` (seconds) after it was let go at
    /// `position` with `velocity`, pulled toward `target`. Closed form, so the
    /// frames do not depend on the frame rate they are sampled at.
    package func state(at t: Double, from position: Double, velocity: Double, to target: Double) -> (position: Double, velocity: Double) {
        let omega = stiffness.squareRoot()
        let zeta = damping / (2 * omega)
        let x0 = position - target
        if zeta < 1 {
            let wd = omega * (1 - zeta * zeta).squareRoot()
            let a = x0, b = (velocity + zeta * omega * x0) / wd
            let decay = exp(-zeta * omega * t)
            let c = cos(wd * t), s = sin(wd * t)
            let x = decay * (a * c + b * s)
            let v = decay * ((b * wd - zeta * omega * a) * c - (a * wd + zeta * omega * b) * s)
            return (target + x, v)
        }
        if zeta == 1 {
            let b = velocity + omega * x0
            let decay = exp(-omega * t)
            return (target + (x0 + b * t) * decay, (b - omega * (x0 + b * t)) * decay)
        }
        let r1 = -omega * (zeta - (zeta * zeta - 1).squareRoot())
        let r2 = -omega * (zeta + (zeta * zeta - 1).squareRoot())
        let c2 = (velocity - r1 * x0) / (r2 - r1), c1 = x0 - c2
        return (target + c1 * exp(r1 * t) + c2 * exp(r2 * t), c1 * r1 * exp(r1 * t) + c2 * r2 * exp(r2 * t))
    }

    /// How long until the spring is settled: within `tolerance` of the target
    /// and slower than `tolerance` per 1/60 s, and staying so. Found by
    /// stepping, since the envelope of an underdamped spring crosses the
    /// threshold many times.
    package func settlingTime(from position: Double, velocity: Double, to target: Double,
                             tolerance: Double = Spring.defaultTolerance) -> Double {
        let step = 1.0 / 600
        var lastUnsettled = 0.0
        var t = 0.0
        // The envelope decays as exp(-ζωt): past ten time constants of the
        // largest offset nothing moves visibly, so stepping can stop.
        let zetaOmega = damping / 2
        let horizon = min(30, 10 / max(zetaOmega, 0.01) + log(max(1, abs(position - target) + abs(velocity))) / max(zetaOmega, 0.01))
        while t <= horizon {
            let s = state(at: t, from: position, velocity: velocity, to: target)
            if abs(s.position - target) > tolerance || abs(s.velocity) / 60 > tolerance { lastUnsettled = t }
            t += step
        }
        return lastUnsettled + step
    }

    /// Half a degree: less than a pixel of travel at the edge of a 512 px card.
    package static let defaultTolerance = 0.5
}
