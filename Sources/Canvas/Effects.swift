import Foundation

extension Canvas {
    /// Draws the outline of everything opaque in `mask` onto this canvas: the
    /// band where the mask's alpha changes within `radius` pixels (a
    /// morphological gradient), in `color`. Turns filled pictograms into line art.
    public func drawOutline(of mask: Canvas, radius: Int, color: RGBA) {
        precondition(mask.width == width && mask.height == height, "the mask must match the canvas")
        let r = max(1, radius)
        let n = width * height
        var alpha = [UInt8](repeating: 0, count: n)
        mask.pixels.withUnsafeBufferPointer { px in
            for i in 0..<n { alpha[i] = px[i * 4 + 3] }
        }
        let grown = Self.rank(alpha, width: width, height: height, radius: r, max: true)
        let shrunk = Self.rank(alpha, width: width, height: height, radius: r, max: false)
        let c = (Double(color.r), Double(color.g), Double(color.b), Double(color.a))
        pixels.withUnsafeMutableBufferPointer { buffer in
            for i in (rows.lowerBound * width)..<(rows.upperBound * width) {
                let band = Int(grown[i]) - Int(shrunk[i])
                if band > 0 { Self.blend(buffer, at: i * 4, c, Double(band) / 255) }
            }
        }
    }

    /// A separable square max (or min) filter of the given radius.
    static func rank(_ values: [UInt8], width: Int, height: Int, radius: Int, max useMax: Bool) -> [UInt8] {
        var rows = values
        var out = values
        values.withUnsafeBufferPointer { src in
            rows.withUnsafeMutableBufferPointer { dst in
                for y in 0..<height {
                    let base = y * width
                    for x in 0..<width {
                        var v = src[base + x]
                        for k in Swift.max(0, x - radius)...Swift.min(width - 1, x + radius) {
                            let s = src[base + k]
                            v = useMax ? Swift.max(v, s) : Swift.min(v, s)
                        }
                        dst[base + x] = v
                    }
                }
            }
        }
        rows.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<height {
                    for x in 0..<width {
                        var v = src[y * width + x]
                        for k in Swift.max(0, y - radius)...Swift.min(height - 1, y + radius) {
                            let s = src[k * width + x]
                            v = useMax ? Swift.max(v, s) : Swift.min(v, s)
                        }
                        dst[y * width + x] = v
                    }
                }
            }
        }
        return out
    }

    /// Film grain on every painted pixel: a deterministic hash of the position
    /// and `seed` moves each channel by up to `amount` levels.
    public func addGrain(amount: Int, seed: UInt64) {
        guard amount > 0 else { return }
        let span = UInt64(amount * 2 + 1)
        pixels.withUnsafeMutableBufferPointer { buffer in
            for y in rows {
                for x in 0..<width {
                    let i = (y * width + x) * 4
                    if buffer[i + 3] == 0 { continue }
                    var h = seed ^ (UInt64(x) &* 0x9E37_79B9_7F4A_7C15) ^ (UInt64(y) &* 0xC2B2_AE3D_27D4_EB4F)
                    h = (h ^ (h >> 31)) &* 0xBF58_476D_1CE4_E5B9
                    h ^= h >> 29
                    let delta = Int(h % span) - amount
                    for c in 0..<3 { buffer[i + c] = UInt8(clamping: Int(buffer[i + c]) + delta) }
                }
            }
        }
    }
}
