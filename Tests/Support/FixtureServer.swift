#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Runs a test server script (`python3 SCRIPT`) that listens on 127.0.0.1 on a
/// free port and prints the port on its first line. `stop()` closes its stdin
/// and ends it, so it never outlives the test that started it.
package final class FixtureServer: @unchecked Sendable {
    package let port: Int
    private let process: ChildProcess
    private let stdin: Pipe

    package struct StartError: Error, CustomStringConvertible {
        package var description: String
    }

    /// How long a server may take to print its port (python3 starting on a loaded machine).
    static let startLimit: Double = 120

    package init(script: URL) throws {
        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // A bound on a hang: a server that has not printed its port within the
        // limit is killed, which ends the read.
        let timer = KillTimer(process, after: Self.startLimit)
        let line = PipeReading.readLine(stdout.fileHandleForReading) ?? ""
        timer.cancel()
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            if timer.fired {
                throw StartError(description: "the fixture server \(script.lastPathComponent) did not print its port within \(Int(Self.startLimit)) s")
            }
            let why = String(decoding: PipeReading.readAll(stderr.fileHandleForReading), as: UTF8.self)
            throw StartError(description: "the fixture server \(script.lastPathComponent) did not start: \(why)")
        }
        self.port = port
    }

    package func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// The body of `GET path` from the server, over a plain socket (HTTP/1.0, so the
    /// server closes when done): for reading what a fake server recorded, in tests
    /// that have no HTTP client of their own. Waits at most 30 s for an answer.
    package func get(_ path: String) throws -> Data {
        let fd: Int32
        do { fd = try loopbackSocket(port: port, timeout: 30) } catch {
            throw StartError(description: "cannot connect to the fixture server: \(error)")
        }
        defer { close(fd) }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else {
            throw StartError(description: "cannot send to the fixture server: errno \(errno)")
        }
        var response = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            response.append(buffer, count: n)
        }
        guard let end = response.range(of: Data("\r\n\r\n".utf8)) else {
            throw StartError(description: "the fixture server's answer to \(path) has no end of headers (\(response.count) bytes)")
        }
        return Data(response[end.upperBound...])
    }

    package func stop() {
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        // A bound on a server that does not end on SIGTERM: it is killed after 10 s.
        let timer = KillTimer(process, after: 10)
        process.waitUntilExit()
        timer.cancel()
    }
}

package struct SocketError: Error, CustomStringConvertible {
    package var description: String
}

/// A socket connected to 127.0.0.1:`port`, whose reads give up after `timeout` seconds.
package func loopbackSocket(port: Int, timeout: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw SocketError(description: "socket: errno \(errno)") }
    var wait = timeval(tv_sec: timeout, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        let number = errno
        close(fd)
        throw SocketError(description: "connect to port \(port): errno \(number)")
    }
    return fd
}

/// A port on 127.0.0.1 that nothing listens on: bound by the kernel's choice,
/// learnt, and closed again (nothing else is likely to take it at once).
package func closedLoopbackPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return 0 }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    return bound ? Int(UInt16(bigEndian: address.sin_port)) : 0
}
