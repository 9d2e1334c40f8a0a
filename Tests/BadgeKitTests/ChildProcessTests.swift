import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The tests' child processes (Tests/Support/ChildProcess.swift, on
/// swift-subprocess): what every child starts with, and how it is waited for
/// and signalled.
@Suite(.threadsOfTheirOwn)
struct ChildProcessTests {
    /// Runs `/bin/sh -c script` to its end (at most 60 s) with its standard output
    /// and error on one pipe; returns what it wrote and the finished process.
    static func shell(_ script: String, environment: [String: String]? = nil, directory: URL? = nil,
                      input: Data? = nil) async throws -> (output: String, process: ChildProcess) {
        try await onThreadOfItsOwn("sh -c \(script)") {
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", script]
            process.environment = environment
            process.currentDirectoryURL = directory
            let output = Pipe(), stdin = Pipe()
            process.standardOutput = output
            process.standardError = output
            if input != nil { process.standardInput = stdin }
            try process.run()
            let timer = KillTimer(process, after: 60)
            if let input {
                stdin.fileHandleForWriting.write(input)
                try stdin.fileHandleForWriting.close()
            }
            let text = String(decoding: PipeReading.readAll(output.fileHandleForReading), as: UTF8.self)
            process.waitUntilExit()
            timer.cancel()
            return (text, process)
        }
    }

    /// The status line `name` of /proc/PID/status as the child saw it.
    static func field(_ name: String, in status: String) -> String? {
        status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
            .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
    }

    @Test func aChildHoldsNoDescriptorOfOurs() async throws {
        // A descriptor this process holds without close-on-exec.
        let stray = open("/dev/null", O_RDONLY)
        #expect(stray > 2)
        defer { close(stray) }
        // The shell's descriptors, listed by ls (a child of its own).
        let (output, process) = try await Self.shell("ls /proc/$$/fd")
        #expect(process.terminationStatus == 0 && process.terminationReason == .exit, "\(output)")
        let descriptors = output.split(separator: "\n").compactMap { Int($0) }
        #expect(descriptors == [0, 1, 2], "the child holds \(descriptors); this process's \(stray) is one of ours")
    }

    /// No standard signal blocked or ignored, though this process ignores one (as `badge`
    /// ignores SIGXFSZ, so that a file-size limit fails a write instead), and a process
    /// group of its own. (glibc's posix_spawn leaves its own two signals, 32 and 33,
    /// ignored in every child it starts.)
    @Test func aChildStartsWithNoSignalBlockedOrIgnoredInAGroupOfItsOwn() async throws {
        signal(SIGXFSZ, SIG_IGN)
        let output = try await onThreadOfItsOwn("cat's status") { () -> (status: String, stat: String, pid: Int32) in
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/bin/cat")
            process.arguments = ["/proc/self/status", "/proc/self/stat"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let timer = KillTimer(process, after: 60)
            let text = String(decoding: PipeReading.readAll(output.fileHandleForReading), as: UTF8.self)
            process.waitUntilExit()
            timer.cancel()
            let stat = text.split(separator: "\n").last.map(String.init) ?? ""
            return (text, stat, process.processIdentifier)
        }
        let standard: UInt64 = 0x7FFF_FFFF  // signals 1 to 31
        let blocked = try #require(Self.field("SigBlk", in: output.status).flatMap { UInt64($0, radix: 16) }, "\(output.status)")
        let ignored = try #require(Self.field("SigIgn", in: output.status).flatMap { UInt64($0, radix: 16) }, "\(output.status)")
        #expect(blocked == 0, "blocked: \(String(blocked, radix: 16))")
        #expect(ignored & standard == 0, "ignored: \(String(ignored, radix: 16))")
        // /proc/self/stat: pid (comm) state ppid pgrp ...
        let fields = output.stat.split(separator: ")").last?.split(separator: " ") ?? []
        #expect(fields.count > 2 && fields[2] == "\(output.pid)", "process group: \(output.stat)")
    }

    @Test func itRunsWithTheEnvironmentAndDirectoryGiven() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (output, process) = try await Self.shell(#"pwd; echo "only=$ONLY home=${HOME-none}"; cat"#,
                                                     environment: ["ONLY": "this", "PATH": "/usr/bin:/bin"], directory: directory,
                                                     input: Data("from the pipe\n".utf8))
        #expect(process.terminationStatus == 0)
        #expect(output == "\(directory.resolvingSymlinksInPath().path)\nonly=this home=none\nfrom the pipe\n", "\(output)")
    }

    @Test func aProgramThatIsNotThereIsAnError() {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/nonexistent/badge-no-such-program")
        #expect(throws: ChildProcess.SpawnError.self) { try process.run() }
        #expect(!process.isRunning && !process.signal(SIGKILL))
    }

    @Test func aSignalReachesARunningChildAndNoneAnEndedOne() async throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["600"]
        try process.run()
        #expect(process.isRunning)
        #expect(process.signal(SIGTERM))
        #expect(await process.waitForExit(limit: .seconds(60)), "sleep did not end on SIGTERM")
        #expect(!process.isRunning)
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGTERM)
        #expect(!process.signal(SIGKILL), "a signal was sent to a child already reaped")
    }

    @Test func aWaitForExitGivesUpAtItsLimit() async throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["600"]
        try process.run()
        defer { process.signal(SIGKILL) }
        #expect(!(await process.waitForExit(limit: .milliseconds(200))))
        #expect(!process.waitUntilExit(timeout: .milliseconds(200)))
        #expect(process.isRunning)
    }

    /// Children started together from many threads: none holds another's pipe, so each
    /// one's output ends when it does, while long-lived children started beside it run on.
    @Test func childrenStartedTogetherHoldNoneOfEachOthersPipes() async throws {
        let sleepers = (0..<8).map { _ in
            let sleeper = ChildProcess()
            sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
            sleeper.arguments = ["600"]
            return sleeper
        }
        defer { for sleeper in sleepers { sleeper.signal(SIGKILL) } }
        let outputs = try await withThrowingTaskGroup(of: String.self) { group in
            for k in 0..<8 {
                group.addTask {
                    try await onThreadOfItsOwn("echo \(k)'s output to end", limit: .seconds(120)) {
                        try sleepers[k].run()
                        let echo = ChildProcess()
                        echo.executableURL = URL(fileURLWithPath: "/bin/echo")
                        echo.arguments = ["child \(k)"]
                        let output = Pipe()
                        echo.standardOutput = output
                        try echo.run()
                        let text = String(decoding: PipeReading.readAll(output.fileHandleForReading), as: UTF8.self)
                        echo.waitUntilExit()
                        return text
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(outputs) == Set((0..<8).map { "child \($0)\n" }))
        #expect(sleepers.allSatisfy { $0.isRunning })
    }
}
