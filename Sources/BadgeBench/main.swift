// badge-bench: in-process measurements for scripts/bench.py, which starts the
// servers and prints the figures beside the peers'. Not installed; not for users.
//
//   badge-bench http URL COUNT CONCURRENCY
//     sends COUNT GET requests through CurlTransport, at most CONCURRENCY at a
//     time, and prints {"totalMs": ..., "perRequestMs": ..., "failures": ...}.
import BadgeKit
import CurlTransport
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 5, arguments[1] == "http", let url = URL(string: arguments[2]),
      let count = Int(arguments[3]), let concurrency = Int(arguments[4]), count > 0, concurrency > 0
else {
    FileHandle.standardError.write(Data("usage: badge-bench http URL COUNT CONCURRENCY\n".utf8))
    exit(64)
}

let transport = CurlTransport()
// One warm-up request: connection set-up and libcurl's initialisation are not per-request costs.
_ = try? await transport.send(HTTPRequest(url: url))

let clock = ContinuousClock()
let started = clock.now
let failures = await withTaskGroup(of: Bool.self) { group -> Int in
    var next = 0, failed = 0
    func add() {
        group.addTask { ((try? await transport.send(HTTPRequest(url: url)))?.status ?? 0) == 200 }
        next += 1
    }
    while next < min(concurrency, count) { add() }
    for await ok in group {
        if !ok { failed += 1 }
        if next < count { add() }
    }
    return failed
}
let elapsed = clock.now - started
let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
print("{\"totalMs\": \(ms), \"perRequestMs\": \(ms / Double(count)), \"failures\": \(failures)}")
