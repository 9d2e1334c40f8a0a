import BadgeKit
import Foundation

extension Canvas {
    /// Draws the outline of everything opaque in `mask` onto this canvas: the
    /// band where the mask's alpha changes within `radius` pixels (a
    /// morphological gradient), in `color`. Turns filled pictograms into line art.
    /// `isCancelled` is asked between strips of rows; when it says yes, the
    /// outline is left unfinished (the caller throws the picture away).
    ///
    /// Only the box around the mask's painted pixels, widened by `radius`, is
    /// filtered: outside it both filters give 0. Inside it the result is the
    /// whole picture's, since a window that reaches past the box's inner edge
    /// holds a pixel of the `radius`-wide empty margin, which is what the whole
    /// picture would give there too. The grown and the shrunk mask are worked
    /// out at the same time, on badge's own threads (`WorkerThreads`), when
    /// the canvas may draw on more than one thread (`splitsShapes`).
    public func drawOutline(of mask: Canvas, radius: Int, color: RGBA, isCancelled: @escaping @Sendable () -> Bool = { false }) {
        precondition(mask.width == width && mask.height == height, "the mask must match the canvas")
        let r = max(1, radius)
        let (width, height) = (width, height)
        guard let painted = mask.pixels.withUnsafeBufferPointer({ Self.paintedBox($0, width: width, height: height) }) else { return }
        let x0 = max(0, painted.x.lowerBound - r), x1 = min(width, painted.x.upperBound + r)
        let y0 = max(0, painted.y.lowerBound - r), y1 = min(height, painted.y.upperBound + r)
        let (boxWidth, boxHeight) = (x1 - x0, y1 - y0)
        let alpha = mask.pixels.withUnsafeBufferPointer { px in
            [UInt8](unsafeUninitializedCapacity: boxWidth * boxHeight) { out, count in
                for y in 0..<boxHeight {
                    let from = ((y0 + y) * width + x0) * 4 + 3, to = y * boxWidth
                    for x in 0..<boxWidth { out[to + x] = px[from + x * 4] }
                }
                count = boxWidth * boxHeight
            }
        }
        let filters = RankPair()
        let filter: @Sendable (Int) -> Void = { k in
            filters.set(k, Self.rank(alpha, width: boxWidth, height: boxHeight, radius: r, max: k == 0, isCancelled: isCancelled))
        }
        WorkerThreads.shared.perform(iterations: 2, threads: splitsShapes ? ImageThreads.allowed(upTo: 2) : 1, filter)
        guard let grown = filters.results[0], let shrunk = filters.results[1] else { return }
        let c = (Double(color.r), Double(color.g), Double(color.b), Double(color.a))
        pixels.withUnsafeMutableBufferPointer { buffer in
            for y in max(y0, rows.lowerBound)..<min(y1, rows.upperBound) {
                let row = (y - y0) * boxWidth
                for x in 0..<boxWidth {
                    let band = Int(grown[row + x]) - Int(shrunk[row + x])
                    if band > 0 { Self.blend(buffer, at: (y * width + x0 + x) * 4, c, Double(band) / 255) }
                }
            }
        }
    }

    /// The columns and rows holding every pixel with any alpha; nil for an empty picture.
    static func paintedBox(_ px: UnsafeBufferPointer<UInt8>, width: Int, height: Int) -> (x: Range<Int>, y: Range<Int>)? {
        var minX = width, maxX = -1, minY = height, maxY = -1
        for y in 0..<height {
            let row = y * width * 4
            var first = -1, last = -1
            for x in 0..<width where px[row + x * 4 + 3] != 0 {
                if first < 0 { first = x }
                last = x
            }
            guard first >= 0 else { continue }
            minX = min(minX, first)
            maxX = max(maxX, last)
            if minY == height { minY = y }
            maxY = y
        }
        return maxY < 0 ? nil : (minX..<(maxX + 1), minY..<(maxY + 1))
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
                            // k: the position within its block of w, counted rather than divided out.
                            var k = 0
                            for j in 0..<paddedWidth {
                                let v = padded(j)
                                g[j] = k == 0 ? v : pick(g[j - 1], v)
                                k = k == w - 1 ? 0 : k + 1
                            }
                            var j = paddedWidth - 1
                            k = j % w
                            while j >= 0 {
                                let v = padded(j)
                                h[j] = (k == w - 1 || j == paddedWidth - 1) ? v : pick(h[j + 1], v)
                                k = k == 0 ? w - 1 : k - 1
                                j -= 1
                            }
                            for x in 0..<width { dst[base + x] = pick(h[x], g[x + w - 1]) }
                        }
                    }
                }
            }
        }
        if isCancelled() { return nil }
        // Vertical: the same over padded rows, each step a whole row, a block at a time: the
        // rows of block b read h within block b and g within block b + 1, so two blocks of
        // w rows are all it keeps (400 KB at 4096 px, not two copies of the picture).
        let paddedHeight = height + 2 * radius
        var hRows = [UInt8](repeating: 0, count: w * width)
        var gRows = [UInt8](repeating: 0, count: w * width)
        var out = [UInt8](repeating: 0, count: values.count)
        var cancelled = false
        across.withUnsafeBufferPointer { src in
            hRows.withUnsafeMutableBufferPointer { h in
                gRows.withUnsafeMutableBufferPointer { g in
                    out.withUnsafeMutableBufferPointer { dst in
                        @inline(__always) func paddedRow(_ j: Int, _ x: Int) -> UInt8 {
                            let y = j - radius
                            return y >= 0 && y < height ? src[y * width + x] : identity
                        }
                        var start = 0
                        while start < height {
                            if isCancelled() { cancelled = true; return }
                            // h over block [start, start + w), from its last row back.
                            let end = Swift.min(start + w, paddedHeight)
                            var t = end - start - 1
                            for x in 0..<width { h[t * width + x] = paddedRow(start + t, x) }
                            while t > 0 {
                                t -= 1
                                for x in 0..<width { h[t * width + x] = pick(h[(t + 1) * width + x], paddedRow(start + t, x)) }
                            }
                            // g over the next block's first w - 1 rows.
                            let next = start + w
                            let gCount = Swift.max(0, Swift.min(w - 1, paddedHeight - next))
                            if gCount > 0 {
                                for x in 0..<width { g[x] = paddedRow(next, x) }
                                for t in 1..<Swift.max(1, gCount) {
                                    for x in 0..<width { g[t * width + x] = pick(g[(t - 1) * width + x], paddedRow(next + t, x)) }
                                }
                            }
                            // Row start + t: the whole block (t = 0), else the block's end and the next block's start.
                            for t in 0..<w {
                                let y = start + t
                                if y >= height { break }
                                if t == 0 {
                                    for x in 0..<width { dst[y * width + x] = h[x] }
                                } else {
                                    for x in 0..<width { dst[y * width + x] = pick(h[t * width + x], g[(t - 1) * width + x]) }
                                }
                            }
                            start += w
                        }
                    }
                }
            }
        }
        if cancelled { return nil }
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

/// The two filters' results, each written by its own thread.
private final class RankPair: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var results: [[UInt8]?] = [nil, nil]

    func set(_ k: Int, _ result: [UInt8]?) {
        lock.lock()
        results[k] = result
        lock.unlock()
    }
}
