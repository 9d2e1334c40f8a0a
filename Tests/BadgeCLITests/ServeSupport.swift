import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `badge serve` started by a test on 127.0.0.1 and a free port: the URL it
/// printed, its token, and a stop that sends SIGTERM and waits for the end.
final class Served: @unchecked Sendable {
    deinit { end() }

    let process: ChildProcess
    let port: Int
    let url: String
    let token: String
    private let input: Pipe
    private let output = Stream()
    private let errors = Stream()

    struct DidNotStart: Error, CustomStringConvertible {
        var description: String
    }

    /// What a child writes to one pipe, read to its end by a thread of its own
    /// (so the child never blocks on a full pipe).
    final class Stream: @unchecked Sendable {
        /// Guards `data` and `atEnd`; broadcast when either changes.
        private let changed = NSCondition()
        private var data = Data()
        private var atEnd = false
        let pipe = Pipe()

        func start() {
            let handle = pipe.fileHandleForReading
            Thread { [self] in
                while true {
                    let chunk = handle.availableData
                    changed.withLock {
                        if chunk.isEmpty { atEnd = true } else { data.append(chunk) }
                        changed.broadcast()
                    }
                    if chunk.isEmpty { break }
                }
            }.start()
        }

        var text: String { changed.withLock { String(decoding: data, as: UTF8.self) } }
        /// Whether everything written has been read: every writer has closed its end.
        var ended: Bool { changed.withLock { atEnd } }

        /// Blocks until `condition` holds of the text read so far or the pipe has
        /// ended, or `limit` has passed; returns the text then.
        func wait(limit: Duration, until condition: (String) -> Bool) -> String {
            let deadline = Date(timeIntervalSinceNow: Double(limit.components.seconds))
            return changed.withLock {
                while !atEnd && !condition(String(decoding: data, as: UTF8.self)) && changed.wait(until: deadline) {}
                return String(decoding: data, as: UTF8.self)
            }
        }

        /// Waits (at most `limit`) until everything written has been read.
        func readToTheEnd(limit: Duration = .seconds(30)) async throws {
            _ = try await onThreadOfItsOwn("a child's output to end", limit: limit + .seconds(5)) { [self] in
                wait(limit: limit) { _ in false }
            }
        }
    }

    /// Starts it and waits (at most 60 s) for the URL on standard output, on a
    /// thread of its own: the wait must not hold one of Swift's few cooperative
    /// threads, on which every other test's async work runs.
    static func start(_ sandbox: Sandbox, _ arguments: [String] = [], environment: [String: String] = [:],
                      prefix: [String] = []) async throws -> Served {
        let sandbox = Sandbox.Unchecked(sandbox)
        return try await onThreadOfItsOwn("badge serve to print its URL", limit: .seconds(120)) {
            try Served(sandbox.value, arguments, environment: environment, prefix: prefix)
        }
    }

    private init(_ sandbox: Sandbox, _ arguments: [String], environment: [String: String], prefix: [String]) throws {
        process = try sandbox.start(["serve", "--listen", "127.0.0.1:0"] + arguments, extraEnvironment: environment, prefix: prefix)
        input = Pipe()
        process.standardInput = input
        process.standardOutput = output.pipe
        process.standardError = errors.pipe
        try process.run()
        output.start()
        errors.start()
        // Its standard output ends when it does.
        let printed = output.wait(limit: .seconds(60)) { $0.contains("http://") }
        let line = printed.split(separator: "\n").first { $0.contains("http://") }
        guard let line, let start = line.range(of: "http://"),
              let components = URLComponents(string: String(line[start.lowerBound...].split(separator: " ")[0])), let port = components.port else {
            process.terminate()
            process.waitUntilExit()
            throw DidNotStart(description: "badge serve printed no URL: \(output.text); stderr: \(errors.text)")
        }
        self.port = port
        url = String(line[start.lowerBound...].split(separator: " ")[0])
        // The token is in the fragment: #token=...
        token = components.percentEncodedFragment.flatMap { $0.hasPrefix("token=") ? String($0.dropFirst(6)).removingPercentEncoding : nil } ?? ""
    }

    var stdout: String { output.text }
    var stderr: String { errors.text }

    /// Ends `badge serve`'s standard input: a run held at a stage (BADGE_TEST_HOLD) goes on.
    func release() { try? input.fileHandleForWriting.close() }

    /// For `defer`: SIGTERM, and SIGKILL if it has not ended within 30 s.
    func end() {
        guard process.isRunning else { return }
        process.terminate()
        if !process.waitUntilExit(timeout: .seconds(30)) { process.signal(SIGKILL) }
        process.waitUntilExit()
    }

    /// SIGTERM, then waits for the exit (at most `timeout`); returns the exit
    /// status, or nil if it had to be killed.
    func stop(timeout: Duration = .seconds(60)) async throws -> Int32? {
        if process.isRunning {
            process.terminate()
            if !(await process.waitForExit(limit: timeout)) {
                process.signal(SIGKILL)
                _ = await process.waitForExit(limit: .seconds(60))
                return nil
            }
        }
        // What it wrote last is read before anyone looks at `stdout` or `stderr`.
        try await readToTheEnd()
        return process.terminationStatus
    }

    /// Waits (at most 30 s each) until both readers have reached the end of their pipes.
    private func readToTheEnd() async throws {
        try await output.readToTheEnd()
        try await errors.readToTheEnd()
    }

    /// The process's peak resident memory (VmHWM), in bytes.
    var peakMemory: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) else { return nil }
        return kilobytes * 1024
    }

    /// An HTTP/1.1 request over a new connection (Connection: close), sent and
    /// read on a thread of its own.
    func request(_ method: String = "GET", _ path: String, headers: [String: String] = [:], body: Data? = nil,
                 host: String? = nil) async throws -> RawHTTP.Response {
        var all = ["Host": host ?? "127.0.0.1:\(port)", "Connection": "close"]
        if let body { all["Content-Length"] = String(body.count) }
        all.merge(headers) { $1 }
        let (port, headers) = (port, all)
        return try await onThreadOfItsOwn("\(method) \(path)", limit: .seconds(300)) {
            try RawHTTP.send(port: port, method: method, path: path, headers: headers, body: body)
        }
    }

    /// A studio request with the token and the studio's own Origin, as the page sends it.
    func studio(_ method: String = "GET", _ path: String, json: String? = nil, headers: [String: String] = [:]) async throws -> RawHTTP.Response {
        var all = ["X-Badge-Token": token, "Origin": "http://127.0.0.1:\(port)"]
        if json != nil { all["Content-Type"] = "application/json" }
        all.merge(headers) { $1 }
        return try await request(method, path, headers: all, body: json.map { Data($0.utf8) })
    }
}

/// A minimal HTTP/1.1 client over a socket, for tests that must set what a
/// browser would not let them (Host, Origin) or send slowly.
enum RawHTTP {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? { headers[name.lowercased()] }
        var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
        var error: [String: Any]? { json?["error"] as? [String: Any] }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A connected socket to 127.0.0.1:`port` with a receive timeout.
    static func connect(port: Int, timeout: Int = 60) throws -> Int32 {
        try loopbackSocket(port: port, timeout: timeout)
    }

    static func write(_ fd: Int32, _ data: Data) throws {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                guard n > 0 else { throw Failure(description: "send: errno \(errno)") }
                offset += n
            }
        }
    }

    /// Everything the server sends until it closes (or the receive timeout).
    static func readAll(_ fd: Int32) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            data.append(buffer, count: n)
        }
        return data
    }

    static func send(port: Int, method: String, path: String, headers: [String: String], body: Data?) throws -> Response {
        let fd = try connect(port: port)
        defer { close(fd) }
        var head = "\(method) \(path) HTTP/1.1\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        try write(fd, Data((head + "\r\n").utf8) + (body ?? Data()))
        return try parse(readAll(fd), method: method)
    }

    static func parse(_ data: Data, method: String) throws -> Response {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else {
            throw Failure(description: "no complete answer: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        let lines = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(description: "bad status line \(lines[0])") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        var body = Data(data[end.upperBound...])
        if let length = headers["content-length"].flatMap(Int.init), method != "HEAD" { body = body.prefix(length) }
        if method == "HEAD" { body = Data() }
        return Response(status: status, headers: headers, body: body)
    }
}
