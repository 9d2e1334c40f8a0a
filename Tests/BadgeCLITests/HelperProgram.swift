import BadgeKitTesting
import BadgeTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program the tests run beside badge: a witness that decodes badge's files
/// with another library (Pillow, Chromium), a browser driver. Run to its end on
/// threads of its own, with a deadline: when it is still running at `limit`, its
/// whole process group (the program, and a browser it started) is killed, and
/// the result says so. Its output is read to the end, or for at most 30 s more
/// should something it started hold the pipes open after it ended.
struct HelperProgram: Sendable {
    var status: Int32
    var stdout: Data
    var stderr: String
    /// It was killed at the deadline.
    var killed: Bool

    /// What it said on standard error, and that it was killed, for a failure message.
    var why: String { (killed ? "killed at the deadline; " : "") + "status \(status); stderr: \(stderr)" }

    static func run(_ arguments: [String], environment: [String: String]? = nil, limit: Double) async throws -> HelperProgram {
        try await onOwnThread {
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = arguments
            process.environment = environment
            let out = Collected(), err = Collected()
            process.standardOutput = out.pipe
            process.standardError = err.pipe
            try process.run()
            out.start()
            err.start()
            var killed = false
            if !process.waitUntilExit(timeout: .seconds(limit)) {
                killed = process.signalGroup(SIGKILL)
                process.waitUntilExit()
            }
            let complete = out.wait(seconds: 30) && err.wait(seconds: 30)
            let errors = String(decoding: err.data, as: UTF8.self) + (complete ? "" : "\n(its output was still open 30 s after it ended)")
            return HelperProgram(status: process.terminationStatus, stdout: out.data, stderr: errors, killed: killed)
        }
    }

    /// A pipe read to its end on a thread of its own.
    private final class Collected: @unchecked Sendable {
        let pipe = Pipe()
        private let lock = NSLock()
        private var bytes = Data()
        private let done = DispatchSemaphore(value: 0)

        func start() {
            let fd = pipe.fileHandleForReading.fileDescriptor
            Thread { [self] in
                var buffer = [UInt8](repeating: 0, count: 64 << 10)
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if n > 0 {
                        lock.withLock { bytes.append(buffer, count: n) }
                    } else if n == 0 || errno != EINTR {
                        break
                    }
                }
                done.signal()
            }.start()
        }

        /// Whether the pipe reached its end within `seconds`.
        func wait(seconds: Double) -> Bool { done.wait(timeout: .now() + seconds) == .success }

        var data: Data { lock.withLock { bytes } }
    }
}
