import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

// MARK: - 10. The batch's bar ends its line; Ctrl-C is answered at once

extension FirstTenMinutesTests {
    /// A running child whose output is read as it comes, to wait for a state before acting.
    final class Watched: @unchecked Sendable {
        let process: ChildProcess
        /// Guards the output and `open`; broadcast when they change.
        private let changed = NSCondition()
        private var out = Data(), err = Data()
        /// Pipes not yet read to their end.
        private var open = 2
        private let readers = DispatchGroup()

        init(_ process: ChildProcess) throws {
            self.process = process
            let stdout = Pipe(), stderr = Pipe()
            process.standardOutput = stdout
            process.standardError = stderr
            try process.run()
            for (pipe, isOut) in [(stdout, true), (stderr, false)] {
                readers.enter()
                Thread { [self] in
                    while true {
                        let chunk = pipe.fileHandleForReading.availableData
                        changed.withLock {
                            if chunk.isEmpty { open -= 1 } else if isOut { out.append(chunk) } else { err.append(chunk) }
                            changed.broadcast()
                        }
                        if chunk.isEmpty { break }
                    }
                    readers.leave()
                }.start()
            }
        }

        var stdout: String { changed.withLock { String(decoding: out, as: UTF8.self) } }
        var stderr: String { changed.withLock { String(decoding: err, as: UTF8.self) } }

        /// Waits (at most `limit`, a bound for a hang, not a measurement) until `condition`
        /// holds of the output read so far; false if the output ended or the time ran out first.
        func wait(for limit: TimeInterval = 60, until condition: (_ stdout: String, _ stderr: String) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(limit)
            return changed.withLock {
                while true {
                    if condition(String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self)) { return true }
                    if open == 0 || !changed.wait(until: deadline) { return false }
                }
            }
        }

        /// Waits for the exit (killing the child after `limit`) and for its output to be read.
        func finish(limit: TimeInterval = 60) -> Int32? {
            let ended = process.waitUntilExit(timeout: .seconds(limit))
            if !ended { process.signal(SIGKILL) }
            process.waitUntilExit()
            readers.wait()
            return ended ? process.terminationStatus : nil
        }
    }

    @Test func ctrlCDuringABatchSaysStoppingAtOnce() async throws {
        let s = try Sandbox()
        let jobs = (1...40).map { #"{"name": "job-\#($0)", "prompt": "Meditate daily \#($0)", "size": 1024}"# }
        try Data(("[" + jobs.joined(separator: ",\n") + "]").utf8).write(to: s.root.appendingPathComponent("jobs.json"))
        let batch = try Watched(try s.start(["batch", s.root.appendingPathComponent("jobs.json").path, "--output",
                                            s.root.appendingPathComponent("out").path]))
        #expect(batch.wait { stdout, _ in stdout.contains("ok ") }, "no badge was made: \(batch.stderr)")
        batch.process.interrupt()
        #expect(batch.wait { _, stderr in stderr.contains("stopping…") }, "no word of stopping: \(batch.stderr)")
        let status = batch.finish()
        #expect(status == 130, "\(batch.stderr)")
        #expect(batch.stderr.range(of: #"badge: stopped \(Ctrl-C\); [0-9]+ of 40 badges are done\nhint: run the same command again to make the rest; finished badges are kept"#,
                                   options: .regularExpression) != nil, "\(batch.stderr)")
        #expect(!batch.stderr.contains("error:"), "a stop is no error: \(batch.stderr)")
        // One word of stopping, the batch's own, which says what is kept.
        #expect(!batch.stderr.contains("badge: stopping (again to end at once)"), "\(batch.stderr)")
        // "stopping…" came before the batch's last word, not with it.
        let stderr = batch.stderr
        if let stopping = stderr.range(of: "stopping…"), let interrupted = stderr.range(of: "badge: stopped") {
            #expect(stopping.lowerBound < interrupted.lowerBound)
        }
    }

    @Test func ctrlCDuringALargeSketchCancelsIt() async throws {
        let s = try Sandbox()
        let generate = try Watched(try s.start(["generate", "--verbose", "--style", "sketch", "--size", "4096", "Meditate daily"]))
        // The drawing has started once the workspace is ready.
        #expect(generate.wait { _, stderr in stderr.contains("workspace ready") }, "\(generate.stderr)")
        generate.process.interrupt()
        let status = generate.finish()
        #expect(status == 130, "\(generate.stderr)")
        #expect(generate.stderr.contains("badge: stopping (again to end at once)\n"), "\(generate.stderr)")
        #expect(generate.stderr.hasSuffix("\nbadge: stopped (Ctrl-C); the current badge is unchanged\n"), "\(generate.stderr)")
        #expect(!generate.stderr.contains("error:"), "a stop is no error: \(generate.stderr)")
        #expect(s.badge == nil && s.leftoverWorkspaces.isEmpty)
    }

    /// On a terminal (a pseudo-terminal from script(1)), the summary starts a line of its own.
    @Test func theBatchSummaryIsNotGluedToTheProgressBar() async throws {
        let s = try Sandbox()
        let jobs = (1...4).map { #"{"name": "job-\#($0)", "prompt": "Read \#($0) books", "size": 128}"# }
        try Data(("[" + jobs.joined(separator: ",") + "]").utf8).write(to: s.root.appendingPathComponent("jobs.json"))
        let command = [Sandbox.binary.path, "batch", s.root.appendingPathComponent("jobs.json").path, "--output", s.root.appendingPathComponent("out").path]
            .map { "'" + $0 + "'" }.joined(separator: " ")
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qefc", command, "/dev/null"]
        process.environment = s.environment
        let watched = try Watched(process)
        #expect(watched.finish() == 0, "\(watched.stdout)")
        let output = watched.stdout
        #expect(output.contains("▕"), "no progress bar on the terminal: \(output)")
        let summary = try #require(output.range(of: "Made 4 badges"), "\(output)")
        let before = output[..<summary.lowerBound]
        // A terminal turns "\n" into "\r\n", one Character: compare scalars.
        #expect(before.unicodeScalars.last == "\n", "the summary is glued to what came before: \(before.suffix(80).debugDescription)")
    }
}
