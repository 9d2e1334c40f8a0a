import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import CDeflate
import CLibdeflate
import CZlib
import Canvas
import Foundation
import Testing

/// badge's own deflate (levels 1–2): every stream it writes must inflate, with
/// zlib, to exactly what went in, whether it was compressed whole or in bands
/// joined afterwards.
@Suite(.threadsOfTheirOwn) struct DeflateTests {
    enum Input: String, CaseIterable {
        case empty, oneByte, noise, zeros, pixelRuns, rowRepeats, mixed, shortTail

        func bytes() -> [UInt8] {
            switch self {
            case .empty: return []
            case .oneByte: return [42]
            case .noise:
                var random = SeededRandom.forTest("DeflateTests input noise")
                return (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &random) }
            case .zeros: return [UInt8](repeating: 0, count: 300_000)
            // RGBA runs of one colour, then another: matches at distance 4.
            case .pixelRuns: return (0..<400_000).map { i in UInt8(truncatingIfNeeded: (i / 4 / 37) &* 7 &+ i % 4) }
            // Rows that repeat the row above: matches 4097 bytes back.
            case .rowRepeats: return (0..<300_000).map { i in UInt8(truncatingIfNeeded: (i % 4097) &* 31 / 5) }
            // Stretches of noise between repeats: blocks stored and blocks coded.
            case .mixed:
                var random = SeededRandom.forTest("DeflateTests input mixed")
                var bytes: [UInt8] = []
                while bytes.count < 1_100_000 {
                    bytes += (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &random) }
                    bytes += [UInt8](repeating: UInt8.random(in: 0...255, using: &random), count: 90_000)
                }
                return bytes
            case .shortTail: return [1, 2, 3, 1, 2, 3, 1, 2]
            }
        }
    }

    /// Compresses `bytes` in `bands` bands, each with up to 32 KB of what came
    /// before as its history, and joins them as PNGEncoder does.
    static func deflate(_ bytes: [UInt8], bands: Int) -> [UInt8] {
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: badge_deflate_scratch_size(), alignment: 64)
        defer { scratch.deallocate() }
        var stream: [UInt8] = []
        for k in 0..<bands {
            let start = bytes.count * k / bands, end = bytes.count * (k + 1) / bands
            let history = min(start, 32768 + 100)
            let capacity = badge_deflate_bound(end - start)
            var out = [UInt8](repeating: 0, count: capacity)
            let written = bytes.withUnsafeBufferPointer { input in
                out.withUnsafeMutableBufferPointer { out in
                    badge_deflate(input.baseAddress.map { $0 + start - history }, history, end - start, k == bands - 1 ? 1 : 0,
                                  out.baseAddress, capacity, scratch)
                }
            }
            #expect(written > 0 && written <= capacity)
            stream += out[0..<written]
        }
        return stream
    }

    static func inflate(_ stream: [UInt8], expecting count: Int) throws -> [UInt8] {
        var z = z_stream()
        #expect(inflateInit2_(&z, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        defer { inflateEnd(&z) }
        var out = [UInt8](repeating: 0, count: count + 1)
        var input = stream
        let status = input.withUnsafeMutableBufferPointer { input in
            out.withUnsafeMutableBufferPointer { out in
                z.next_in = input.baseAddress
                z.avail_in = uInt(input.count)
                z.next_out = out.baseAddress
                z.avail_out = uInt(out.count)
                return CZlib.inflate(&z, Z_FINISH)
            }
        }
        #expect(status == Z_STREAM_END, "inflate: \(status)")
        #expect(z.avail_in == 0, "bytes left after the end of the stream")
        return Array(out[0..<Int(z.total_out)])
    }

    @Test(arguments: Input.allCases, [1, 3])
    func whatItWritesInflatesToWhatWentIn(_ input: Input, bands: Int) throws {
        let bytes = input.bytes()
        let stream = Self.deflate(bytes, bands: bands)
        #expect(try Self.inflate(stream, expecting: bytes.count) == bytes)
        switch input {
        case .zeros, .pixelRuns, .rowRepeats:
            #expect(stream.count * 20 < bytes.count, "\(input): \(stream.count) bytes for \(bytes.count)")
        case .noise:
            // Incompressible: stored, a few bytes a block more than the input.
            #expect(stream.count <= bytes.count + bytes.count / 2048 + 64)
        default: break
        }
    }

    @Test func tooSmallABufferIsRefusedNotOverrun() {
        let bytes = [UInt8](repeating: 7, count: 1000)
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: badge_deflate_scratch_size(), alignment: 64)
        defer { scratch.deallocate() }
        var out = [UInt8](repeating: 0, count: 16)
        let written = out.withUnsafeMutableBufferPointer { out in
            badge_deflate(bytes, 0, bytes.count, 1, out.baseAddress, out.count, scratch)
        }
        #expect(written == 0)
    }

    /// A canvas big enough for four bands, with gradients, transparency and a
    /// noisy patch, encoded at badge's levels and zlib's and with both filters:
    /// every file decodes, by zlib and the PNG filters alone, to the canvas.
    /// A PNG compressed band by band in any order, on a promise of its colour
    /// type, is the file `PNGEncoder.encode` writes; a wrong promise (RGB for
    /// a picture with a translucent pixel, RGBA for an opaque one) is caught
    /// and the picture encoded again, to the same bytes.
    @Test(arguments: [true, false])
    func bandsInAnyOrderAndAnyPromiseGiveTheEncodersBytes(opaquePicture: Bool) throws {
        let canvas = try Canvas(width: 700, height: 650, background: RGBA(30, 60, 90))
        canvas.fill(.circle(center: Point(350, 325), radius: 300), with: .radial(
            center: Point(300, 280), radius: 340, stops: [(0, RGBA(250, 210, 40)), (1, RGBA(120, 20, 160))]))
        if !opaquePicture { canvas.withMutablePixels { $0[(400 * 700 + 123) * 4 + 3] = 200 } }
        let expected = try PNGEncoder.encode(canvas, level: 2, filter: .none)
        for promise in [true, false] {
            let job = BandedPNG(canvas, level: 2, filter: .none, opaque: promise)
            #expect(job.count > 3)
            for k in (0..<job.count).reversed() { job.compress(k) }
            #expect(try job.finish() == expected, "promised opaque: \(promise)")
        }
        let ihdr = try #require(try PNG.chunks(in: expected).first)
        #expect(ihdr.data[ihdr.data.startIndex + 9] == (opaquePicture ? 2 : 6), "RGB only when every pixel is opaque")
    }

    /// The Adler-32 that the encoder sums its rows with (libdeflate's) is
    /// zlib's, whatever the length (under and over vector steps and the
    /// rounds between reductions), the starting value, and the bytes (all
    /// 255, the largest sums).
    @Test func adler32IsZlibs() {
        var random = SeededRandom.forTest("DeflateTests.adler32IsZlibs")
        let noise = (0..<300_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        let full = [UInt8](repeating: 255, count: 300_000)
        let lengths = [0, 1, 31, 32, 33, 4095, 4096, 4097, 5552, 5553, 70_001, 299_000]
        for bytes in [noise, full] {
            for length in lengths {
                for start: UInt32 in [1, 0xFFF0_FFF0, UInt32.random(in: 0...65520, using: &random) << 16 | UInt32.random(in: 0...65520, using: &random)] {
                    let offset = Int.random(in: 0...999, using: &random)
                    let ours = bytes.withUnsafeBufferPointer { libdeflate_adler32(start, $0.baseAddress! + offset, length) }
                    let zlibs = bytes.withUnsafeBufferPointer { adler32(uLong(start), $0.baseAddress! + offset, uInt(length)) }
                    #expect(uLong(ours) == zlibs, "length \(length), start \(start), offset \(offset), seed \(random.seed)")
                }
            }
        }
    }

    /// The CRC-32 that PNG chunks are written and checked with (libdeflate's)
    /// is zlib's, for any length, alignment and split of the bytes.
    @Test func crc32IsZlibs() {
        var random = SeededRandom.forTest("DeflateTests.crc32IsZlibs")
        let noise = (0..<600_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        let full = [UInt8](repeating: 255, count: 600_000)
        let lengths = [0, 1, 7, 8, 15, 16, 17, 63, 64, 65, 255, 256, 4097, 70_001, 490_348]
        for bytes in [noise, full] {
            for length in lengths {
                let offset = Int.random(in: 0...999, using: &random)
                let piece = Data(bytes[offset..<(offset + length)])
                let split = Int.random(in: 0...length, using: &random)
                let zlibs = bytes.withUnsafeBufferPointer { crc32(0, $0.baseAddress! + offset, uInt(length)) }
                #expect(uLong(CRC32.checksum(piece)) == zlibs, "length \(length), offset \(offset), seed \(random.seed)")
                #expect(uLong(CRC32.checksum(piece.prefix(split), piece.dropFirst(split))) == zlibs, "split at \(split) of \(length)")
            }
        }
    }

    @Test func everyLevelAndFilterEncodesTheSamePixels() throws {
        let canvas = try Canvas(width: 1100, height: 1000)
        canvas.fill(.circle(center: Point(550, 500), radius: 480), with: .radial(
            center: Point(500, 420), radius: 520, stops: [(0, RGBA(250, 210, 40)), (1, RGBA(120, 20, 160))]))
        canvas.fill(.roundedRect(x: 100, y: 700, width: 900, height: 120, radius: 30), with: .linear(
            start: Point(100, 0), end: Point(1000, 0), stops: [(0, RGBA(0, 90, 200, 180)), (1, RGBA(0, 200, 90, 60))]))
        canvas.withMutablePixels { pixels in
            var random = SeededRandom.forTest("DeflateTests.everyLevelAndFilterEncodesTheSamePixels")
            for y in 40..<90 { for x in 40..<200 { pixels[(y * 1100 + x) * 4 + Int.random(in: 0...3, using: &random)] = .random(in: 0...255, using: &random) } }
        }
        let expected = canvas.pixels.withUnsafeBufferPointer { Array($0) }
        for filter in [PNGEncoder.Filter.none, .up] {
            for level in [1, 2, 6] {
                let png = try PNGEncoder.encode(canvas, level: level, filter: filter)
                let decoded = try Self.decodeRGBA(png, width: 1100, height: 1000)
                #expect(decoded == expected, "level \(level), filter \(filter)")
            }
        }
    }

    /// The pixels of an RGBA PNG written with filter None or Up.
    static func decodeRGBA(_ png: Data, width: Int, height: Int) throws -> [UInt8] {
        let chunks = try PNG.chunks(in: png)
        let zlibStream = chunks.filter { $0.type == "IDAT" }.reduce(into: [UInt8]()) { $0 += $1.data }
        #expect(zlibStream.count > 6)
        let stride = width * 4 + 1
        let rows = try inflate(Array(zlibStream.dropFirst(2).dropLast(4)), expecting: stride * height)
        #expect(rows.count == stride * height)
        let adler = rows.withUnsafeBufferPointer { adler32(adler32(0, nil, 0), $0.baseAddress, uInt($0.count)) }
        #expect(Array(zlibStream.suffix(4)) == [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: adler >> $0) }, "the stream's Adler-32")
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            let filter = rows[y * stride]
            for i in 0..<(width * 4) {
                let raw = rows[y * stride + 1 + i]
                let above = y > 0 && filter == 2 ? pixels[(y - 1) * width * 4 + i] : 0
                pixels[y * width * 4 + i] = raw &+ above
            }
        }
        return pixels
    }
}
