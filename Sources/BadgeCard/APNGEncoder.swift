import BadgeKit
import Foundation

/// Joins still PNGs of equal size into one animated PNG (APNG: acTL, fcTL,
/// fdAT). Each frame is a whole picture that replaces the last (blend
/// "source", dispose "none"), so a transparent corner stays transparent.
/// Browsers show it animated; any other PNG reader shows the first frame.
package enum APNGEncoder {
    /// How long a frame shows: numerator / denominator seconds, as APNG stores it.
    package struct Delay: Sendable, Equatable {
        package var numerator: UInt16
        package var denominator: UInt16
        package init(_ numerator: UInt16, _ denominator: UInt16) {
            self.numerator = numerator
            self.denominator = denominator
        }
        package var seconds: Double { Double(numerator) / Double(denominator == 0 ? 100 : denominator) }
        /// `seconds` as milliseconds, for holds longer than one frame.
        package init(seconds: Double) {
            self.init(UInt16(max(0, min(65535, (seconds * 1000).rounded()))), 1000)
        }
    }

    /// `frames` are complete PNG files (as `PNGEncoder` writes them) with the
    /// same IHDR; `loops` 0 repeats forever.
    package static func assemble(frames: [Data], delays: [Delay], loops: UInt32 = 0) throws -> Data {
        guard !frames.isEmpty, frames.count == delays.count else {
            throw BadgeError(.generationFailed, "an animated PNG needs at least one frame and one delay per frame")
        }
        var header: PNGChunk?
        var out: [PNGChunk] = []
        var sequence: UInt32 = 0
        for (index, (frame, delay)) in zip(frames, delays).enumerated() {
            let chunks = try PNG.chunks(in: frame, verifyCRC: false)
            guard let ihdr = chunks.first, ihdr.type == "IHDR" else {
                throw BadgeError(.generationFailed, "frame \(index) of the animation is not a PNG with a header")
            }
            if let header {
                guard header.data == ihdr.data else {
                    throw BadgeError(.generationFailed, "frame \(index) of the animation differs in size or colour type from the first")
                }
            } else {
                header = ihdr
                out.append(ihdr)
                out.append(PNGChunk(type: "acTL", data: bigEndian(UInt32(frames.count)) + bigEndian(loops)))
            }
            var control = bigEndian(sequence)
            control += ihdr.data.prefix(8) // width, height
            control += bigEndian(UInt32(0)) + bigEndian(UInt32(0))
            control += bigEndian(delay.numerator) + bigEndian(delay.denominator)
            control += Data([0, 0]) // dispose none, blend source
            out.append(PNGChunk(type: "fcTL", data: control))
            sequence += 1
            for chunk in chunks where chunk.type == "IDAT" {
                if index == 0 {
                    out.append(chunk)
                } else {
                    out.append(PNGChunk(type: "fdAT", data: bigEndian(sequence) + chunk.data))
                    sequence += 1
                }
            }
        }
        out.append(PNGChunk(type: "IEND", data: Data()))
        return PNG.assemble(out)
    }

    static func bigEndian<T: FixedWidthInteger>(_ value: T) -> Data {
        withUnsafeBytes(of: value.bigEndian) { Data($0) }
    }
}
