import Foundation

extension Canvas {
    /// Draws the outline of everything opaque in `mask` onto this canvas: the
    /// band where the mask's alpha changes within `radius` pixels (a
    /// morphological gradient), in `color`. Turns filled pictograms into line art.
    /// `isCancelled` is asked between strips of rows; when it says yes, the
    /// outline is left unfinished (the caller throws the picture away).
    public func drawOutline(of mask: Canvas, radius: Int, color: RGBA, isCancelled: () -> Bool = { false }) {
        precondition(mask.width == width && mask.height == height, "the mask must match the canvas")
        let r = max(1, radius)
        let n = width * height
        var alpha = [UInt8](repeating: 0, count: n)
        mask.pixels.withUnsafeBufferPointer { px in
            for i in 0..<n { alpha[i] = px[i * 4 + 3] }
        }
        guard let grown = Self.rank(alpha, width: width, height: height, radius: r, max: true, isCancelled: isCancelled),
              let shrunk = Self.rank(alpha, width: width, height: height, radius: r, max: false, isCancelled: isCancelled)
        else { return }
        let c = (Double(color.r), Double(color.g), Double(color.b), Double(color.a))
        pixels.withUnsafeMutableBufferPointer { buffer in
            for i in (rows.lowerBound * width)..<(rows.upperBound * width) {
                let band = Int(grown[i]) - Int(shrunk[i])
                if band > 0 { Self.blend(buffer, at: i * 4, c, Double(band) / 255) }
            }
        }
    }

    /// A separable square max (or min) filter of the given radius, the window clipped
    /// at the edges; nil when `isCancelled` said yes on the way.
    ///
    /// van Herk/Gil-Werman: the line is cut into blocks of the window's length
    /// w = 2r + 1, and within each block a running max from its start (`g`) and
    /// one from its end (`h`) are kept; a window covers the end of one block
    /// and the start of the next, so its max is max(h[x], g[x + w - 1]): three
    /// comparisons a pixel whatever the radius, where the direct filter made 2r + 1.
    /// Outside the picture the line is padded with the identity (0 for max, 255
    /// for min), which is the same as clipping the window. The vertical pass runs
    /// on whole rows at a time, in memory order.
    static func rank(_ values: [UInt8], width: Int, height: Int, radius: Int, max useMax: Bool,
                     isCancelled: () -> Bool = { false }) -> [UInt8]? {
        let w = 2 * radius + 1
        let identity: UInt8 = useMax ? 0 : 255
        @inline(__always) func pick(_ a: UInt8, _ b: UInt8) -> UInt8 { useMax ? Swift.max(a, b) : Swift.min(a, b) }
        var across = [UInt8](repeating: 0, count: values.count)
        // Horizontal: one padded line at a time.
        let paddedWidth = width + 2 * radius
        var g = [UInt8](repeating: 0, count: paddedWidth)
        var h = [UInt8](repeating: 0, count: paddedWidth)
        values.withUnsafeBufferPointer { src in
            across.withUnsafeMutableBufferPointer { dst in
                g.withUnsafeMutableBufferPointer { g in
                    h.withUnsafeMutableBufferPointer { h in
                        for y in 0..<height {
                            if y & 63 == 0 && isCancelled() { return }
                            let base = y * width
                            @inline(__always) func padded(_ j: Int) -> UInt8 {
                                let x = j - radius
                                return x >= 0 && x < width ? src[base + x] : identity
                            }
                            for j in 0..<paddedWidth {
                                let v = padded(j)
                                g[j] = j % w == 0 ? v : pick(g[j - 1], v)
                            }
                            var j = paddedWidth - 1
                            while j >= 0 {
                                let v = padded(j)
                                h[j] = (j % w == w - 1 || j == paddedWidth - 1) ? v : pick(h[j + 1], v)
                                j -= 1
                            }
                            for x in 0..<width { dst[base + x] = pick(h[x], g[x + w - 1]) }
                        }
                    }
                }
            }
        }
        if isCancelled() { return nil }
        // Vertical: the same over padded rows, each step a whole row.
        let paddedHeight = height + 2 * radius
        var gRows = [UInt8](repeating: 0, count: paddedHeight * width)
        var hRows = [UInt8](repeating: 0, count: paddedHeight * width)
        var out = [UInt8](repeating: 0, count: values.count)
        var cancelled = false
        across.withUnsafeBufferPointer { src in
            gRows.withUnsafeMutableBufferPointer { g in
                hRows.withUnsafeMutableBufferPointer { h in
                    for j in 0..<paddedHeight {
                        if j & 63 == 0 && isCancelled() { cancelled = true; return }
                        let y = j - radius, row = j * width
                        let inside = y >= 0 && y < height
                        if j % w == 0 {
                            for x in 0..<width { g[row + x] = inside ? src[y * width + x] : identity }
                        } else {
                            for x in 0..<width { g[row + x] = pick(g[row - width + x], inside ? src[y * width + x] : identity) }
                        }
                    }
                    var j = paddedHeight - 1
                    while j >= 0 {
                        if j & 63 == 0 && isCancelled() { cancelled = true; return }
                        let y = j - radius, row = j * width
                        let inside = y >= 0 && y < height
                        if j % w == w - 1 || j == paddedHeight - 1 {
                            for x in 0..<width { h[row + x] = inside ? src[y * width + x] : identity }
                        } else {
                            for x in 0..<width { h[row + x] = pick(h[row + width + x], inside ? src[y * width + x] : identity) }
                        }
                        j -= 1
                    }
                }
            }
        }
        if cancelled { return nil }
        gRows.withUnsafeBufferPointer { g in
            hRows.withUnsafeBufferPointer { h in
                out.withUnsafeMutableBufferPointer { dst in
                    for y in 0..<height {
                        let top = y * width, bottom = (y + w - 1) * width
                        for x in 0..<width { dst[y * width + x] = pick(h[top + x], g[bottom + x]) }
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
