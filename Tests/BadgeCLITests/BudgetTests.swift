import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// A run of the binary with its peak memory and wall time, as the parent
/// sees them (getrusage of its children, from a small Python wrapper).
struct MeasuredRun {
    var result: Sandbox.Result
    var peakMegabytes: Int
    var seconds: Double

    static let wrapper = """
        import resource, subprocess, sys, time
        t = time.time()
        r = subprocess.run(sys.argv[1:])
        sys.stderr.write("\\nMEASURED %d %.3f\\n" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.time() - t))
        sys.exit(r.returncode)
        """

    static func run(_ s: Sandbox, _ arguments: [String], extraEnvironment: [String: String] = [:], stdin: Data? = nil,
                    timeout: TimeInterval = 180) async throws -> MeasuredRun {
        var result = try await s.run(arguments, extraEnvironment: extraEnvironment, prefix: ["/usr/bin/python3", "-c", wrapper],
                                     stdin: stdin, timeout: timeout)
        guard let line = result.stderr.split(separator: "\n").last(where: { $0.hasPrefix("MEASURED ") }) else {
            throw MeasureFailed(stderr: result.stderr)
        }
        let parts = line.split(separator: " ")
        result.stderr = result.stderr.replacingOccurrences(of: "\n" + line + "\n", with: "")
        return MeasuredRun(result: result, peakMegabytes: (Int(parts[1]) ?? 0) / 1024, seconds: Double(parts[2]) ?? 0)
    }

    struct MeasureFailed: Error, CustomStringConvertible {
        var stderr: String
        var description: String { "the wrapper printed no measurement: \(stderr)" }
    }
}

/// Issue #31: what servers, plugins and manifests send is parsed under a
/// budget. Each bound here is generous (several times what the run takes);
/// what it guards against took gigabytes and tens of seconds.
@Suite(.threadsOfTheirOwn, .serialized)
struct BudgetTests {
    static let imageServer = Sandbox.repository.appendingPathComponent("Tests/RemoteBackendTests/Fixtures/fake_image_server.py")

    /// 60 MB of `{"data":[0,0,...]}` under a 64 MiB maxResponseBytes cost 1.76 GB.
    @Test func aServersSixtyMegabyteAnswerOfTinyValuesIsRefusedUnderBudget() async throws {
        let server = try FixtureServer(script: Self.imageServer)
        defer { server.stop() }
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("config.json")
        try Data("""
            {"backends": {"remote": {"type": "http", "api": "openai", "url": "http://127.0.0.1:\(server.port)/json-values/v1",
                                     "retries": 0, "maxResponseBytes": 67108864, "timeoutSeconds": 60}}}
            """.utf8).write(to: config)
        let run = try await MeasuredRun.run(s, ["generate", "--config", config.path, "--backend", "remote", "--size", "64", "a calm sea"])
        #expect(run.result.status == 1, "\(run.result.stderr)")
        #expect(run.result.stderr.contains("the server's answer holds more than 1000000 JSON values"), "\(run.result.stderr)")
        #expect(run.peakMegabytes < 600, "peak \(run.peakMegabytes) MB")
        #expect(run.seconds < 30, "\(run.seconds) s")
        print("BudgetTests: 60 MB JSON answer: peak \(run.peakMegabytes) MB, \(String(format: "%.2f", run.seconds)) s")
    }

    static let fixtures = Sandbox.repository.appendingPathComponent("Tests/ExecBackendTests/Fixtures")

    /// 20 MB of a plugin's standard error took 13.4 s: each line was cut from the front of a buffer.
    @Test func twentyMegabytesOfPluginStandardErrorAreReadInLinearTime() async throws {
        let s = try Sandbox()
        let png = s.root.appendingPathComponent("plugin.png")
        try TestPNG.solid(width: 64, height: 64, rgb: (1, 2, 3)).write(to: png)
        let config = s.root.appendingPathComponent("config.json")
        try Data(#"{"backends": {"chatty": {"type": "exec", "command": ["\#(Self.fixtures.path)/stderr-flood.sh"], "env": {"PNG_SOURCE": "\#(png.path)"}, "timeoutSeconds": 120}}}"#.utf8)
            .write(to: config)
        let run = try await MeasuredRun.run(s, ["generate", "--config", config.path, "--backend", "chatty", "--size", "64", "-v", "x"])
        #expect(run.result.status == 0, "\(run.result.stderr.suffix(2000))")
        #expect(run.result.stderr.contains("more lines on standard error not logged"))
        #expect(run.peakMegabytes < 300, "peak \(run.peakMegabytes) MB")
        #expect(run.seconds < 60, "\(run.seconds) s")
        print("BudgetTests: 20 MB plugin stderr: peak \(run.peakMegabytes) MB, \(String(format: "%.2f", run.seconds)) s")
    }

    /// 60 MB manifests: a CSV of commas took 3.0 GB and 14 s, a JSON array 4.3 GB and 26 s.
    @Test(arguments: ["csv", "json"])
    func sixtyMegabyteManifestsStopAtTheFirstExcess(format: String) async throws {
        let s = try Sandbox()
        let manifest = s.root.appendingPathComponent("jobs.\(format)")
        let size = 60_000_000
        var data: Data
        switch format {
        case "csv": data = Data("name,prompt\n".utf8) + Data(repeating: UInt8(ascii: ","), count: size)
        default: data = Data("[".utf8) + Data(String(repeating: "0,", count: size / 2).utf8) + Data("0]".utf8)
        }
        try data.write(to: manifest)
        data = Data()
        let run = try await MeasuredRun.run(s, ["batch", manifest.path, "--output", s.root.appendingPathComponent("out").path])
        #expect(run.result.status == 1, "\(run.result.stderr)")
        let expected = format == "csv" ? "holds more than 1000000 cells; badge reads no more" : "holds more than 1000000 JSON values; badge reads no more"
        #expect(run.result.stderr.contains(expected), "\(run.result.stderr)")
        #expect(run.result.stderr.contains("jobs.\(format):"), "the error names the file and where: \(run.result.stderr)")
        #expect(run.peakMegabytes < 1000, "peak \(run.peakMegabytes) MB")
        #expect(run.seconds < 60, "\(run.seconds) s")
        print("BudgetTests: 60 MB \(format) manifest: peak \(run.peakMegabytes) MB, \(String(format: "%.2f", run.seconds)) s")
    }
}
