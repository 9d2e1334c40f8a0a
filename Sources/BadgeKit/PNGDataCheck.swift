internal import CZlib
internal import CLibdeflate
import Synchronization
import Foundation

/// The check every PNG passes before the pipeline writes it (to the store or
/// to a file): zlib, a decoder independent of whichever encoder made the
/// image, inflates the whole image data, and it must hold exactly the bytes
/// the header promises. A CRC only says the bytes were not changed after the
/// encoder wrote them; this says the encoder wrote a picture.
///
/// An animated PNG's later frames (`fdAT` chunks after each `fcTL`) are
/// checked the same way, each against the size its `fcTL` gives.
///
/// Memory stays bounded (one 64 KB window, whatever the image), and the work
/// is one inflate of the image data.
package enum PNGDataCheck {
    /// Throws `.invalidImage` when the image data does not inflate, holds
    /// more or fewer bytes than the header promises, has bytes after its
    /// end, or (for a non-interlaced image) a row with an unknown filter type;
    /// and so for each later frame of an animated PNG.
    package static func verify(_ png: Data) throws {
        let chunks = try PNG.chunks(in: png, verifyCRC: false)
        guard let ihdr = chunks.first, ihdr.type == "IHDR", ihdr.data.count == 13 else {
            throw refusal("the PNG has no image header (IHDR) where it should")
        }
        let header = Array(ihdr.data)
        let width = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        let height = Int(header[4]) << 24 | Int(header[5]) << 16 | Int(header[6]) << 8 | Int(header[7])
        let bitDepth = Int(header[8]), colorType = header[9], interlaced = header[12] == 1
        let channels: Int
        switch colorType {
        case 0, 3: channels = 1
        case 2: channels = 3
        case 4: channels = 2
        case 6: channels = 4
        default: throw refusal("the PNG has an unknown colour type \(colorType)")
        }
        guard width > 0, height > 0, width <= 1 << 20, height <= 1 << 20, [1, 2, 4, 8, 16].contains(bitDepth) else {
            throw refusal("the PNG's header gives \(width)×\(height) pixels of \(bitDepth) bits")
        }
        let bitsPerPixel = channels * bitDepth
        let rowBytes = { (w: Int) in (w * bitsPerPixel + 7) / 8 }
        func imageBytes(_ width: Int, _ height: Int) -> Int {
            guard interlaced else { return height * (1 + rowBytes(width)) }
            // Adam7: seven passes, each a smaller image of its own rows.
            let passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            var total = 0
            for (x0, y0, dx, dy) in passes {
                let w = (width - x0 + dx - 1) / dx, h = (height - y0 + dy - 1) / dy
                if w > 0 && h > 0 { total += h * (1 + rowBytes(w)) }
            }
            return total
        }
        let idat = chunks.filter { $0.type == "IDAT" }
        guard !idat.isEmpty else { throw refusal("the PNG has no image data (IDAT)") }
        try inflate(idat.map(\.data), expected: imageBytes(width, height), rowLength: interlaced ? nil : 1 + rowBytes(width), what: "IDAT")

        // An animated PNG: each fcTL after the image data starts a frame whose data
        // is the fdAT chunks up to the next fcTL, each led by a sequence number.
        var seenImageData = false
        var frame: (number: Int, width: Int, height: Int, parts: [Data])?
        var frameNumber = 0
        func finishFrame() throws {
            guard let done = frame else { return }
            frame = nil
            guard !done.parts.isEmpty else { throw refusal("frame \(done.number) of the animated PNG has no image data (fdAT)") }
            try inflate(done.parts, expected: imageBytes(done.width, done.height),
                        rowLength: interlaced ? nil : 1 + rowBytes(done.width), what: "fdAT of frame \(done.number)")
        }
        for chunk in chunks {
            switch chunk.type {
            case "IDAT":
                seenImageData = true
            case "fcTL":
                try finishFrame()
                frameNumber += 1
                guard seenImageData else { continue }  // the fcTL before IDAT describes the image itself
                let d = Array(chunk.data)
                guard d.count == 26 else { throw refusal("frame \(frameNumber)'s control chunk (fcTL) is \(d.count) bytes, not 26") }
                let w = Int(d[4]) << 24 | Int(d[5]) << 16 | Int(d[6]) << 8 | Int(d[7])
                let h = Int(d[8]) << 24 | Int(d[9]) << 16 | Int(d[10]) << 8 | Int(d[11])
                guard w > 0, h > 0, w <= width, h <= height else {
                    throw refusal("frame \(frameNumber) of the animated PNG is \(w)×\(h) in a \(width)×\(height) image")
                }
                frame = (frameNumber, w, h, [])
            case "fdAT":
                guard frame != nil else { throw refusal("the animated PNG has frame data (fdAT) without a frame control chunk before it") }
                guard chunk.data.count > 4 else { throw refusal("an fdAT chunk of frame \(frameNumber) holds no data") }
                frame?.parts.append(chunk.data.dropFirst(4))
            default:
                continue
            }
        }
        try finishFrame()
    }

    private static func inflate(_ parts: [Data], expected: Int, rowLength: Int?, what: String) throws {
        let inflater = try Inflater(expected: expected, rowLength: rowLength, what: what)
        for (index, part) in parts.enumerated() { try inflater.feed(part, index: index) }
        try inflater.end()
    }

    /// zlib inflating one image's data piece by piece, into a 64 KB window
    /// it looks through and forgets: the size the header promises, each
    /// row's filter type, nothing after the stream's end. zlib's state points
    /// back at its `z_stream`, so the stream lives at one heap address.
    private final class Inflater {
        private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        private static let windowSize = 1 << 16
        private let window = UnsafeMutablePointer<UInt8>.allocate(capacity: Inflater.windowSize)
        private let expected: Int
        private let rowLength: Int?
        private let what: String
        private var produced = 0
        private var ended = false

        init(expected: Int, rowLength: Int?, what: String) throws {
            self.expected = expected
            self.rowLength = rowLength
            self.what = what
            stream.initialize(to: z_stream())
            guard badge_inflate_init(stream) == Z_OK else {
                stream.deallocate()
                window.deallocate()
                throw refusal("zlib could not start (out of memory?)")
            }
        }

        deinit {
            inflateEnd(stream)
            stream.deallocate()
            window.deallocate()
        }

        /// Inflates `part`, the `index`-th piece of the image data (from 0).
        func feed(_ part: Data, index: Int) throws {
            try part.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
                guard let base = input.baseAddress, input.count > 0 else { return }
                if ended { throw refusal("the PNG has image data after the end of its zlib stream (\(what) \(index + 1))") }
                stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
                stream.pointee.avail_in = uInt(input.count)
                defer { stream.pointee.next_in = nil }
                while stream.pointee.avail_in > 0 && !ended {
                    stream.pointee.next_out = window
                    stream.pointee.avail_out = uInt(Self.windowSize)
                    let status = CZlib.inflate(stream, Z_NO_FLUSH)
                    let count = Self.windowSize - Int(stream.pointee.avail_out)
                    if let rowLength {
                        // Each row starts with its filter type, 0 to 4.
                        var position = (rowLength - produced % rowLength) % rowLength
                        while position < count {
                            if window[position] > 4 {
                                throw refusal("row \((produced + position) / rowLength) of the PNG has filter type \(window[position]) (0 to 4 exist)")
                            }
                            position += rowLength
                        }
                    }
                    produced += count
                    if produced > expected {
                        throw refusal("the PNG's image data holds more than the \(expected) bytes its header promises")
                    }
                    switch status {
                    case Z_OK: continue
                    case Z_STREAM_END: ended = true
                    case Z_BUF_ERROR where count == 0: return
                    default:
                        let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                        throw refusal("the PNG's image data is not a valid zlib stream (\(reason), in \(what) \(index + 1))")
                    }
                }
                if ended && stream.pointee.avail_in > 0 {
                    throw refusal("the PNG has \(stream.pointee.avail_in) bytes of image data after the end of its zlib stream")
                }
            }
        }

        /// Throws unless the stream has ended holding exactly the bytes expected.
        func end() throws {
            guard ended else {
                throw refusal("the PNG's image data ends before its zlib stream does (\(produced) of \(expected) bytes inflated)")
            }
            guard produced == expected else {
                throw refusal("the PNG's image data holds \(produced) bytes where its header promises \(expected)")
            }
        }
    }

    private static func refusal(_ message: String) -> BadgeError {
        BadgeError(.invalidImage, message,
                   hint: "the image was made damaged; nothing was written, and the current badge is unchanged")
    }
}

extension PNGDataCheck {
    /// What the ``Bands`` check found inflating an image's data as its
    /// encoder made it: the image header (IHDR's 13 bytes) and the pieces of
    /// the zlib stream, all inflated to exactly the rows the header promises.
    /// Only the check's `finish` makes one (its initialiser is fileprivate to
    /// this file), so holding one means libdeflate inflated these very bytes.
    /// `CheckedBadge` compares a stamped PNG with it rather than inflating the
    /// same bytes a second time.
    package struct Inflated: Sendable {
        private let header: Data
        private let pieces: [Data]

        fileprivate init(header: Data, pieces: [Data]) {
            self.header = header
            self.pieces = pieces
        }

        /// Whether `png` is a still image (no animation's frame chunks) whose
        /// IHDR holds `header` and whose IDAT payloads, joined, are the
        /// pieces inflated, joined: byte for byte, wherever the chunks split.
        package func vouches(for png: Data) -> Bool {
            guard let chunks = try? PNG.chunks(in: png, verifyCRC: false),
                  let first = chunks.first, first.type == "IHDR", first.data == header,
                  !chunks.contains(where: { $0.type == "fcTL" || $0.type == "fdAT" })
            else { return false }
            return Self.joinedEqual(chunks.lazy.filter { $0.type == "IDAT" }.map(\.data), pieces)
        }

        /// Whether two lists of byte strings are the same bytes once joined.
        static func joinedEqual(_ left: some Sequence<Data>, _ right: [Data]) -> Bool {
            var rightIndex = 0, rightOffset = 0
            for part in left {
                var offset = 0
                while offset < part.count {
                    while rightIndex < right.count && rightOffset == right[rightIndex].count {
                        rightIndex += 1
                        rightOffset = 0
                    }
                    guard rightIndex < right.count else { return false }
                    let piece = right[rightIndex]
                    let length = min(part.count - offset, piece.count - rightOffset)
                    let same = part.withUnsafeBytes { a in
                        piece.withUnsafeBytes { b in memcmp(a.baseAddress! + offset, b.baseAddress! + rightOffset, length) == 0 }
                    }
                    guard same else { return false }
                    offset += length
                    rightOffset += length
                }
            }
            while rightIndex < right.count && rightOffset == right[rightIndex].count {
                rightIndex += 1
                rightOffset = 0
            }
            return rightIndex == right.count
        }
    }

    /// The check run while an image is encoded in bands, pigz's way: each
    /// band is raw deflate blocks whose matches may reach back into the 32 KB
    /// of rows before it, ending on a byte boundary (the last band ends the
    /// stream). libdeflate, a decoder independent of badge's encoder,
    /// inflates each band on its own, on the thread that compressed it and as
    /// soon as it did, from those rows as its window:
    /// the band must give exactly its own rows (each with a filter type of 0
    /// to 4), and stop where a block ends on a byte boundary, in the last
    /// block only if it is the last band. A decoder then reaches each band
    /// with the window it was checked from, so with a valid zlib header, the
    /// bands in order and an Adler-32 that libdeflate's of the rows confirms,
    /// the whole stream is checked, in any order, on every core at once.
    /// A failure is kept; `finish` throws it.
    package final class Bands: Sendable {
        private let header: Data
        private let count: Int
        private let rowLength: Int
        private let expected: Int
        private let state: Mutex<State>

        private struct State {
            var pieces: [Data?]
            /// libdeflate's Adler-32 of each band's inflated rows, and their length.
            var sums: [(adler: uLong, length: Int)?]
            var failure: BadgeError?
        }

        /// The check of a `width`×`height` image of `channels` 8-bit channels
        /// (3: RGB, 4: RGBA), encoded in `count` bands.
        package init(width: Int, height: Int, channels: Int, count: Int) {
            header = PNG.header(width: width, height: height, alpha: channels == 4)
            self.count = count
            rowLength = 1 + width * max(channels, 1)
            expected = height * rowLength
            var state = State(pieces: Array(repeating: nil, count: max(count, 0)), sums: Array(repeating: nil, count: max(count, 0)))
            if channels != 3 && channels != 4 || width <= 0 || height <= 0 || count <= 0 {
                state.failure = refusal("the banded check takes 8-bit RGB or RGBA in bands, not \(channels) channels of \(width)×\(height) in \(count)")
            }
            self.state = Mutex(state)
        }

        /// Checks band `k` (from 0), `deflated`, against `rows`, the band's
        /// filtered rows, inflating it from `window`, the rows before them
        /// (the last 32 KB are used).
        /// `scratch` is memory kept from band to band by a caller that checks
        /// several (a thread's own: one band at a time); without it the check
        /// takes its own.
        package func check(
            _ k: Int, deflated: Data, window: UnsafeRawBufferPointer, rows: UnsafeRawBufferPointer, scratch: BandScratch? = nil
        ) {
            guard k >= 0 && k < count, state.withLock({ $0.failure == nil }) else { return }
            let result = Self.inflate(band: k, last: k == count - 1, deflated, window: window, rows: rows, rowLength: rowLength,
                                      scratch: scratch ?? BandScratch())
            state.withLock { state in
                switch result {
                case .success(let adler):
                    state.pieces[k] = deflated
                    state.sums[k] = (adler, rows.count)
                case .failure(let error):
                    if state.failure == nil { state.failure = error }
                }
            }
        }

        /// The proof, once every band is checked: throws `.invalidImage` when
        /// a band failed or was not checked, when the bands' rows are not the
        /// header's, when `zlibHeader` is not a zlib header for this stream,
        /// or when `trailer` is not the Adler-32 of the rows.
        package func finish(zlibHeader: Data, trailer: Data) throws -> Inflated {
            try state.withLock { state in
                if let failure = state.failure { throw failure }
                var adler = adler32(0, nil, 0), total = 0
                var pieces = [zlibHeader]
                for k in 0..<count {
                    guard let sum = state.sums[k], let piece = state.pieces[k] else {
                        throw refusal("band \(k + 1) of \(count) of the image data was not checked")
                    }
                    adler = adler32_combine(adler, sum.adler, off_t(sum.length))
                    total += sum.length
                    pieces.append(piece)
                }
                guard total == expected else {
                    throw refusal("the PNG's image data holds \(total) bytes where its header promises \(expected)")
                }
                let h = [UInt8](zlibHeader)
                // Deflate (method 8), a window of at most 32 KB, no preset dictionary, the check bits right.
                guard h.count == 2, h[0] & 0x0F == 8, h[0] >> 4 <= 7, h[1] & 0x20 == 0, (Int(h[0]) << 8 | Int(h[1])) % 31 == 0 else {
                    throw refusal("the PNG's image data does not start with a zlib header (\(h.map { String($0, radix: 16) }))")
                }
                let sum = [UInt8(adler >> 24 & 0xFF), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)]
                guard [UInt8](trailer) == sum else {
                    throw refusal("the PNG's image data ends with an Adler-32 that is not its rows' (incorrect data check)")
                }
                pieces.append(trailer)
                return Inflated(header: header, pieces: pieces)
            }
        }

        /// The empty final stored block put after a band that is not the
        /// last (see `inflate`): bit 0 BFINAL, then BTYPE 00, padding, and
        /// LEN 0 with its complement NLEN.
        fileprivate static let terminator: [UInt8] = [0x01, 0x00, 0x00, 0xFF, 0xFF]
        /// The most of the rows before a band its matches reach into, and the
        /// bytes of the stored block's header that carries them.
        fileprivate static let window = 32768, storedHeader = 5

        /// The Adler-32 of the band's rows, once the band inflated to them.
        ///
        /// libdeflate inflates whole buffers and takes no window, so the band
        /// is given one as a decoder meets it: it is led by a stored block
        /// holding the 32 KB of rows before it (which ends on a byte boundary,
        /// between blocks, where the band starts) and, unless it is the last,
        /// followed by an empty final stored block. The whole must inflate to
        /// exactly the window and the band's rows, every byte of it read: a
        /// band that stopped short of a byte boundary (or past one) would
        /// have the next block's header read from its last bits, where a
        /// stored block's length and its complement do not match, and one
        /// that ends the stream early leaves the terminator unread.
        private static func inflate(
            band k: Int, last: Bool, _ deflated: Data, window: UnsafeRawBufferPointer, rows: UnsafeRawBufferPointer, rowLength: Int,
            scratch: BandScratch
        ) -> Result<uLong, BadgeError> {
            let name = "band \(k + 1) of the image data"
            guard rows.count > 0, rows.count % rowLength == 0 else {
                return .failure(refusal("\(name) is \(rows.count) bytes of rows, not whole rows of \(rowLength)"))
            }
            var position = 0
            while position < rows.count {
                // Each row starts with its filter type, 0 to 4.
                if rows[position] > 4 { return .failure(refusal("a row of the PNG has filter type \(rows[position]) (0 to 4 exist)")) }
                position += rowLength
            }
            guard let decompressor = scratch.decompressor else {
                return .failure(refusal("libdeflate could not start (out of memory?)"))
            }
            let history = min(window.count, Self.window)
            let lead = history > 0 ? Self.storedHeader + history : 0
            let inputCount = lead + deflated.count + (last ? 0 : terminator.count)
            let outputCount = history + rows.count
            let (input, output) = scratch.buffers(input: inputCount, output: outputCount)
            if history > 0, let base = window.baseAddress {
                let length = UInt16(history), complement = ~length
                input.copyBytes(from: [0x00, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(complement & 0xFF), UInt8(complement >> 8)])
                UnsafeMutableRawBufferPointer(rebasing: input[Self.storedHeader..<lead])
                    .copyMemory(from: UnsafeRawBufferPointer(start: base + (window.count - history), count: history))
            }
            deflated.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: input[lead..<(lead + deflated.count)]).copyMemory(from: $0) }
            if !last {
                UnsafeMutableRawBufferPointer(rebasing: input[(lead + deflated.count)...]).copyBytes(from: terminator)
            }
            var read = 0, written = 0
            let status = libdeflate_deflate_decompress_ex(
                decompressor, input.baseAddress, inputCount, output.baseAddress, outputCount, &read, &written)
            switch status {
            case LIBDEFLATE_SUCCESS:
                break
            case LIBDEFLATE_INSUFFICIENT_SPACE:
                return .failure(refusal("\(name) holds more than its \(rows.count) bytes of rows"))
            default:
                return .failure(refusal(last
                    ? "the PNG's image data is not a valid zlib stream (\(name), the last, does not inflate, or does not end it)"
                    : "the PNG's image data is not a valid zlib stream (\(name) does not inflate, or does not end where a block ends on a byte boundary)"))
            }
            guard read == inputCount else {
                return .failure(refusal(last
                    ? "the PNG has \(inputCount - read) bytes of image data after the end of its zlib stream"
                    : "\(name) ends the zlib stream before the image's last band"))
            }
            guard written == outputCount else {
                return .failure(refusal("\(name) inflates to \(max(written - history, 0)) of its \(rows.count) bytes of rows"))
            }
            guard memcmp(output.baseAddress! + history, rows.baseAddress!, rows.count) == 0 else {
                return .failure(refusal("\(name) does not inflate to the rows it was made from"))
            }
            return .success(uLong(libdeflate_adler32(1, rows.baseAddress, rows.count)))
        }
    }

    /// What checking one band takes: libdeflate's decompressor and the
    /// buffers it reads and writes (a band with its window, ~350 KB each for
    /// a 1024 px badge's), made as a band first needs them and grown when a
    /// larger one does. Kept by a thread that checks band after band, so the
    /// pages are faulted in once. Used by one thread at a time.
    package final class BandScratch {
        fileprivate let decompressor: OpaquePointer? = libdeflate_alloc_decompressor()
        private var input = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        private var output = UnsafeMutableRawBufferPointer(start: nil, count: 0)

        package init() {}

        /// The input buffer a band compressed to at most `deflated` bytes
        /// needs: the window's stored block, the band, the terminator.
        package static func inputBytes(deflated: Int) -> Int {
            Bands.storedHeader + Bands.window + deflated + Bands.terminator.count
        }

        /// The output buffer a band of `rows` bytes of rows needs: the window and the rows.
        package static func outputBytes(rows: Int) -> Int { Bands.window + rows }

        /// Buffers of at least these sizes, cut to them.
        fileprivate func buffers(input inputCount: Int, output outputCount: Int) -> (UnsafeMutableRawBufferPointer, UnsafeMutableRawBufferPointer) {
            if input.count < inputCount {
                input.deallocate()
                input = .allocate(byteCount: inputCount, alignment: 16)
            }
            if output.count < max(outputCount, 1) {
                output.deallocate()
                output = .allocate(byteCount: max(outputCount, 1), alignment: 16)
            }
            return (UnsafeMutableRawBufferPointer(rebasing: input[0..<inputCount]),
                    UnsafeMutableRawBufferPointer(rebasing: output[0..<max(outputCount, 1)]))
        }

        deinit {
            if let decompressor { libdeflate_free_decompressor(decompressor) }
            input.deallocate()
            output.deallocate()
        }
    }
}
