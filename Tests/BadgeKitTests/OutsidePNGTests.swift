import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// Issue #31: a PNG that badge did not draw, at exactly the size asked for,
/// was committed byte for byte: an APNG's frames, a server's tEXt (ComfyUI's
/// whole workflow, the upload's file name in it) and a 64 MB zTXt bomb
/// reached badge.png. Now only IHDR, PLTE, tRNS, IDAT and IEND come in.
@Suite(.threadsOfTheirOwn)
struct OutsidePNGTests {
    let fixture = StoreFixture()
    static let side = HostilePNG.side
    static let still = HostilePNG.still

    @Test(arguments: HostilePNG.names)
    func onlyTheStillImagesChunksAreCommitted(name: String) async throws {
        let png = try HostilePNG.make(name)
        #expect(try ImageIntake().inspect(png).width == Self.side, "\(name) is at exactly the requested size")
        let environment = BadgeEnvironment(now: { Date(timeIntervalSince1970: 1_790_000_000) }, variables: [:])
        let outcome = try await Pipeline(environment: environment).run(
            BadgeRequest(prompt: "from outside", size: Self.side, seed: 1),
            backend: BackendInstance(name: "server", type: "fake", generator: FakeGenerator(.writes(png))),
            commitment: .init(timeZone: .gmt), to: .store(fixture.store()))
        let committed = try Data(contentsOf: fixture.store().badgeURL)
        let types = try PNG.chunks(in: committed).map(\.type)
        #expect(types.filter { $0 != "iTXt" } == ["IHDR", "IDAT", "IEND"], "\(name): \(types)")
        #expect(committed.count < 64 << 10, "\(name): \(committed.count) bytes")
        #expect(!committed.contains(Data("holiday".utf8)) && !committed.contains(Data("planted".utf8)))
        // The pixels are the still image's, the same compressed bytes.
        let idat = { (data: Data) in try PNG.chunks(in: data).filter { $0.type == "IDAT" }.map(\.data) }
        #expect(try idat(committed) == idat(Self.still))
        #expect(outcome.metadata.prompt == "from outside")
        #expect(BadgeMetadata.isValidID(outcome.metadata.id))
    }

    @Test func aCleanPNGIsKeptAsItIs() throws {
        #expect(try PNG.stillImage(Self.still) == Self.still)
        let cut = try PNG.stillImage(try HostilePNG.apng())
        #expect(try PNG.chunks(in: cut).map(\.type) == ["IHDR", "IDAT", "IEND"])
    }
}
