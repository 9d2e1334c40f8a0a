import BadgeKit
import CZlib
import Foundation

/// Rewrites a PNG the intake has passed into the form gd reads quietly.
/// libpng prints its warnings straight to stderr (gd gives it no warning
/// handler, so the shim's counter never sees them): about malformed or
/// misplaced ancillary chunks, and, for every interlaced PNG, because gd
/// 2.3.3 reads without turning interlace handling on. So gd gets only the
/// chunks it uses (IHDR, PLTE, tRNS, IDAT, IEND; unknown critical chunks are
/// kept so they are still refused), and Adam7 interlacing is undone here.
/// The pixels gd decodes are unchanged (tested against the PngSuite pairs).
///
/// First the image data is inflated by `PNGDataCheck`, which stops at the
/// first byte past what the header promises: libpng inflates all of it,
/// however much more there is (a 20 MB PNG of 256×256 pixels whose IDAT holds
/// 20 GB of zeros kept it busy for a minute, deaf to time limits and Ctrl-C).
enum PNGForGD {
    static func prepare(_ data: Data, source: String?) throws -> Data {
        do {
            try PNGDataCheck.verify(data)
        } catch var error as BadgeError {
            error.path = source
            error.hint = "the PNG's image data is damaged, or built to keep a decoder busy; export the picture again"
            throw error
        }
        let chunks = try PNG.chunks(in: data, verifyCRC: false)
        guard let ihdr = chunks.first, ihdr.type == "IHDR", ihdr.data.count == 13 else { return data }
        var kept = chunks.filter { $0.isCritical || $0.type == "tRNS" }
        let header = [UInt8](ihdr.data)
        guard header[12] == 1 else { return PNG.assemble(kept) }
        func uint32(_ i: Int) -> Int { header[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) } }
        let image = Interlaced(width: uint32(0), height: uint32(4), bitsPerPixel: Int(header[8]) * Interlaced.channels(colorType: header[9]))
        let compressed = chunks.filter { $0.type == "IDAT" }.reduce(into: Data()) { $0.append($1.data) }
        let progressive = try image.deinterlace(compressed, source: source)
        var flat = header
        flat[12] = 0
        kept[0] = PNGChunk(type: "IHDR", data: Data(flat))
        let firstData = kept.firstIndex { $0.type == "IDAT" } ?? kept.count - 1
        kept.removeAll { $0.type == "IDAT" }
        kept.insert(PNGChunk(type: "IDAT", data: progressive), at: min(firstData, kept.count - 1))
        return PNG.assemble(kept)
    }
}

/// The geometry of an Adam7-interlaced PNG and the undoing of it.
struct Interlaced {
    let width: Int
    let height: Int
    let bitsPerPixel: Int

    static func channels(colorType: UInt8) -> Int {
        switch colorType {
        case 2: 3
        case 4: 2
        case 6: 4
        default: 1
        }
    }

    /// Adam7's seven passes: first column and row, column and row step.
    static let passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]

    func rowBytes(_ pixels: Int) -> Int { (pixels * bitsPerPixel + 7) / 8 }

    func passSize(_ pass: (Int, Int, Int, Int)) -> (width: Int, height: Int) {
        let w = width > pass.0 ? (width - pass.0 + pass.2 - 1) / pass.2 : 0
        let h = height > pass.1 ? (height - pass.1 + pass.3 - 1) / pass.3 : 0
        return (w, h)
    }

    /// The image data (zlib stream of seven passes of filtered rows) in
    /// row order, each row with filter type 0 and deflated again.
    func deinterlace(_ compressed: Data, source: String?) throws -> Data {
        var expected = 0
        for pass in Self.passes {
            let (w, h) = passSize(pass)
            if w > 0 && h > 0 { expected += h * (1 + rowBytes(w)) }
        }
        let raw = try inflate(compressed, expected: expected, source: source)
        let stride = rowBytes(width)
        var image = [UInt8](repeating: 0, count: height * stride)
        let bytesPerPixel = max(1, bitsPerPixel / 8)
        var offset = 0
        for pass in Self.passes {
            let (w, h) = passSize(pass)
            guard w > 0 && h > 0 else { continue }
            let length = rowBytes(w)
            var previous = [UInt8](repeating: 0, count: length)
            var row = [UInt8](repeating: 0, count: length)
            for r in 0..<h {
                let filter = raw[offset]
                for k in 0..<length { row[k] = raw[offset + 1 + k] }
                offset += 1 + length
                guard Self.unfilter(&row, previous: previous, type: filter, bytesPerPixel: bytesPerPixel) else {
                    throw BadgeError(.invalidImage, "the PNG's image data uses an unknown row filter (\(filter))", path: source,
                                     hint: "the file is corrupt; export it again")
                }
                let y = pass.1 + r * pass.3
                for c in 0..<w { copyPixel(from: row, at: c, to: &image, row: y, column: pass.0 + c * pass.2) }
                swap(&row, &previous)
            }
        }
        let deflater = try Deflater(level: 1)
        var line = [UInt8](repeating: 0, count: stride + 1)
        for y in 0..<height {
            for k in 0..<stride { line[k + 1] = image[y * stride + k] }
            try deflater.add(line, finish: y == height - 1)
        }
        return deflater.output
    }

    @inline(__always)
    private func copyPixel(from row: [UInt8], at c: Int, to image: inout [UInt8], row y: Int, column x: Int) {
        let stride = rowBytes(width)
        if bitsPerPixel >= 8 {
            let n = bitsPerPixel / 8
            for k in 0..<n { image[y * stride + x * n + k] = row[c * n + k] }
        } else {
            // 1, 2 or 4 bits a pixel, most significant first.
            let mask = UInt8((1 << bitsPerPixel) - 1)
            let sourceBit = c * bitsPerPixel, targetBit = x * bitsPerPixel
            let value = row[sourceBit / 8] >> UInt8(8 - bitsPerPixel - sourceBit % 8) & mask
            let shift = UInt8(8 - bitsPerPixel - targetBit % 8)
            let i = y * stride + targetBit / 8
            image[i] = image[i] & ~(mask << shift) | value << shift
        }
    }

    /// Reverses PNG filter `type` in place; false for an unknown type.
    static func unfilter(_ row: inout [UInt8], previous: [UInt8], type: UInt8, bytesPerPixel bpp: Int) -> Bool {
        switch type {
        case 0: return true
        case 1: for i in bpp..<max(bpp, row.count) { row[i] &+= row[i - bpp] }
        case 2: for i in 0..<row.count { row[i] &+= previous[i] }
        case 3:
            for i in 0..<row.count {
                let left = i >= bpp ? Int(row[i - bpp]) : 0
                row[i] &+= UInt8((left + Int(previous[i])) / 2)
            }
        case 4:
            for i in 0..<row.count {
                let a = i >= bpp ? Int(row[i - bpp]) : 0, b = Int(previous[i]), c = i >= bpp ? Int(previous[i - bpp]) : 0
                let p = a + b - c
                let pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                row[i] &+= UInt8(pa <= pb && pa <= pc ? a : pb <= pc ? b : c)
            }
        default: return false
        }
        return true
    }

    /// Exactly `expected` bytes from a zlib stream; anything shorter or
    /// damaged is refused. Extra data after them is ignored, as libpng does.
    private func inflate(_ compressed: Data, expected: Int, source: String?) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: max(expected, 1))
        var length = uLongf(expected)
        let status = compressed.withUnsafeBytes { src in
            output.withUnsafeMutableBufferPointer { dst in
                uncompress(dst.baseAddress, &length, src.bindMemory(to: Bytef.self).baseAddress, uLong(src.count))
            }
        }
        guard (status == Z_OK || status == Z_BUF_ERROR) && Int(length) == expected else {
            throw BadgeError(.invalidImage, "the PNG's image data is corrupt or truncated", path: source,
                             hint: "the image data is damaged; export it again")
        }
        return output
    }
}
