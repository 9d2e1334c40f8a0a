import BadgeKit
import CDeflate
import CLibdeflate
import CZlib
import Foundation
import Synchronization

/// Encodes a Canvas as PNG straight from its buffer with zlib: no copy into a
/// gd image, RGB when every pixel is opaque, and one row filter for the whole
/// image, the caller's choice: "Up" by default, "None" for the procedural
/// art, whose 4×4 dither repeats exactly, which deflate finds unfiltered
/// (a 1024 px medal at level 2: 562 KB with None, 630 KB with Up, 548 KB
/// with Sub, which costs a third more time).
///
/// Deflate is the slowest step, so bands of rows are compressed at the same
/// time and joined into one zlib stream, as pigz does: each band but the last
/// ends on a byte boundary (a sync flush) and starts with the previous 32 KB
/// as its dictionary, so the joined stream is valid and barely larger. The
/// bands depend only on the image size, never on the number of cores, so the
/// bytes are the same on every machine. Levels 1–2 (the default) use badge's
/// own deflate (`CDeflate`: smaller and ~1.7x faster than zlib's level 2 on a
/// badge); 0 and 3–9 are zlib's.
public enum PNGEncoder {
    /// `keepAlpha` writes RGBA even when every pixel is opaque: the frames of
    /// an animated PNG must all share the first frame's colour type.
    public static func encode(_ canvas: Canvas, level: Int = 2, keepAlpha: Bool = false, filter: Filter = .up) throws -> Data {
        try encodeInflating(canvas, level: level, keepAlpha: keepAlpha, filter: filter, inflating: false).png
    }

    /// `encode`, and with `inflating`, the check of the image data run
    /// band by band beside the compression (`PNGDataCheck.Bands`): its proof,
    /// unless the check failed (the image is then checked again, in full,
    /// where it is stamped, and refused there).
    package static func encodeInflating(_ canvas: Canvas, level: Int = 2, keepAlpha: Bool = false, filter: Filter = .up,
                                        inflating: Bool) throws -> (png: Data, inflated: PNGDataCheck.Inflated?) {
        let job = BandedPNG(canvas, level: level, filter: filter, opaque: !keepAlpha && canvas.isOpaque, checked: true,
                            inflating: inflating)
        let workers = ImageThreads.allowed(upTo: min(job.count, Canvas.shapeThreads))
        // Each worker (the calling thread and badge's own, `WorkerThreads`) takes
        // the next band not yet taken (bands compress at very different speeds:
        // the motif's rows are the slowest). The bands are the same however many
        // workers: the bytes never depend on the threads.
        WorkerThreads.shared.share(threads: workers) {
            while let k = job.nextBand() { job.compress(k) }
        }
        return try job.finishInflating()
    }

    /// The file put together once, at its final size: the IDAT's CRC is
    /// combined from the bands' own (each worked out by its worker), so the
    /// compressed bytes are neither copied twice nor read again here.
    static func assemble(_ bands: [Band], width: Int, height: Int, opaque: Bool, level: Int) -> Data {
        let idatLength = bands.reduce(2 + 4) { $0 + $1.deflated.count }
        let zlibHeader = zlibHeader(level: level)
        let adlerBytes = adlerTrailer(bands)
        var crc = crc32(0, nil, 0)
        for bytes in [Array("IDAT".utf8), zlibHeader] {
            crc = bytes.withUnsafeBufferPointer { crc32(crc, $0.baseAddress, uInt($0.count)) }
        }
        for band in bands { crc = crc32_combine(crc, band.crc, band.deflated.count) }
        crc = adlerBytes.withUnsafeBufferPointer { crc32(crc, $0.baseAddress, uInt($0.count)) }

        var png = PNG.assemble([PNGChunk(type: "IHDR", data: PNG.header(width: width, height: height, alpha: !opaque))])
        png.reserveCapacity(png.count + 12 + idatLength + 12)
        png.append(contentsOf: bigEndian(UInt32(idatLength)))
        png.append(contentsOf: Array("IDAT".utf8))
        png.append(contentsOf: zlibHeader)
        for band in bands { png.append(band.deflated) }
        png.append(contentsOf: adlerBytes)
        png.append(contentsOf: bigEndian(UInt32(crc)))
        png.append(contentsOf: Self.iend)
        return png
    }

    /// The zlib stream's last four bytes: the Adler-32 of every band's
    /// filtered rows, combined from the bands' own.
    static func adlerTrailer(_ bands: [Band]) -> [UInt8] {
        bigEndian(UInt32(bands.reduce(adler32(0, nil, 0)) { adler32_combine($0, $1.adler, $1.length) }))
    }

    /// Whether every pixel of `rows` has alpha 255.
    static func isOpaque(_ px: UnsafeBufferPointer<UInt8>, rows: Range<Int>, width: Int) -> Bool {
        stride(from: rows.lowerBound * width * 4 + 3, to: rows.upperBound * width * 4, by: 4).allSatisfy { px[$0] == 255 }
    }

    /// The IEND chunk: no data, and the CRC of its type.
    static let iend: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]

    static func bigEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }

    /// Row indices where bands start, ending with the height: about 80 K
    /// pixels a band (12 at 1024 px: small enough for two cores to share
    /// bands of uneven cost, each band re-reading only 32 KB of history), at
    /// most 32 bands (a 4096 px badge: 2 MB of rows a band, which is what each
    /// worker holds filtered at once).
    static func bandStarts(height: Int, width: Int) -> [Int] {
        let count = max(1, min(32, min(height, width * height / (80 * 1024))))
        return (0...count).map { $0 * height / count }
    }

    /// zlib's own header for `level` (RFC 1950: FLEVEL as zlib sets it, no preset dictionary).
    static func zlibHeader(level: Int) -> [UInt8] {
        let flags = level < 2 ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3
        var header = 0x78 << 8 | flags << 6
        header += 31 - header % 31
        return [UInt8(header >> 8), UInt8(header & 0xFF)]
    }

    /// A PNG row filter: the two that win here (Sub was smaller than None for
    /// the procedural art only at 4096 px, and a third slower; Paeth and
    /// per-row choice never won; see the README's benchmark notes).
    public enum Filter: UInt8, Sendable {
        case none = 0, up = 2
    }

    struct RowLayout {
        let width: Int
        let channels: Int
        let filter: Filter
        var rowBytes: Int { width * channels }

        /// The rows before a band that hold the 32 KB a decoder's window has
        /// when it reaches the band.
        var historyRows: Int { (32768 + rowBytes) / (rowBytes + 1) }

        /// The bytes of a band of `rows` rows filtered, with its history rows.
        func bandBytes(rows: Int) -> Int { (rows + historyRows) * (rowBytes + 1) }

        /// Row `y`, filtered, its type byte first, into `out`. Unsafe pointers,
        /// and one loop per case, so that the compiler vectorises them.
        @inline(__always)
        func filter(_ px: UnsafeBufferPointer<UInt8>, row y: Int, into out: UnsafeMutableBufferPointer<UInt8>) {
            let src = px.baseAddress! + y * width * 4
            let dst = out.baseAddress! + 1
            out[0] = filter.rawValue
            let n = rowBytes
            switch (filter, channels) {
            case (.up, 4) where y > 0:
                let above = src - width * 4
                for i in 0..<n { dst[i] = src[i] &- above[i] }
            case (.up, _) where y > 0:
                let above = src - width * 4
                for k in 0..<width {
                    for c in 0..<3 { dst[k * 3 + c] = src[k * 4 + c] &- above[k * 4 + c] }
                }
            case (_, 4):
                dst.update(from: src, count: n)
            default:
                for k in 0..<width {
                    for c in 0..<3 { dst[k * 3 + c] = src[k * 4 + c] }
                }
            }
        }
    }

    struct Band {
        var deflated: Data
        /// Adler-32 of the filtered rows, CRC-32 of `deflated`.
        var adler: uLong
        var crc: uLong
        var length: Int

        init(deflated: Data, adler: uLong, length: Int) {
            self.deflated = deflated
            self.adler = adler
            self.length = length
            crc = uLong(CRC32.checksum(deflated))
        }
    }

    static func compressBand(_ px: UnsafeBufferPointer<UInt8>, layout: RowLayout, rows: Range<Int>, last: Bool, level: Int,
                             scratch: FastScratch?) throws -> Band {
        if let scratch {
            return try compressBandFast(px, layout: layout, rows: rows, last: last, scratch: scratch)
        }
        let deflater = try Deflater(level: level, raw: true)
        let stride = layout.rowBytes + 1
        if rows.lowerBound > 0 {
            // The 32 KB before this band, as the stream holds them: what a
            // decoder has in its window when it reaches this band.
            let first = max(0, rows.lowerBound - layout.historyRows)
            var history = [UInt8](repeating: 0, count: (rows.lowerBound - first) * stride)
            history.withUnsafeMutableBufferPointer { all in
                for y in first..<rows.lowerBound {
                    layout.filter(px, row: y, into: UnsafeMutableBufferPointer(rebasing: all[((y - first) * stride)...]))
                }
            }
            try deflater.setDictionary(history.suffix(32768))
        }
        var adler = adler32(0, nil, 0)
        var row = [UInt8](repeating: 0, count: stride)
        try row.withUnsafeMutableBufferPointer { row in
            for y in rows {
                layout.filter(px, row: y, into: row)
                adler = uLong(libdeflate_adler32(UInt32(adler), row.baseAddress, stride))
                try deflater.add(UnsafeBufferPointer(row), flush: y == rows.upperBound - 1 ? (last ? Z_FINISH : Z_SYNC_FLUSH) : Z_NO_FLUSH)
            }
        }
        return Band(deflated: deflater.output, adler: adler, length: rows.count * stride)
    }
}

extension PNGEncoder {
    /// Levels 1–2 are badge's deflate; 0 and 3–9 zlib's.
    static func usesOwnDeflate(_ level: Int) -> Bool { level == 1 || level == 2 }

    /// A band's rows, filtered, after the rows before it that hold the 32 KB
    /// its matches may reach back into: what badge's deflate reads, and what
    /// the check inflates the band from and compares it with.
    struct FilteredBand {
        let input: UnsafeMutableBufferPointer<UInt8>
        /// The bytes of `input` before the band's own rows.
        let history: Int

        var window: UnsafeRawBufferPointer { UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: input[..<history])) }
        var rows: UnsafeRawBufferPointer { UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: input[history...])) }
    }

    /// Band `rows`, filtered, with its history rows, into `scratch`'s buffer.
    static func filterBand(_ px: UnsafeBufferPointer<UInt8>, layout: RowLayout, rows: Range<Int>, into scratch: FastScratch) -> FilteredBand {
        let stride = layout.rowBytes + 1
        let first = max(0, rows.lowerBound - layout.historyRows)
        let history = (rows.lowerBound - first) * stride, length = rows.count * stride
        let input = scratch.input(count: history + length)
        for y in first..<rows.upperBound {
            layout.filter(px, row: y, into: UnsafeMutableBufferPointer(rebasing: input[((y - first) * stride)...]))
        }
        return FilteredBand(input: input, history: history)
    }

    /// A band through `badge_deflate`, which reads the band's filtered rows
    /// and the 32 KB before them (its matches reach back into them) from one
    /// buffer.
    static func compressBandFast(_ px: UnsafeBufferPointer<UInt8>, layout: RowLayout, rows: Range<Int>, last: Bool,
                                 scratch: FastScratch) throws -> Band {
        try compressBandFast(filterBand(px, layout: layout, rows: rows, into: scratch), last: last, scratch: scratch)
    }

    static func compressBandFast(_ band: FilteredBand, last: Bool, scratch: FastScratch) throws -> Band {
        let input = band.input, history = band.history, length = input.count - band.history
        let adler = uLong(libdeflate_adler32(1, input.baseAddress! + history, length))
        let capacity = badge_deflate_bound(length)
        guard let out = malloc(capacity)?.assumingMemoryBound(to: UInt8.self) else {
            throw BadgeError(.generationFailed, "no memory for the compressed image (\(capacity) bytes)", hint: "is memory short?")
        }
        let written = badge_deflate(input.baseAddress, history, length, last ? 1 : 0, out, capacity, scratch.tables)
        guard written > 0 else {
            free(out)
            throw BadgeError(.generationFailed, "the compressed image did not fit its buffer (\(capacity) bytes)",
                             hint: "this is a bug in badge's PNG encoder; please report it with the command that made it")
        }
        return Band(deflated: Data(bytesNoCopy: out, count: written, deallocator: .free), adler: adler, length: length)
    }
}

/// One PNG compressed band by band, on whatever threads call `compress`, in
/// any order: `PNGEncoder.encode` once the picture is finished, or a picture's
/// drawing threads as soon as the rows a band reads are drawn (the art
/// engine: no core waits at the end of the drawing, nor for the encoding's
/// threads to start).
///
/// The colour type must be known before the first band: `opaque` is a
/// promise the caller makes (RGB), and unless it was `checked` against every
/// pixel, `finish` checks it and encodes again when it was wrong, so the
/// bytes are always those of `PNGEncoder.encode`.
public final class BandedPNG: @unchecked Sendable {
    public let count: Int
    private let canvas: Canvas
    private let level: Int
    private let layout: PNGEncoder.RowLayout
    private let starts: [Int]
    private let opaque: Bool
    private let checked: Bool
    private let slots: BandSlots
    private let next = Atomic<Int>(0)
    // A band found a pixel that is not opaque after RGB was promised.
    private let translucent = Atomic<Bool>(false)
    // The check of each band (libdeflate inflating it), run as it is compressed.
    private let check: PNGDataCheck.Bands?

    /// `inflating`: libdeflate checks the image data as the bands are stored
    /// (`finishInflating`'s proof).
    public convenience init(_ canvas: Canvas, level: Int, filter: PNGEncoder.Filter, opaque: Bool, checked: Bool = false) {
        self.init(canvas, level: level, filter: filter, opaque: opaque, checked: checked, inflating: false)
    }

    package init(_ canvas: Canvas, level: Int, filter: PNGEncoder.Filter, opaque: Bool, checked: Bool = false, inflating: Bool) {
        self.canvas = canvas
        self.level = max(0, min(9, level))
        self.opaque = opaque
        self.checked = checked
        layout = PNGEncoder.RowLayout(width: canvas.width, channels: opaque ? 3 : 4, filter: filter)
        starts = PNGEncoder.bandStarts(height: canvas.height, width: canvas.width)
        count = starts.count - 1
        slots = BandSlots(count: count)
        check = inflating ? PNGDataCheck.Bands(width: canvas.width, height: canvas.height, channels: layout.channels, count: count) : nil
    }

    /// The canvas rows band `k` reads: its own, and the 32 KB of rows before it
    /// that its matches may reach back into.
    public func rowsRead(by k: Int) -> Range<Int> {
        max(0, starts[k] - layout.historyRows)..<starts[k + 1]
    }

    /// The next band nobody has taken, for workers that share this job.
    public func nextBand() -> Int? {
        let k = next.add(1, ordering: .relaxed).oldValue
        return k < count ? k : nil
    }

    /// Compresses band `k` (each band once); its rows must be drawn.
    public func compress(_ k: Int) {
        let rows = starts[k]..<starts[k + 1]
        let result = canvas.pixels.withUnsafeBufferPointer { px in
            if opaque && !checked && !PNGEncoder.isOpaque(px, rows: rows, width: canvas.width) {
                translucent.store(true, ordering: .relaxed)
            }
            let own = PNGEncoder.usesOwnDeflate(level)
            let largestBand = layout.bandBytes(rows: starts.last! / count + 1)
            let scratch = own || check != nil ? FastScratch.take(largestBand: largestBand) : nil
            defer { scratch.map(FastScratch.give) }
            return Result {
                guard let scratch else {
                    return try PNGEncoder.compressBand(px, layout: layout, rows: rows, last: k == count - 1, level: level, scratch: nil)
                }
                // The rows filtered once, for badge's deflate and for the check.
                let filtered = PNGEncoder.filterBand(px, layout: layout, rows: rows, into: scratch)
                let band = own
                    ? try PNGEncoder.compressBandFast(filtered, last: k == count - 1, scratch: scratch)
                    : try PNGEncoder.compressBand(px, layout: layout, rows: rows, last: k == count - 1, level: level, scratch: nil)
                check?.check(k, deflated: band.deflated, window: filtered.window, rows: filtered.rows, scratch: scratch.check)
                return band
            }
        }
        slots.store(k, result)
    }

    /// The PNG, once every band is compressed.
    public func finish() throws -> Data {
        try finishInflating().png
    }

    /// The PNG, and when this job was `inflating` and the check passed, its
    /// proof (`PNGDataCheck.Inflated`).
    package func finishInflating() throws -> (png: Data, inflated: PNGDataCheck.Inflated?) {
        let promiseHeld = checked || (opaque ? !translucent.load(ordering: .relaxed) : !canvas.isOpaque)
        if !promiseHeld {
            return try PNGEncoder.encodeInflating(canvas, level: level, filter: layout.filter, inflating: check != nil)
        }
        let bands = try slots.results.map { try $0.get() }
        let png = PNGEncoder.assemble(bands, width: canvas.width, height: canvas.height, opaque: opaque, level: level)
        guard let check else { return (png, nil) }
        return (png, try? check.finish(zlibHeader: Data(PNGEncoder.zlibHeader(level: level)), trailer: Data(PNGEncoder.adlerTrailer(bands))))
    }
}

/// What compressing one band takes with badge's deflate: its tables, the
/// buffer the band's rows are filtered into, and the check's buffers. Taken
/// from a pool for each band and given back, so a thread compressing several
/// bands, and a batch encoding hundreds of images, reuse the same few: memory
/// this large is mapped afresh by every malloc, faulted in page by page and
/// unmapped with an interrupt to every other core. The pool is the
/// process's: a drawing may be given a scratch an import made, and the other
/// way round.
final class FastScratch: @unchecked Sendable {
    // Used by one worker at a time: the pool hands each out once.
    private static let pool = Mutex<[FastScratch]>([])

    static func take(largestBand: Int) -> FastScratch {
        pool.withLock { $0.popLast() } ?? FastScratch(largestBand: largestBand)
    }

    static func give(_ scratch: FastScratch) {
        pool.withLock { pool in
            if pool.count < ImageThreads.processorCount { pool.append(scratch) }
        }
    }

    let tables: UnsafeMutableRawPointer
    let check = PNGDataCheck.BandScratch()
    private var buffer: UnsafeMutableBufferPointer<UInt8>

    /// `largestBand`: the bytes of the largest band's filtered rows with their
    /// history (the buffer grows if a band needs more).
    init(largestBand: Int) {
        tables = UnsafeMutableRawPointer.allocate(byteCount: badge_deflate_scratch_size(), alignment: 64)
        buffer = .allocate(capacity: largestBand)
    }

    func input(count: Int) -> UnsafeMutableBufferPointer<UInt8> {
        if buffer.count < count {
            buffer.deallocate()
            buffer = .allocate(capacity: count)
        }
        return UnsafeMutableBufferPointer(rebasing: buffer[0..<count])
    }

    deinit {
        tables.deallocate()
        buffer.deallocate()
    }
}

/// One result per band, written by the worker that made it.
private final class BandSlots: @unchecked Sendable {
    // Each index is written by exactly one worker and read after all have finished.
    private var slots: [Result<PNGEncoder.Band, any Error>?]
    private let lock = NSLock()

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    func store(_ k: Int, _ result: Result<PNGEncoder.Band, any Error>) {
        lock.lock()
        slots[k] = result
        lock.unlock()
    }

    var results: [Result<PNGEncoder.Band, any Error>] {
        lock.lock()
        defer { lock.unlock() }
        return slots.map { $0 ?? .failure(BadgeError(.generationFailed, "a band of the PNG was not compressed")) }
    }
}

/// A zlib stream fed row by row. zlib's state points back at its z_stream,
/// so the stream lives at one heap address for its whole life.
final class Deflater {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private(set) var output = Data()
    // Not zeroed: zlib writes before anything reads.
    private let chunk = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 256 << 10)

    init(level: Int, raw: Bool = false) throws {
        stream.initialize(to: z_stream())
        let level = Int32(max(0, min(9, level)))
        guard (raw ? badge_deflate_init_raw(stream, level) : badge_deflate_init(stream, level)) == Z_OK else {
            stream.deallocate()
            throw BadgeError(.generationFailed, "zlib could not start compressing", hint: "is memory short?")
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
        chunk.deallocate()
    }

    func setDictionary(_ bytes: ArraySlice<UInt8>) throws {
        let status = bytes.withUnsafeBufferPointer { deflateSetDictionary(stream, $0.baseAddress, uInt($0.count)) }
        guard status == Z_OK else {
            throw BadgeError(.generationFailed, "zlib refused the dictionary (status \(status))")
        }
    }

    func add(_ input: [UInt8], finish: Bool) throws {
        try add(input, flush: finish ? Z_FINISH : Z_NO_FLUSH)
    }

    func add(_ input: [UInt8], flush: Int32) throws {
        try input.withUnsafeBufferPointer { try add($0, flush: flush) }
    }

    func add(_ src: UnsafeBufferPointer<UInt8>, flush: Int32) throws {
        do {
            stream.pointee.next_in = UnsafeMutablePointer(mutating: src.baseAddress)
            stream.pointee.avail_in = uInt(src.count)
            repeat {
                stream.pointee.next_out = chunk.baseAddress
                stream.pointee.avail_out = uInt(chunk.count)
                let status = CZlib.deflate(stream, flush)
                guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                    throw BadgeError(.generationFailed, "zlib failed to compress the image (status \(status))")
                }
                output.append(UnsafeBufferPointer(rebasing: chunk[0..<(chunk.count - Int(stream.pointee.avail_out))]))
            } while stream.pointee.avail_out == 0 || (flush != Z_NO_FLUSH && stream.pointee.avail_in > 0)
        }
    }
}
