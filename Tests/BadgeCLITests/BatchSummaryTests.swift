import BadgeTestSupport
import Testing
@testable import BadgeMain

/// How long a batch took, in its summary: to the hundredth below ten seconds,
/// where a tenth would say "0.0 s" of a run of small badges.
@Suite(.threadsOfTheirOwn)
struct BatchSummaryTests {
    @Test(arguments: [(0.004, "0.00 s"), (0.041, "0.04 s"), (3.274, "3.27 s"), (9.994, "9.99 s"), (41.26, "41.3 s"), (612.0, "612.0 s")])
    func aRunsTimeIsGivenToTheHundredthBelowTenSeconds(seconds: Double, written: String) {
        #expect(BatchCommand.duration(seconds) == written)
    }
}
