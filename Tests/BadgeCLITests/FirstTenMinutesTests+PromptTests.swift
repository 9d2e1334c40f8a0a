import Foundation
import Testing

// MARK: - 6. Near-miss values in badge prompt get suggestions

extension FirstTenMinutesTests {
    @Test func promptSuggestsTheNearestVibeColourAndStyle() async throws {
        let s = try Sandbox()
        for (flag, typo, meant) in [("--vibe", "calmm", "calm"), ("--color", "tael", "teal"), ("--style", "sktech", "sketch")] {
            let result = try await s.run(["prompt", "--purpose", "Learn Spanish", flag, typo])
            #expect(result.status == 64, "\(result.stderr)")
            #expect(result.stderr.contains("did you mean \"\(meant)\"?"), "\(flag) \(typo): \(result.stderr)")
        }
    }

    @Test func askedInTurnTheChoicesAreListedOnce() async throws {
        let s = try Sandbox()
        let answers = "Learn Spanish\ncalmm\ncalm\nspeech\nflat\ntael\nteal\n"
        let result = try await s.run(["prompt", "--interactive"], stdin: Data(answers.utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("did you mean \"calm\"?") && result.stderr.contains("did you mean \"teal\"?"), "\(result.stderr)")
        let vibeList = "bold, bright, calm"
        #expect(result.stderr.components(separatedBy: vibeList).count - 1 == 1, "the vibes are listed more than once:\n\(result.stderr)")
        #expect(result.stdout.hasPrefix("Learn Spanish, calm mood"), "\(result.stdout)")
    }

    /// Answers are read a line at a time, each at most 4096 bytes: input that
    /// never sends a line break (a file, /dev/zero) is refused there, rather
    /// than read into memory without end, and badge ends without reading the
    /// rest (1 MiB, far past a pipe's buffer). CR LF line breaks read as LF.
    @Test func anAnswerPastItsLimitIsRefusedAndCRLFIsALineBreak() async throws {
        let s = try Sandbox()
        let long = try await s.run(["prompt", "--interactive"], stdin: Data(repeating: UInt8(ascii: "a"), count: 1 << 20))
        #expect(long.status == 64, "\(long.stderr)")
        #expect(long.stderr.contains("an answer on standard input is longer than 4096 bytes"), "\(long.stderr)")
        let windows = try await s.run(["prompt", "--interactive"], stdin: Data("Learn Spanish\r\ncalm\r\nspeech\r\nflat\r\nteal\r\n".utf8))
        #expect(windows.status == 0, "\(windows.stderr)")
        #expect(windows.stdout.hasPrefix("Learn Spanish, calm mood"), "\(windows.stdout)")
    }
}
