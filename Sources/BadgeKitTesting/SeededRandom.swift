import Foundation

/// A random number generator that replays: SplitMix64 from a seed. The seed is
/// `BADGE_TEST_SEED` when set (to replay a failure), else a fresh one; either
/// way it is printed with the name of what uses it.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    public let seed: UInt64
    private var state: UInt64

    public init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    /// A generator for `purpose`, its seed printed as `purpose: seed N (replay with BADGE_TEST_SEED=N)`.
    public static func forTest(_ purpose: String) -> SeededRandom {
        let seed = ProcessInfo.processInfo.environment["BADGE_TEST_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: .min ... .max)
        print("\(purpose): seed \(seed) (replay with BADGE_TEST_SEED=\(seed))")
        return SeededRandom(seed: seed)
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
