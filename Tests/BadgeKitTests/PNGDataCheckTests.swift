import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// Every PNG the pipeline writes is inflated by zlib first, whatever encoder
/// made it and whatever the backend claims: a damaged image never replaces
/// the current badge, and never reaches an --output file.
@Suite(.threadsOfTheirOwn)
struct PNGDataCheckTests {
    let fixture = StoreFixture()
    static let side = 64

    /// An 8-bit RGB PNG of `rows` (filter byte first), with `idat` as its image data and every CRC right.
    static func png(idat: Data, width: Int = side, height: Int = side) -> Data {
        var ihdr = Data()
        for v in [UInt32(width), UInt32(height)] {
            ihdr.append(contentsOf: [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)])
        }
        ihdr.append(contentsOf: [8, 2, 0, 0, 0])
        return PNG.assemble([PNGChunk(type: "IHDR", data: ihdr), PNGChunk(type: "IDAT", data: idat), PNGChunk(type: "IEND", data: Data())])
    }

    static func rows(_ count: Int, filter: UInt8 = 0) -> [UInt8] {
        var raw: [UInt8] = []
        for y in 0..<count {
            raw.append(filter)
            for x in 0..<side { raw += [UInt8(truncatingIfNeeded: x * 4), UInt8(truncatingIfNeeded: y * 4), 128] }
        }
        return raw
    }

    /// A backend that claims its image was drawn in this process (so no full
    /// decode), writing `png`; the request fits it exactly.
    private func commit(_ png: Data, to destination: BadgeDestination? = nil) async throws -> PipelineOutcome {
        try await Pipeline(environment: BadgeEnvironment(variables: [:])).run(
            BadgeRequest(prompt: "Drink more water", size: Self.side, seed: 5),
            backend: BackendInstance(name: "drawn", type: "fake", generator: FakeGenerator(.writes(png), drawnInProcess: true)),
            commitment: .init(timeZone: .gmt), to: destination ?? .store(fixture.store()))
    }

    private func expectRefused(_ png: Data, saying phrase: String) async throws {
        let store = fixture.store()
        _ = try await commit(Self.png(idat: TestPNG.storedZlib(Self.rows(Self.side))))
        let before = try Data(contentsOf: store.badgeURL)
        let history = try store.history().map(\.metadata.id)
        await #expect {
            _ = try await commit(png)
        } throws: { error in
            guard let error = error as? BadgeError else { return false }
            return error.code == .invalidImage && error.message.contains(phrase)
        }
        #expect(try Data(contentsOf: store.badgeURL) == before)
        #expect(try store.history().map(\.metadata.id) == history)
        #expect(store.temporaryFiles().isEmpty)
    }

    @Test func aCorruptedDeflateStreamIsRefusedBeforeCommitAndTheOldBadgeIsKept() async throws {
        var idat = [UInt8](TestPNG.storedZlib(Self.rows(Self.side)))
        // The first stored block's length and its complement no longer agree.
        idat[5] ^= 0x01
        let png = Self.png(idat: Data(idat))
        #expect(throws: Never.self) { try PNG.chunks(in: png, verifyCRC: true) }
        try await expectRefused(png, saying: "not a valid zlib stream")
    }

    @Test func imageDataShortOfItsHeaderIsRefused() async throws {
        try await expectRefused(Self.png(idat: TestPNG.storedZlib(Self.rows(Self.side - 1))), saying: "promises")
    }

    @Test func imageDataBeyondItsHeaderIsRefused() async throws {
        try await expectRefused(Self.png(idat: TestPNG.storedZlib(Self.rows(Self.side + 1))), saying: "more than")
    }

    @Test func anUnknownRowFilterIsRefused() async throws {
        try await expectRefused(Self.png(idat: TestPNG.storedZlib(Self.rows(Self.side, filter: 7))), saying: "filter type 7")
    }

    @Test func aDamagedImageNeverReachesAnOutputFile() async throws {
        let target = fixture.directory.appendingPathComponent("preview.png")
        try FileManager.default.createDirectory(at: fixture.directory, withIntermediateDirectories: true)
        var idat = [UInt8](TestPNG.storedZlib(Self.rows(Self.side)))
        idat[idat.count - 1] ^= 0xFF  // the Adler-32
        let error = await #expect(throws: BadgeError.self) { _ = try await commit(Self.png(idat: Data(idat)), to: .file(target)) }
        #expect(error?.code == .invalidImage, "\(String(describing: error))")
        #expect(error?.message.hasPrefix("the PNG's image data is not a valid zlib stream (incorrect data check") == true,
                "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: target.path))
        let contents = try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path)
        #expect(contents.isEmpty, "left behind: \(contents)")
    }

    @Test func aSoundImageIsWrittenWithItsMetadata() async throws {
        let outcome = try await commit(Self.png(idat: TestPNG.storedZlib(Self.rows(Self.side))))
        #expect(outcome.metadata.size == Self.side)
        #expect(try fixture.store().current()?.metadata.id == outcome.metadata.id)
    }
}
