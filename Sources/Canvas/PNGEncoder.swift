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
        var raw = [UInt8](repeating: 0, count: (rowBytes + 1) * canvas.height)
        canvas.pixels.withUnsafeBufferPointer { px in
            raw.withUnsafeMutableBufferPointer { out in
                var previous = [UInt8](repeating: 0, count: rowBytes)
                var current = [UInt8](repeating: 0, count: rowBytes)
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
                    let base = y * (rowBytes + 1)
                    out[base] = 2  // Up
                    for k in 0..<rowBytes { out[base + 1 + k] = current[k] &- previous[k] }
                    swap(&previous, &current)
                }
            }
        }
        var ihdr = Data()
        for v in [UInt32(canvas.width), UInt32(canvas.height)] {
            ihdr.append(contentsOf: [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)])
        }
        ihdr.append(contentsOf: [8, opaque ? 2 : 6, 0, 0, 0])
        return PNG.assemble([
            PNGChunk(type: "IHDR", data: ihdr),
            PNGChunk(type: "IDAT", data: try deflate(raw, level: level)),
            PNGChunk(type: "IEND", data: Data()),
        ])
    }

    static func deflate(_ input: [UInt8], level: Int) throws -> Data {
        var stream = z_stream()
        guard badge_deflate_init(&stream, Int32(max(0, min(9, level)))) == Z_OK else {
            throw BadgeError(.generationFailed, "zlib could not start compressing")
        }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let status: Int32 = input.withUnsafeBufferPointer { src in
            output.withUnsafeMutableBufferPointer { dst in
                stream.next_in = UnsafeMutablePointer(mutating: src.baseAddress)
                stream.avail_in = uInt(src.count)
                stream.next_out = dst.baseAddress
                stream.avail_out = uInt(dst.count)
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else {
            throw BadgeError(.generationFailed, "zlib failed to compress the image (status \(status))")
        }
        return Data(output.prefix(Int(stream.total_out)))
    }
}
