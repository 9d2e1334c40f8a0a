import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// Every way a plugin can misbehave ends in a clear error that names the
/// backend and says what happened, within the plugin's time limit, with the
/// store's badge byte-identical and no history entry made.
@Suite(.threadsOfTheirOwn)
struct MisbehavingPluginTests {
    @Test func aCrashIsReportedWithItsSignalAndLastWords() async throws {
        let h = try ExecHarness()
        let error = try await h.failure(try h.backend("crash.sh"))
        #expect(error.code == .generationFailed)
        #expect(error.message == "the plugin crash.sh was killed by signal 11 (SIGSEGV)")
        #expect(error.cause?.contains("loading the model") == true)
        #expect(error.description.contains("backend 'crash'"))
    }

    @Test func aHangIsStoppedAtItsLimitWithItsWholeProcessGroup() async throws {
        let h = try ExecHarness()
        // The plugin and its child both ignore SIGTERM: only SIGKILL to the group ends them.
        let error = try await h.failure(try h.backend("hang.sh", timeout: 1))
        #expect(error.code == .timeout)
        #expect(error.message.contains("did not finish within its time limit of 1 s"))
        #expect(error.cause?.contains("thinking very hard") == true)
        #expect(try await h.childDies(), "the plugin's child outlived it")
    }

    @Test func garbageIsRefusedByTheIntake() async throws {
        let h = try ExecHarness()
        let error = try await h.failure(try h.backend("garbage.sh"))
        #expect(error.code == .unsupportedFormat || error.code == .invalidImage)
        #expect(error.message.hasPrefix("the plugin's image was refused: "))
    }

    @Test func writingNothingAtAllIsNoResult() async throws {
        let h = try ExecHarness()
        let error = try await h.failure(try h.backend("silent.sh"))
        #expect(error.message == "the plugin silent.sh exited without printing a result line on standard output")
        #expect(error.hint?.contains("docs/PLUGINS.md") == true)
    }

    @Test func aSentenceInsteadOfJSONBreaksTheProtocol() async throws {
        let h = try ExecHarness()
        let error = try await h.failure(try h.backend("nojson.sh"))
        #expect(error.message.hasPrefix("the plugin nojson.sh broke the exec protocol: its result line is not JSON"))
        #expect(error.cause == "its last line was: Here is your badge!")
    }

    @Test func aFloodIsCutOffAndKilled() async throws {
        let h = try ExecHarness()
        let error = try await h.failure(try h.backend("flood.sh"))
        #expect(error.message == "the plugin flood.sh printed more than 1024 KiB on standard output and was stopped")
    }

    @Test func successWithoutAnImageIsRefused() async throws {
        let h = try ExecHarness()
        let error = try await h.failure(try h.backend("noimage.sh"))
        #expect(error.message == "the plugin reported success but wrote no image at its output path")
        #expect(error.hint?.contains("BADGE_OUTPUT") == true)
    }

    @Test func anImageWrittenElsewhereIsNeverRead() async throws {
        let h = try ExecHarness()
        let escaped = h.root.appendingPathComponent("escaped.png")
        let error = try await h.failure(try h.backend("outside.sh", env: ["ESCAPE_TO": escaped.path]))
        #expect(FileManager.default.fileExists(atPath: escaped.path), "the fixture did write its file elsewhere")
        #expect(error.message == "the plugin reported success but wrote no image at its output path")
    }

    @Test func aSymbolicLinkIsNotAnImage() async throws {
        let h = try ExecHarness()
        let error = try await h.failure(try h.backend("symlink.sh"))
        #expect(error.message == "the plugin's output is a symbolic link; badge reads only a file written there")
    }

    /// Checked by lstat and then opened, a FIFO (or a file swapped in
    /// between) was a race; now the output is opened once, without blocking,
    /// and its descriptor checked. Bounded from when the run starts (see
    /// `withDeadline`), not by `.timeLimit`, which also counts the wait for a
    /// cooperative thread.
    @Test func aFIFOIsNotAnImageAndIsNotWaitedOn() async throws {
        let h = try ExecHarness()
        let backend = try h.backend("fifo.sh")
        let error = try await withDeadline("a plugin's FIFO output refused", limit: .seconds(300)) { try await h.failure(backend) }
        #expect(error.message == "the plugin's output is a FIFO (named pipe), not a regular file")
    }

    @Test func aPoliteFailureShowsThePluginsOwnWords() async throws {
        let h = try ExecHarness()
        let error = try await h.failure(try h.backend("refuses.sh"))
        #expect(error.message == "the plugin refuses.sh failed: the model is still downloading")
        #expect(error.hint == "try again in five minutes")
    }

    @Test func anExitStatusWithoutAResultIsExplained() async throws {
        let h = try ExecHarness()
        let error = try await h.failure(try h.backend("exit3.sh"))
        #expect(error.message == "the plugin exit3.sh exited with status 3 without printing a result line")
        #expect(error.cause?.contains("cannot open /models/sd.bin") == true)
    }

    @Test func aChildLeftBehindIsKilled() async throws {
        let h = try ExecHarness()
        // It holds standard output open after its parent exits: badge must not wait for it either.
        _ = try await h.run(try h.backend("orphan.sh"))
        #expect(try await h.childDies(), "the plugin's child outlived the run")
    }

    @Test func cancellingStopsThePluginAndChangesNothing() async throws {
        let h = try ExecHarness()
        let before = try h.seedStore()
        let backend = try h.backend("hang.sh", timeout: 600)
        let run = Task { try await h.run(backend) }
        // Wait until the plugin is really running (it has written its child's pid).
        do {
            try await waitUntil("hang.sh to write its child's pid") { FileManager.default.fileExists(atPath: h.childPIDFile.path) }
        } catch {
            run.cancel()
            throw error
        }
        run.cancel()
        do {
            _ = try await run.value
            Issue.record("a cancelled run must not succeed")
        } catch let error as BadgeError {
            #expect(error.code == .cancelled, "\(error)")
        } catch {
            #expect(error is CancellationError, "\(error)")
        }
        #expect(try Data(contentsOf: h.store.badgeURL) == before)
        #expect(try await h.childDies(), "the plugin's child outlived the cancellation")
    }

    @Test func cancellingDuringTheAvailabilityCheckIsACancellation() async throws {
        let h = try ExecHarness()
        let before = try h.seedStore()
        let backend = try h.backend("hang.sh", timeout: 600, env: ["HANG_AVAILABILITY": "1"])
        let run = Task { try await h.run(backend) }
        do {
            try await waitUntil("hang.sh to write its child's pid during the availability check") {
                FileManager.default.fileExists(atPath: h.childPIDFile.path)
            }
        } catch {
            run.cancel()
            throw error
        }
        run.cancel()
        do {
            _ = try await run.value
            Issue.record("a cancelled run must not succeed")
        } catch let error as BadgeError {
            #expect(error.code == .cancelled, "\(error)")
        } catch {
            #expect(error is CancellationError, "\(error)")
        }
        #expect(try Data(contentsOf: h.store.badgeURL) == before)
        #expect(try await h.childDies(), "the plugin's child outlived the cancellation")
    }
}
