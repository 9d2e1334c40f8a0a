import BadgeKit
import BadgeTestSupport
import Foundation
import Testing
@testable import Canvas

/// gd is given PNGs without the chunks it ignores and without interlacing,
/// so libpng has nothing to print; these check the pixels are unchanged.
@Suite(.threadsOfTheirOwn)
struct DecodePreparationTests {
    static let suite = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Data/pngsuite").standardized

    static var interlaced: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: suite.path)) ?? []).filter { $0.hasPrefix("i") && $0.hasSuffix(".png") }.sorted()
    }

    static func pixels(_ image: GDImage) -> [RGBA] {
        (0..<image.height).flatMap { y in (0..<image.width).map { x in image.pixel(x, y) } }
    }

    @Test func theCorpusHasInterlacedImages() {
        #expect(Self.interlaced.count >= 10, "no interlaced PngSuite images under \(Self.suite.path)")
    }

    @Test(arguments: DecodePreparationTests.interlaced)
    func anInterlacedImageDecodesLikeItsPlainTwin(name: String) throws {
        let interlaced = try Data(contentsOf: Self.suite.appendingPathComponent(name))
        let plain = try Data(contentsOf: Self.suite.appendingPathComponent(String(name.dropFirst())))
        let prepared = try PNGForGD.prepare(interlaced, source: name)
        let ihdr = try #require(try PNG.chunks(in: prepared).first)
        #expect(ihdr.data[ihdr.data.startIndex + 12] == 0, "still interlaced")
        #expect(Self.pixels(try GDImage.decodePNG(interlaced)) == Self.pixels(try GDImage.decodePNG(plain)))
    }

    @Test func droppingTheChunksGdIgnoresChangesNoPixel() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.suite.path).filter { $0.hasSuffix(".png") && !$0.hasPrefix("i") }
        #expect(names.count >= 20)
        for name in names {
            let data = try Data(contentsOf: Self.suite.appendingPathComponent(name))
            let asIs = try GDImage.gdDecode(data, format: .png, source: name)
            let prepared = try PNGForGD.prepare(data, source: name)
            #expect(try PNG.chunks(in: prepared).allSatisfy { ["IHDR", "PLTE", "tRNS", "IDAT", "IEND"].contains($0.type) })
            #expect(Self.pixels(try GDImage.gdDecode(prepared, format: .png, source: name)) == Self.pixels(asIs), "\(name)")
        }
    }

    @Test func damagedInterlacedDataIsRefused() throws {
        let data = try Data(contentsOf: Self.suite.appendingPathComponent("ibasn2c08.png"))
        var chunks = try PNG.chunks(in: data)
        let idat = try #require(chunks.firstIndex { $0.type == "IDAT" })
        // Truncated image data, with every CRC valid: only decoding can tell.
        chunks[idat].data = chunks[idat].data.prefix(chunks[idat].data.count / 2)
        let truncated = #expect(throws: BadgeError.self) { _ = try GDImage.decodePNG(PNG.assemble(chunks)) }
        #expect(truncated?.code == .invalidImage)
        #expect(truncated?.message.hasPrefix("the PNG's image data ends before its zlib stream does") == true, "\(String(describing: truncated))")
        #expect(truncated?.hint?.contains("damaged") == true, "\(String(describing: truncated))")
        // A row filter type that does not exist.
        let header = try #require(chunks.first)
        let geometry = Interlaced(width: 32, height: 32, bitsPerPixel: 24)
        let size = Interlaced.passes.map(geometry.passSize).reduce(0) { $0 + $1.height * (1 + geometry.rowBytes($1.width)) }
        let raw = [UInt8](repeating: 7, count: size)
        chunks = [header, PNGChunk(type: "IDAT", data: try zlibStored(raw)), PNGChunk(type: "IEND", data: Data())]
        do {
            _ = try GDImage.decodePNG(PNG.assemble(chunks))
            Issue.record("an unknown filter type must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .invalidImage)
            #expect(error.message.contains("filter"), "\(error.message)")
        }
    }

    /// A zlib stream of stored (uncompressed) blocks.
    private func zlibStored(_ bytes: [UInt8]) throws -> Data {
        var out: [UInt8] = [0x78, 0x01, 1, UInt8(bytes.count & 0xFF), UInt8(bytes.count >> 8), UInt8(~bytes.count & 0xFF), UInt8((~bytes.count >> 8) & 0xFF)]
        out += bytes
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        let adler = b << 16 | a
        out += [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)]
        return Data(out)
    }
}
