import Foundation

/// Runs a test server script (`python3 SCRIPT`) that listens on 127.0.0.1 on a
/// free port and prints the port on its first line. `stop()` closes its stdin
/// and ends it, so it never outlives the test that started it.
public final class FixtureServer: @unchecked Sendable {
    public let port: Int
    private let process: Process
    private let stdin: Pipe

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    public init(script: URL) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let line = PipeReading.readLine(stdout.fileHandleForReading) ?? ""
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            let why = String(decoding: PipeReading.readAll(stderr.fileHandleForReading), as: UTF8.self)
            throw StartError(description: "the fixture server \(script.lastPathComponent) did not start: \(why)")
        }
        self.port = port
    }

    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    public func stop() {
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }
}
