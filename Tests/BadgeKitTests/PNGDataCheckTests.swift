import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// Every PNG the pipeline writes is inflated first (zlib, or libdeflate band
/// by band for one this process encoded), whatever encoder
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

    /// The rows for a damage that lies in the rows themselves: a row short,
    /// a row more, or an unknown filter type; otherwise the image's rows.
    static func rows(for damage: String) -> [UInt8] {
        rows(side + (damage == "a row short" ? -1 : damage == "a row more" ? 1 : 0), filter: damage == "filter type 7" ? 7 : 0)
    }

    /// A backend that claims its image was drawn in this process (so no full
    /// decode), writing `png`; the request fits it exactly.
    private func commit(_ png: Data, to destination: BadgeDestination? = nil) async throws -> PipelineOutcome {
        try await Pipeline(environment: BadgeEnvironment(variables: [:])).run(
            BadgeRequest(prompt: "Drink more water", size: Self.side, seed: 5),
            backend: BackendInstance(name: "drawn", type: "fake", generator: FakeGenerator(.writes(png), encodedInProcess: true)),
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

    /// `idat` cut into `parts` pieces (the last may be longer).
    static func pieces(_ idat: Data, _ parts: Int) -> [Data] {
        let size = idat.count / parts, start = idat.startIndex
        return (0..<parts).map { k in idat.subdata(in: (start + k * size)..<(start + (k == parts - 1 ? idat.count : (k + 1) * size))) }
    }

    /// One band of an image's data as the encoder makes it: raw deflate
    /// (here stored blocks) of whole rows, `final` ending the stream.
    struct Band {
        var deflated: Data
        var rows: [UInt8]
        var window: [UInt8]
    }

    /// `rows` (of `side` RGB pixels) in `count` bands of stored blocks, the
    /// last final, each with the rows before it as its window; and the zlib
    /// header and Adler-32 of the stream they join into.
    static func bands(_ rows: [UInt8], count: Int) -> (header: Data, bands: [Band], trailer: Data) {
        let rowLength = 1 + side * 3, total = rows.count / rowLength
        let whole = TestPNG.storedZlib(rows)
        var bands: [Band] = []
        for k in 0..<count {
            let from = total * k / count * rowLength, to = total * (k + 1) / count * rowLength
            var deflated = Data()
            var offset = from
            repeat {
                let n = min(65535, to - offset)
                deflated.append(k == count - 1 && offset + n == to ? 1 : 0)
                deflated.append(contentsOf: [UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)])
                deflated.append(contentsOf: rows[offset..<(offset + n)])
                offset += n
            } while offset < to
            bands.append(Band(deflated: deflated, rows: Array(rows[from..<to]), window: Array(rows[max(0, from - 32768)..<from])))
        }
        return (whole.prefix(2), bands, whole.suffix(4))
    }

    /// The banded check of `bands`, each band on its own, in `order`.
    static func checked(
        _ parts: (header: Data, bands: [Band], trailer: Data), order: [Int]? = nil, width: Int = side, height: Int = side
    ) throws -> PNGDataCheck.Inflated {
        let check = PNGDataCheck.Bands(width: width, height: height, channels: 3, count: parts.bands.count)
        for k in order ?? Array(parts.bands.indices.reversed()) {
            let band = parts.bands[k]
            band.window.withUnsafeBytes { window in
                band.rows.withUnsafeBytes { rows in check.check(k, deflated: band.deflated, window: window, rows: rows) }
            }
        }
        return try check.finish(zlibHeader: parts.header, trailer: parts.trailer)
    }

    /// The image data the bands join into.
    static func joined(_ parts: (header: Data, bands: [Band], trailer: Data)) -> Data {
        parts.bands.reduce(parts.header) { $0 + $1.deflated } + parts.trailer
    }

    @Test func theBandedCheckVouchesOnlyForTheBytesItInflated() throws {
        let parts = Self.bands(Self.rows(Self.side), count: 3)
        let proof = try Self.checked(parts)
        let idat = Self.joined(parts)
        let png = Self.png(idat: idat)
        try PNGDataCheck.verify(png)
        #expect(proof.vouches(for: png))
        // Stamped, and with the image data split into other chunks: the same bytes.
        let stamped = try BadgeMetadata(commitmentDate: Date(), timeZone: "GMT", createdAt: Date(), prompt: "Drink more water", backend: "drawn",
                                         backendType: "fake", size: Self.side).stamp(into: png)
        #expect(proof.vouches(for: stamped))
        let split = PNG.assemble(try PNG.chunks(in: png).flatMap { chunk in
            chunk.type != "IDAT" ? [chunk] : Self.pieces(chunk.data, 4).map { PNGChunk(type: "IDAT", data: $0) }
        })
        #expect(proof.vouches(for: split))

        // Another image's bytes, one byte changed, a byte short, a byte more, another size, an animation.
        #expect(!proof.vouches(for: Self.png(idat: TestPNG.storedZlib(Self.rows(Self.side, filter: 2)))))
        var changed = [UInt8](idat)
        changed[100] ^= 0x01
        #expect(!proof.vouches(for: Self.png(idat: Data(changed))))
        #expect(!proof.vouches(for: Self.png(idat: idat.dropLast())))
        #expect(!proof.vouches(for: Self.png(idat: idat + [0])))
        #expect(!proof.vouches(for: Self.png(idat: idat, width: Self.side, height: Self.side + 1)))
        var chunks = try PNG.chunks(in: png)
        chunks.insert(PNGChunk(type: "fcTL", data: Data(count: 26)), at: 1)
        #expect(!proof.vouches(for: PNG.assemble(chunks)))
        #expect(!proof.vouches(for: Data("not a png".utf8)))
    }

    @Test(arguments: [
        ("a row short", "holds 12159 bytes where its header promises 12352"),
        ("a row more", "holds 12545 bytes where its header promises 12352"),
        ("filter type 7", "filter type 7"),
        ("a stored block's length damaged", "not a valid zlib stream"),
        ("a byte of a row changed", "band 2 of the image data does not inflate to the rows it was made from"),
        ("a band cut short", "band 2 of the image data does not inflate, or does not end where a block ends on a byte boundary"),
        ("a band ends between two bytes", "band 2 of the image data does not inflate, or does not end where a block ends on a byte boundary"),
        ("a band before the last ends the stream", "band 1 of the image data ends the zlib stream before the image's last band"),
        ("the last band does not end the stream", "band 3 of the image data, the last, does not inflate, or does not end it"),
        ("a band not checked", "band 2 of 3 of the image data was not checked"),
        ("the Adler-32 damaged", "incorrect data check"),
        ("the zlib header damaged", "does not start with a zlib header"),
    ])
    func theBandedCheckRefusesADamagedBand(damage: String, saying phrase: String) throws {
        let rows = Self.rows(for: damage)
        var parts = Self.bands(rows, count: 3)
        var order = [2, 0, 1]
        switch damage {
        case "a stored block's length damaged": parts.bands[1].deflated[parts.bands[1].deflated.startIndex + 1] ^= 0x01
        case "a byte of a row changed": parts.bands[1].rows[50] ^= 0x01
        case "a band cut short": parts.bands[1].deflated.removeLast(10)
        // An empty fixed-Huffman block after the rows: 3 bits of header and 7 of
        // end-of-block, so the band stops 2 bits into its last byte.
        case "a band ends between two bytes": parts.bands[1].deflated.append(contentsOf: [0x02, 0x00])
        case "a band before the last ends the stream": parts.bands[0].deflated[parts.bands[0].deflated.startIndex] = 1
        case "the last band does not end the stream": parts.bands[2].deflated[parts.bands[2].deflated.startIndex] = 0
        case "a band not checked": order = [0, 2]
        case "the Adler-32 damaged": parts.trailer[parts.trailer.startIndex + 3] ^= 0xFF
        case "the zlib header damaged": parts.header = Data([0x78, 0x02])
        default: break
        }
        let error = #expect(throws: BadgeError.self) { try Self.checked(parts, order: order) }
        #expect(error?.code == .invalidImage)
        #expect(error?.message.contains(phrase) == true, "\(String(describing: error))")
    }

    @Test(arguments: [
        ("a row short", "holds 12159 bytes where its header promises 12352"),
        ("a row more", "more than the 12352 bytes"),
        ("filter type 7", "filter type 7"),
        ("a stored block's length damaged", "not a valid zlib stream"),
        ("cut short", "ends before its zlib stream does"),
        ("bytes after its end", "after the end of its zlib stream"),
    ])
    func verifyRefusesDamagedImageData(damage: String, saying phrase: String) throws {
        let rows = Self.rows(for: damage)
        var idat = [UInt8](TestPNG.storedZlib(rows))
        if damage == "a stored block's length damaged" { idat[5] ^= 0x01 }
        if damage == "cut short" { idat.removeLast(idat.count / 2) }
        if damage == "bytes after its end" { idat.append(0x78) }
        let error = #expect(throws: BadgeError.self) { try PNGDataCheck.verify(Self.png(idat: Data(idat))) }
        #expect(error?.code == .invalidImage)
        #expect(error?.message.contains(phrase) == true, "\(String(describing: error))")
    }

    /// A drawn image whose bytes are not the ones its encoder's check
    /// inflated (changed in the workspace after the check) is inflated in
    /// full where it is stamped, and refused; the old badge stays.
    @Test func bytesOtherThanTheCheckedOnesAreInflatedInFullAndRefused() async throws {
        let parts = Self.bands(Self.rows(Self.side), count: 2)
        let sound = Self.joined(parts)
        let proof = try Self.checked(parts)
        var damaged = [UInt8](sound)
        damaged[damaged.count - 1] ^= 0xFF  // the Adler-32
        let store = fixture.store()
        _ = try await commit(Self.png(idat: sound))
        let before = try Data(contentsOf: store.badgeURL)
        let generator = ProvenGenerator(png: Self.png(idat: Data(damaged)), inflated: proof)
        let error = await #expect(throws: BadgeError.self) {
            _ = try await Pipeline(environment: BadgeEnvironment(variables: [:])).run(
                BadgeRequest(prompt: "Drink more water", size: Self.side, seed: 5),
                backend: BackendInstance(name: "drawn", type: "fake", generator: generator),
                commitment: .init(timeZone: .gmt), to: .store(store))
        }
        #expect(error?.code == .invalidImage)
        #expect(error?.message.contains("incorrect data check") == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: store.badgeURL) == before)

        // With the very bytes it inflated, the badge is committed.
        let outcome = try await Pipeline(environment: BadgeEnvironment(variables: [:])).run(
            BadgeRequest(prompt: "Drink more water", size: Self.side, seed: 5),
            backend: BackendInstance(name: "drawn", type: "fake", generator: ProvenGenerator(png: Self.png(idat: sound), inflated: proof)),
            commitment: .init(timeZone: .gmt), to: .store(store))
        #expect(try store.current()?.metadata.id == outcome.metadata.id)
        try PNGDataCheck.verify(try Data(contentsOf: store.badgeURL))
    }

    @Test func aSoundImageIsWrittenWithItsMetadata() async throws {
        let outcome = try await commit(Self.png(idat: TestPNG.storedZlib(Self.rows(Self.side))))
        #expect(outcome.metadata.size == Self.side)
        #expect(try fixture.store().current()?.metadata.id == outcome.metadata.id)
    }
}

/// A backend that draws in this process and hands on the proof of its
/// encoder's check, as the procedural backend does: here, of any bytes.
private struct ProvenGenerator: BadgeGenerator {
    let png: Data
    let inflated: PNGDataCheck.Inflated

    func availability() async -> Availability { .available }

    func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
        let file = workspace.file("drawn.png")
        try png.write(to: file)
        return GeneratedImage(encodedInProcess: file, model: "proven", inflated: inflated)
    }
}
