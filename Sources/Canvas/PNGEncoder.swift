import BadgeKit
import CZlib
import Foundation

/// Encodes a Canvas as PNG straight from its buffer with zlib: no copy into a
/// gd image, RGB when every pixel is opaque, and the "Up" filter, which keeps
/// dithered gradients compressible (measured against None and Sub).
public enum PNGEncoder {
    public static func encode(_ canvas: Canvas, level: Int = 3) throws -> Data {
        let opaque = canvas.pixels.withUnsafeBufferPointer { px in
            stride(from: 3, to: px.count, by: 4).allSatisfy { px[$0] == 255 }
        }
        let channels = opaque ? 3 : 4
        let rowBytes = canvas.width * channels
        // Rows are filtered and deflated one at a time: no second full-size buffer.
        let deflater = try Deflater(level: level)
        var previous = [UInt8](repeating: 0, count: rowBytes)
        var current = [UInt8](repeating: 0, count: rowBytes)
        var filtered = [UInt8](repeating: 0, count: rowBytes + 1)
        filtered[0] = 2  // Up
        try canvas.pixels.withUnsafeBufferPointer { px in
            for y in 0..<canvas.height {
                var o = 0
                var i = y * canvas.width * 4
                for _ in 0..<canvas.width {
                    current[o] = px[i]
                    current[o + 1] = px[i + 1]
                    current[o + 2] = px[i + 2]
                    if channels == 4 { current[o + 3] = px[i + 3] }
                    o += channels
                    i += 4
                }
                for k in 0..<rowBytes { filtered[k + 1] = current[k] &- previous[k] }
                try deflater.add(filtered, finish: y == canvas.height - 1)
                swap(&previous, &current)
            }
        }
        var ihdr = Data()
        for v in [UInt32(canvas.width), UInt32(canvas.height)] {
            ihdr.append(contentsOf: [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)])
        }
        ihdr.append(contentsOf: [8, opaque ? 2 : 6, 0, 0, 0])
        return PNG.assemble([
            PNGChunk(type: "IHDR", data: ihdr),
            PNGChunk(type: "IDAT", data: deflater.output),
            PNGChunk(type: "IEND", data: Data()),
        ])
    }

}

/// A zlib stream fed row by row. zlib's state points back at its z_stream,
/// so the stream lives at one heap address for its whole life.
final class Deflater {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private(set) var output = Data()
    private var chunk = [UInt8](repeating: 0, count: 256 << 10)

    init(level: Int) throws {
        stream.initialize(to: z_stream())
        guard badge_deflate_init(stream, Int32(max(0, min(9, level)))) == Z_OK else {
            stream.deallocate()
            throw BadgeError(.generationFailed, "zlib could not start compressing")
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    func add(_ input: [UInt8], finish: Bool) throws {
        let flush = finish ? Z_FINISH : Z_NO_FLUSH
        try input.withUnsafeBufferPointer { src in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: src.baseAddress)
            stream.pointee.avail_in = uInt(src.count)
            repeat {
                let status: Int32 = chunk.withUnsafeMutableBufferPointer { dst in
                    stream.pointee.next_out = dst.baseAddress
                    stream.pointee.avail_out = uInt(dst.count)
                    return CZlib.deflate(stream, flush)
                }
                guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                    throw BadgeError(.generationFailed, "zlib failed to compress the image (status \(status))")
                }
                output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.pointee.avail_out))])
            } while stream.pointee.avail_out == 0 || (finish && stream.pointee.avail_in > 0)
        }
    }
}
