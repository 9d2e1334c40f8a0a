import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
@testable import RemoteBackend

@Suite(.threadsOfTheirOwn, .serialized)
struct JobsTests {
    static let options = ["pollIntervalSeconds": "0.1", "bodyTemplate": #"{"input": {"prompt": "{prompt}", "seed": "{seed}"}}"#]

    @Test func aJobIsSubmittedPolledAndItsOutputFetched() async throws {
        let h = try RemoteHarness()
        defer { h.stop() }
        let outcome = try await h.run(mode: "jobs-ok", api: "jobs", options: Self.options)
        #expect(outcome.metadata.backend == "remote")
        let requests = try await h.received().filter { ($0["mode"] as? String) == "jobs-ok" }
        let submit = try #require(requests.first)
        #expect((submit["path"] as? String)?.hasSuffix("/predictions") == true)
        let input = try #require((submit["body"] as? [String: Any])?["input"] as? [String: Any])
        #expect(input["prompt"] as? String == "A pair of dumbbells" && input["seed"] as? Int == 42)
        #expect(requests.count == 4, "one submit and three polls, got \(requests.count)")
        #expect(requests.allSatisfy { $0["authorization"] as? String == "Bearer \(RemoteHarness.key)" })
    }

    /// Issue #31: "../../admin/wipe" became GET /admin/wipe, sent with the key.
    @Test(arguments: [("jobs-traversal", "../../admin/wipe"), ("jobs-slash", "a/b")])
    func aJobIdThatWouldSteerAURLIsRefusedBeforeAnyRequest(mode: String, id: String) async throws {
        let h = try RemoteHarness()
        defer { h.stop() }
        let before = try await h.received().count
        do {
            _ = try await h.run(mode: mode, api: "jobs", options: Self.options)
            Issue.record("must fail")
        } catch let error as BadgeError {
            #expect(error.message == "the server gave the job an id badge will not put in a URL: \"\(id)\"", "\(error)")
            #expect(error.hint?.contains("nothing more was sent") == true)
        }
        let requests = try await h.received().dropFirst(before)
        #expect(requests.count == 1, "only the submit: \(requests.map { $0["path"] ?? "" })")
        #expect((requests.first?["path"] as? String)?.hasSuffix("/predictions") == true)
        #expect(h.currentBadge == h.previousBadge)
    }

    @Test func anInlineOutputNeedsNoDownload() async throws {
        let h = try RemoteHarness()
        defer { h.stop() }
        _ = try await h.run(mode: "jobs-b64", api: "jobs", options: Self.options)
        #expect(h.currentBadge != h.previousBadge)
    }

    @Test func aFailedJobSaysWhyAndKeepsTheBadge() async throws {
        let h = try RemoteHarness()
        defer { h.stop() }
        do {
            _ = try await h.run(mode: "jobs-fail", api: "jobs", options: Self.options)
            Issue.record("must fail")
        } catch let error as BadgeError {
            #expect(error.description.contains("failed: CUDA out of memory"), "\(error)")
        }
        #expect(h.currentBadge == h.previousBadge)
    }

    @Test func theDeadlineEndsAJobThatNeverFinishesAndCancelsIt() async throws {
        let h = try RemoteHarness()
        defer { h.stop() }
        do {
            _ = try await h.run(mode: "jobs-slow", api: "jobs", options: Self.options.merging(["timeoutSeconds": "1"]) { $1 })
            Issue.record("must time out")
        } catch let error as BadgeError {
            #expect(error.code == .timeout, "\(error)")
            #expect(error.message == "the job job-jobs-slow-1 did not finish within 1.0 seconds", "\(error)")
            #expect(error.hint == "raise timeoutSeconds for this backend, or try again later", "\(error)")
        }
        #expect(h.currentBadge == h.previousBadge)
        let status = try await h.transport.send(HTTPRequest(url: h.server.url("/jobs-slow/predictions/job-jobs-slow-1")))
        #expect(String(decoding: status.body, as: UTF8.self).contains("canceled"), "an abandoned job must be cancelled")
    }

    /// Runs a job in `mode`, cancels badge once the server has seen a request
    /// whose path `seen` accepts, and says whether the server's job was cancelled.
    private func cancelOnce(mode: String, seen: @escaping @Sendable (String) -> Bool) async throws -> (cancelled: Bool, badgeKept: Bool) {
        let h = try RemoteHarness()
        defer { h.stop() }
        let task = Task { try await h.run(mode: mode, api: "jobs", options: Self.options.merging(["timeoutSeconds": "30"]) { $1 }) }
        let clock = ContinuousClock()
        let started = clock.now
        while try await !h.received().contains(where: { ($0["path"] as? String).map(seen) == true }) {
            try #require(clock.now - started < .seconds(60), "the server never saw, within 60 s, the request to cancel after")
            try await Task.sleep(for: .milliseconds(20))
        }
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("a cancelled run must not succeed")
        } catch {
            #expect(error is CancellationError || (error as? BadgeError)?.code == .cancelled, "\(error)")
        }
        // The server's job table records a cancel request: a poll now says "canceled".
        let status = try await h.transport.send(HTTPRequest(url: h.server.url("/\(mode)/predictions/job-\(mode)-1")))
        return (String(decoding: status.body, as: UTF8.self).contains("canceled"), h.currentBadge == h.previousBadge)
    }

    @Test func cancellingBadgeCancelsTheJobOnTheServer() async throws {
        // Once the job is known to badge, i.e. once it has been polled.
        let outcome = try await cancelOnce(mode: "jobs-slow") { $0.contains("/predictions/job-") }
        #expect(outcome.cancelled, "the job was not cancelled on the server")
        #expect(outcome.badgeKept)
    }

    @Test func cancellingDuringTheSubmitStillCancelsTheJobItMade() async throws {
        // While the submit is in flight: the server has made the job but not yet answered.
        let outcome = try await cancelOnce(mode: "jobs-slow-submit") { $0.hasSuffix("/predictions") }
        #expect(outcome.cancelled, "the job made during the submit was left running")
        #expect(outcome.badgeKept)
    }

    @Test func outputsComeInManyShapes() {
        let b64 = TestPNG.solid(width: 2, height: 2, rgb: (1, 2, 3)).base64EncodedString()
        if case .url = JobsClient.output(["https://x/y.png"]) {} else { Issue.record("a list of URLs") }
        if case .bytes = JobsClient.output(.string("data:image/png;base64," + b64)) {} else { Issue.record("a data URL") }
        if case .bytes = JobsClient.output(["images": [.string(b64)]]) {} else { Issue.record("an object with images") }
        #expect(JobsClient.output(42) == nil)
        #expect(JobsClient.output(["images": [42, .null]]) == nil)
    }
}

/// The deadline of a followed run (ComfyUI's and the jobs dialect's polls):
/// the last poll is at the deadline, never a poll interval before it.
@Suite(.threadsOfTheirOwn)
struct PollDeadlineTests {
    @Test func theLastWaitEndsAtTheDeadlineAndNoneFollowsIt() {
        let start = ContinuousClock.now
        let deadline = PollDeadline(after: .seconds(4), from: start)
        #expect(deadline.wait(.seconds(1), now: start) == .seconds(1))
        // 3.4 s in, a 1 s wait would pass the deadline: the next poll is at 4 s, not never.
        #expect(deadline.wait(.seconds(1), now: start.advanced(by: .milliseconds(3400))) == .milliseconds(600))
        #expect(deadline.wait(.seconds(1), now: start.advanced(by: .seconds(4))) == nil)
        #expect(deadline.wait(.seconds(1), now: start.advanced(by: .seconds(5))) == nil)
    }

    @Test func aPollGetsWhatIsLeftWithinItsBounds() {
        let start = ContinuousClock.now
        let deadline = PollDeadline(after: .seconds(100), from: start)
        #expect(deadline.pollTimeout(now: start) == PollDeadline.longestPoll)
        #expect(deadline.pollTimeout(now: start.advanced(by: .seconds(90))) == .seconds(10))
        // The look at the deadline itself still gets time to be answered.
        #expect(deadline.pollTimeout(now: start.advanced(by: .seconds(100))) == PollDeadline.lastLook)
    }
}
