import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a new user meets in the first ten minutes (issue #23), through the built binary.
@Suite(.threadsOfTheirOwn)
struct FirstTenMinutesTests {
    /// Above 2^53: a reader that parses numbers as doubles rounds it to 7676146793421658000.
    static let bigSeed = "7676146793421657753"

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    /// Reads `key` from JSON the way JavaScript and jq 1.6 do, every number a double
    /// (Python's json with parse_int=float), and prints it back as text.
    func readThroughDoubles(_ jsonText: String, path: String) throws -> String {
        let script = """
            import json, sys
            value = json.loads(sys.stdin.read(), parse_int=float)
            for key in sys.argv[1].split("."):
                value = value[int(key)] if key.isdigit() else value[key]
            print(value if isinstance(value, str) else repr(value))
            """
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, path]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // A bound on a hang: killed at 60 s, its output ends and the read with it.
        let timer = KillTimer(process, after: 60)
        defer { timer.cancel() }
        input.fileHandleForWriting.write(Data(jsonText.utf8))
        try input.fileHandleForWriting.close()
        let data = PipeReading.readAll(output.fileHandleForReading)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: - 1. Seeds survive JSON

    @Test func aSeedReadThroughDoublesDrawsTheSameBadge() async throws {
        let s = try Sandbox()
        let environment = ["SOURCE_DATE_EPOCH": "1767225600", "TZ": "UTC"]
        let first = try await s.run(["generate", "--json", "--size", "64", "--seed", Self.bigSeed, "Meditate daily"],
                                    extraEnvironment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        let shown = try await s.run(["show", "--json"])
        let seed = try readThroughDoubles(shown.stdout, path: "seed")
        #expect(seed == Self.bigSeed, "show --json's seed came back as \(seed) through a double-based reader")

        let again = s.root.appendingPathComponent("again.png")
        let second = try await s.run(["generate", "--size", "64", "--seed", seed, "--output", again.path, "Meditate daily"],
                                     extraEnvironment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        let original = try #require(s.badge)
        let redrawn = try Data(contentsOf: again)
        #expect(try PNG.chunks(in: original, verifyCRC: true).filter { $0.type == "IDAT" }.map(\.data)
                == PNG.chunks(in: redrawn, verifyCRC: true).filter { $0.type == "IDAT" }.map(\.data),
                "the seed read back draws another picture")

        let verified = try await s.run(["verify", "--json"])
        #expect(try readThroughDoubles(verified.stdout, path: "seed") == Self.bigSeed)
    }

    @Test func aBatchManifestTakesTheSeedAsAStringAndWritesItAsOne() async throws {
        let s = try Sandbox()
        try Data("""
            [{"name": "as-string", "prompt": "Meditate daily", "seed": "\(Self.bigSeed)", "size": 64},
             {"name": "as-integer", "prompt": "Meditate daily", "seed": \(Self.bigSeed), "size": 64}]
            """.utf8).write(to: s.root.appendingPathComponent("jobs.json"))
        let out = s.root.appendingPathComponent("out")
        let result = try await s.run(["batch", s.root.appendingPathComponent("jobs.json").path, "--output", out.path])
        #expect(result.status == 0, "\(result.stderr)")
        let manifest = try String(contentsOf: out.appendingPathComponent("manifest.json"), encoding: .utf8)
        #expect(try readThroughDoubles(manifest, path: "results.0.request.seed") == Self.bigSeed)
        #expect(try readThroughDoubles(manifest, path: "results.1.request.seed") == Self.bigSeed)
        let stamped = try BadgeMetadata.read(from: out.appendingPathComponent("as-string.png"))
        #expect(stamped?.seed == UInt64(Self.bigSeed))

        try Data(#"[{"prompt": "Meditate daily", "seed": "12ab"}]"#.utf8).write(to: s.root.appendingPathComponent("bad.json"))
        let bad = try await s.run(["batch", s.root.appendingPathComponent("bad.json").path, "--output", out.path])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("bad.json:1:") && bad.stderr.contains("seed") && bad.stderr.contains("\"12ab\""), "\(bad.stderr)")
    }
}

// MARK: - 11. The sketch's outline filter, made fast, draws the same pixels

extension FirstTenMinutesTests {
    static let gallery = Sandbox.repository.appendingPathComponent("docs/gallery")

    @Test func theGallerysSketchesStillVerify() async throws {
        let sketches = try FileManager.default.contentsOfDirectory(atPath: Self.gallery.path).filter { $0.hasSuffix("-sketch.png") }.sorted()
        #expect(sketches.count >= 4)
        let s = try Sandbox()
        for name in sketches {
            let result = try await s.run(["verify", Self.gallery.appendingPathComponent(name).path])
            #expect(result.status == 0 && result.stdout.hasPrefix("verified: every pixel matches"), "\(name): \(result.stdout) \(result.stderr)")
        }
    }
}
