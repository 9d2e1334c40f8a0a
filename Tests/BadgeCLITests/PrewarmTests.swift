import BadgeTestSupport
import Testing
@testable import BadgeMain

/// What a command warms up on a spare core while its arguments are parsed:
/// the command is found wherever the global options put it.
@Suite(.threadsOfTheirOwn)
struct PrewarmTests {
    @Test(arguments: [
        (["generate", "--backend", "procedural", "A pair of dumbbells"], Prewarm.Plan(drawing: true, reading: true, report: true)),
        (["--store", "/tmp/s", "import", "photo.jpg", "A photo"], Prewarm.Plan(drawing: true, report: true)),
        (["-v", "batch", "jobs.jsonl"], Prewarm.Plan(drawing: true, reading: true, report: false)),
        (["card", "animate"], Prewarm.Plan(drawing: true, report: false)),
        (["list"], Prewarm.Plan()),
        (["--help"], Prewarm.Plan()),
        ([], Prewarm.Plan()),
    ])
    func theCommandChoosesWhatIsWarmed(arguments: [String], plan: Prewarm.Plan) {
        #expect(Prewarm.plan(for: arguments) == plan)
    }
}
