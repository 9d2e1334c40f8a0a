import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import ProceduralBackend
import Testing

/// `generate --choose N --pick K`: several candidates, and the one picked committed
/// through the same pipeline as a plain generate.
@Suite(.threadsOfTheirOwn)
struct ChooseTests {
    static func imageData(_ png: Data) throws -> Data {
        try PNG.chunks(in: png).filter { $0.type == "IDAT" }.reduce(into: Data()) { $0.append($1.data) }
    }

    @Test func pickCommitsThatCandidateWithTheCommitmentDate() async throws {
        let s = try Sandbox()
        let before = Date()
        let result = try await s.run(["generate", "--choose", "4", "--pick", "2", "--seed", "7", "--size", "64", "Run a marathon"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Committed your Promise Badge."), "\(result.stdout)")
        let badge = try Data(contentsOf: s.store.appendingPathComponent("badge.png"))
        let metadata = try #require(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png")))
        // The second candidate: the next seed, and the next style (no --style was given).
        #expect(metadata.seed == 8)
        #expect(metadata.style == ProceduralGenerator.styles[1])
        #expect(metadata.prompt == "Run a marathon")
        #expect(metadata.commitmentDate >= before.addingTimeInterval(-1))
        #expect(result.stdout.contains(metadata.id), "the id is printed: \(result.stdout)")
        // The very picture a plain generate with that seed and style draws.
        let plain = s.root.appendingPathComponent("plain.png")
        let made = try await s.run(["generate", "--seed", "8", "--style", ProceduralGenerator.styles[1], "--size", "64",
                                    "--output", plain.path, "Run a marathon"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try Self.imageData(badge) == Self.imageData(try Data(contentsOf: plain)))
    }

    @Test func pickWithAStyleVariesOnlyTheSeed() async throws {
        let s = try Sandbox()
        let result = try await s.run(["generate", "--choose", "3", "--pick", "3", "--style", "tile", "--seed", "100", "--size", "64",
                                      "--json", "Read 20 books"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        #expect(object["seed"] as? String == "102")
        #expect(object["style"] as? String == "tile")
        #expect((object["path"] as? String)?.hasSuffix("/store/badge.png") == true)
        #expect(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png"))?.id == object["id"] as? String)
    }

    @Test func theFirstCandidateIsThePlainGenerate() async throws {
        let s = try Sandbox()
        let picked = s.root.appendingPathComponent("picked.png"), plain = s.root.appendingPathComponent("plain.png")
        #expect(try await s.run(["generate", "--choose", "2", "--pick", "1", "--seed", "5", "--size", "64", "--output", picked.path,
                                 "Drink water"]).status == 0)
        #expect(try await s.run(["generate", "--seed", "5", "--size", "64", "--output", plain.path, "Drink water"]).status == 0)
        #expect(try Self.imageData(try Data(contentsOf: picked)) == Self.imageData(try Data(contentsOf: plain)))
        #expect(s.badge == nil, "--output leaves the store alone")
    }

    @Test(arguments: [
        (["--choose", "0"], "--choose must be from 2 to 9 candidates, not 0"),
        (["--choose", "50"], "--choose must be from 2 to 9 candidates, not 50"),
        (["--choose", "1"], "--choose must be from 2 to 9 candidates, not 1"),
        (["--choose", "4", "--pick", "5"], "--pick must be from 1 to 4 (there are 4 candidates), not 5"),
        (["--choose", "4", "--pick", "0"], "--pick must be from 1 to 4 (there are 4 candidates), not 0"),
        (["--pick", "5"], "--pick must be from 1 to 4 (there are 4 candidates), not 5"),
    ])
    func outOfRangeIsAUsageErrorWithTheRange(arguments: [String], message: String) async throws {
        let s = try Sandbox()
        let result = try await s.run(["generate"] + arguments + ["--size", "64", "Run a marathon"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(s.badge == nil)
    }

    @Test func chooseWithoutATerminalAsksForPick() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "--seed", "1", "Old promise"]).status == 0)
        let old = try Data(contentsOf: s.store.appendingPathComponent("badge.png"))
        let result = try await s.run(["generate", "--choose", "4", "--size", "64", "Run a marathon"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("not a terminal"), "\(result.stderr)")
        #expect(result.stderr.contains("--pick"), "the hint names --pick: \(result.stderr)")
        #expect(try Data(contentsOf: s.store.appendingPathComponent("badge.png")) == old)
    }
}

/// `generate --choose` with an http backend, through the built binary against the
/// fake image server: one request for the candidates (OpenAI's `n`, checked
/// against the OpenAI schema), and the picked image committed.
@Suite(.threadsOfTheirOwn)
struct RemoteChooseTests {
    /// The fake server's colours for the images of one answer, in order (fake_image_server.py).
    static let colours: [(r: UInt8, g: UInt8, b: UInt8)] = [(200, 40, 90), (40, 160, 90), (40, 90, 200), (230, 180, 40)]

    static func colour(of badge: URL) throws -> Int? {
        let pixel = try GDImage.decodePNG(try Data(contentsOf: badge)).pixel(32, 32)
        return colours.firstIndex { abs(Int($0.r) - Int(pixel.r)) < 4 && abs(Int($0.g) - Int(pixel.g)) < 4 && abs(Int($0.b) - Int(pixel.b)) < 4 }
    }

    @Test func chooseFourPickThreeAsksOnceAndCommitsTheThirdImage() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: RemoteSourceTests.imageServer)
        defer { server.stop() }
        let config = try RemoteSourceTests.config(s, server, ["ok": #""api": "openai", "model": "gpt-image-1""#])
        let result = try await s.run(["generate", "--config", config.path, "--backend", "ok", "--choose", "4", "--pick", "3", "--size", "64",
                                      "--json", "Run a marathon"], extraEnvironment: ["BADGE_E2E_KEY": RemoteSourceTests.key])
        #expect(result.status == 0, "\(result.stderr)")
        let requests = try RemoteSourceTests.received(server, mode: "ok")
        #expect(requests.count == 1, "one request for four images: \(requests.map(\.body))")
        let request = try #require(requests.first)
        #expect(request.path == "/ok/v1/images/generations")
        #expect(request.body["n"] as? Int == 4 && request.body["model"] as? String == "gpt-image-1")
        #expect(request.violations.isEmpty, "\(request.violations)")
        let badge = s.store.appendingPathComponent("badge.png")
        #expect(try Self.colour(of: badge) == 2, "the third image of the answer is the badge")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        let metadata = try #require(try BadgeMetadata.read(from: badge))
        #expect(object["id"] as? String == metadata.id)
        #expect(metadata.backend == "ok" && metadata.prompt == "Run a marathon" && metadata.revisedPrompt == "a revised prompt")
        #expect(!result.stdout.contains(RemoteSourceTests.key) && !result.stderr.contains(RemoteSourceTests.key))
    }

    @Test func aSourcePictureIsEditedIntoSeveralCandidatesInOneRequest() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: RemoteSourceTests.imageServer)
        defer { server.stop() }
        let config = try RemoteSourceTests.config(s, server, ["ok": #""api": "openai""#])
        let result = try await s.run(["generate", "--config", config.path, "--backend", "ok", "--source", RemoteSourceTests.photo.path,
                                      "--choose", "3", "--pick", "2", "--size", "64", "Make it a badge"],
                                     extraEnvironment: ["BADGE_E2E_KEY": RemoteSourceTests.key])
        #expect(result.status == 0, "\(result.stderr)")
        let requests = try RemoteSourceTests.received(server, mode: "ok")
        #expect(requests.count == 1)
        let edit = try #require(requests.first)
        #expect(edit.path == "/ok/v1/images/edits" && edit.body["n"] as? String == "3")
        #expect(edit.violations.isEmpty, "\(edit.violations)")
        #expect(try Self.colour(of: s.store.appendingPathComponent("badge.png")) == 1)
    }

    @Test func pickingAMissingCandidateSaysWhyAndCommitsNothing() async throws {
        let s = try Sandbox()
        let server = try FixtureServer(script: RemoteSourceTests.imageServer)
        defer { server.stop() }
        #expect(try await s.run(["generate", "--size", "64", "--seed", "1", "Old promise"]).status == 0)
        let old = try Data(contentsOf: s.store.appendingPathComponent("badge.png"))
        let config = try RemoteSourceTests.config(s, server, ["short": #""api": "openai""#])
        let result = try await s.run(["generate", "--config", config.path, "--backend", "short", "--choose", "4", "--pick", "4", "--size", "64",
                                      "Run a marathon"], extraEnvironment: ["BADGE_E2E_KEY": RemoteSourceTests.key])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("the backend made 2 of the 4 images asked for"), "\(result.stderr)")
        #expect(try Data(contentsOf: s.store.appendingPathComponent("badge.png")) == old)
    }
}
