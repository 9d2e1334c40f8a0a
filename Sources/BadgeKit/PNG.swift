internal import CLibdeflate
import Foundation

/// One PNG chunk: a four-letter type and its data.
public struct PNGChunk: Sendable, Equatable {
    public var type: String
    public var data: Data
    /// Byte offset of the chunk's length field in the file it was read from.
    public var offset: Int

    public init(type: String, data: Data, offset: Int = 0) {
        self.type = type
        self.data = data
        self.offset = offset
    }

    public var isCritical: Bool { type.first?.isUppercase ?? false }
}

/// Reading and writing PNG at the chunk level, in pure Swift: enough to check
/// a file's structure and to splice text chunks in and out without decoding.
public enum PNG {
    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// The largest chunk the spec allows (2^31 - 1).
    public static let maxChunkLength = 0x7FFF_FFFF

    public static func hasSignature(_ data: Data) -> Bool {
        data.count >= 8 && data.prefix(8).elementsEqual(signature)
    }

    /// Walks every chunk up to IEND. Throws `.invalidImage` naming the byte offset
    /// of the first problem: a bad signature, a truncated chunk, a bad CRC, or
    /// data after IEND. `stopAtIDAT` reads only the header chunks.
    public static func chunks(in data: Data, verifyCRC: Bool = true, stopAtIDAT: Bool = false) throws -> [PNGChunk] {
        guard hasSignature(data) else {
            throw BadgeError(.invalidImage, "not a PNG file (the 8-byte PNG signature is missing)")
        }
        var result: [PNGChunk] = []
        var offset = 8
        let base = data.startIndex
        while true {
            guard offset + 12 <= data.count else {
                throw BadgeError(.invalidImage, "the PNG is truncated at byte \(offset) (no IEND chunk)",
                                 hint: "the file was cut short; download or copy it again")
            }
            let length = Int(readUInt32(data, at: base + offset))
            let typeBytes = data[(base + offset + 4)..<(base + offset + 8)]
            guard typeBytes.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else {
                throw BadgeError(.invalidImage, "the PNG has an invalid chunk type at byte \(offset + 4)")
            }
            let type = String(decoding: typeBytes, as: UTF8.self)
            guard length <= maxChunkLength, offset + 12 + length <= data.count else {
                throw BadgeError(.invalidImage, "the PNG chunk \(type) at byte \(offset) claims \(length) bytes but the file ends first",
                                 hint: "the file is truncated or corrupt")
            }
            if stopAtIDAT && type == "IDAT" { return result }
            let payloadStart = base + offset + 8
            let payload = data[payloadStart..<(payloadStart + length)]
            if verifyCRC {
                let stored = readUInt32(data, at: payloadStart + length)
                let computed = CRC32.checksum(typeBytes, payload)
                guard stored == computed else {
                    throw BadgeError(.invalidImage, "the PNG chunk \(type) at byte \(offset) has a bad CRC",
                                     hint: "the file is corrupt")
                }
            }
            // A slice shares the file's bytes: an IDAT is not copied.
            result.append(PNGChunk(type: type, data: payload, offset: offset))
            offset += 12 + length
            if type == "IEND" {
                return result
            }
        }
    }

    /// The chunks a still picture needs, and all that a picture from outside keeps.
    public static let stillImageChunkTypes: Set<String> = ["IHDR", "PLTE", "tRNS", "IDAT", "IEND"]

    /// A PNG that badge did not draw, cut down to IHDR, PLTE, tRNS, IDAT and
    /// IEND: an APNG's frames (acTL, fcTL, fdAT), a server's text (tEXt,
    /// zTXt, iTXt: a workflow, a file name, a decompression bomb) and every
    /// other ancillary chunk are dropped; the pixels are the same. Unknown
    /// critical chunks were refused by the decoder before this. Returns the
    /// data untouched when there is nothing to drop.
    public static func stillImage(_ data: Data) throws -> Data {
        let all = try chunks(in: data)
        let kept = all.filter { stillImageChunkTypes.contains($0.type) }
        return kept.count == all.count ? data : assemble(kept)
    }

    /// Serialises chunks after the signature, computing each CRC.
    public static func assemble(_ chunks: [PNGChunk]) -> Data {
        var out = Data(signature)
        out.reserveCapacity(chunks.reduce(8) { $0 + $1.data.count + 12 })
        for chunk in chunks { append(chunk, to: &out) }
        return out
    }

    static func append(_ chunk: PNGChunk, to out: inout Data) {
        let type = Array(chunk.type.utf8)
        appendUInt32(UInt32(chunk.data.count), to: &out)
        out.append(contentsOf: type)
        out.append(chunk.data)
        appendUInt32(CRC32.checksum(type, chunk.data), to: &out)
    }

    /// An uncompressed international text chunk (UTF-8 text, keyword 1-79 Latin-1 bytes).
    public static func iTXt(keyword: String, text: String) -> PNGChunk {
        var bytes = Array(keyword.utf8.prefix(79))
        bytes += [0, 0, 0]  // NUL, compression flag, compression method
        bytes.append(0)  // empty language tag
        bytes.append(0)  // empty translated keyword
        bytes += text.utf8
        return PNGChunk(type: "iTXt", data: Data(bytes))
    }

    /// Reads keyword and text of an uncompressed iTXt or a tEXt chunk; nil for others.
    public static func textEntry(_ chunk: PNGChunk) -> (keyword: String, text: String)? {
        let bytes = [UInt8](chunk.data)
        guard let nul = bytes.firstIndex(of: 0), nul > 0 else { return nil }
        let keyword = String(decoding: bytes[..<nul], as: UTF8.self)
        switch chunk.type {
        case "tEXt":
            // Latin-1 by the spec.
            return (keyword, String(bytes[(nul + 1)...].map { Character(Unicode.Scalar($0)) }))
        case "iTXt":
            guard nul + 2 < bytes.count, bytes[nul + 1] == 0 else { return nil }  // compressed: not ours
            var i = nul + 3
            guard let languageEnd = bytes[i...].firstIndex(of: 0) else { return nil }
            i = languageEnd + 1
            guard i <= bytes.count, let translatedEnd = bytes[i...].firstIndex(of: 0) else { return nil }
            return (keyword, String(decoding: bytes[(translatedEnd + 1)...], as: UTF8.self))
        default:
            return nil
        }
    }

    /// Reads the text entries before the first IDAT from a file, reading only
    /// as much of it as needed (badge writes its metadata right after IHDR).
    /// The file is opened without blocking and must be a regular file: a FIFO
    /// or a device at the path is refused, not waited on.
    public static func readHeaderText(from url: URL, maxBytes: Int = 1 << 20) throws -> [(keyword: String, text: String)] {
        let file: RegularFile
        do {
            file = try RegularFile(url.path)
        } catch {
            throw BadgeError(.io, "cannot open the file", path: url.path, cause: error.description)
        }
        return try readHeaderText(from: file, path: url.path, maxBytes: maxBytes)
    }

    /// `readHeaderText` of a file already opened (and checked) by descriptor.
    public static func readHeaderText(from file: borrowing RegularFile, path: String, maxBytes: Int = 1 << 20) throws
        -> [(keyword: String, text: String)]
    {
        let url = URL(fileURLWithPath: path)
        func more(_ count: Int) throws -> Data {
            do {
                return try file.read(upTo: count)
            } catch {
                throw BadgeError(.io, "cannot read the file", path: path, cause: error.description)
            }
        }
        var data = Data()
        var entries: [(String, String)] = []
        var offset = 8
        while true {
            // Make sure the next chunk header is in memory.
            while data.count < offset + 8 {
                let more = try more(64 << 10)
                guard !more.isEmpty else {
                    throw BadgeError(.invalidImage, "the PNG is truncated at byte \(data.count)", path: url.path)
                }
                data.append(more)
                if offset == 8 && data.count >= 8 && !hasSignature(data) {
                    throw BadgeError(.invalidImage, "not a PNG file", path: url.path)
                }
            }
            let length = Int(readUInt32(data, at: offset))
            let type = String(decoding: data[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if type == "IDAT" || type == "IEND" { return entries }
            guard length <= maxBytes, offset + 12 + length <= maxBytes + 64 << 10 else {
                throw BadgeError(.invalidImage, "the PNG chunk \(type) at byte \(offset) is too large for metadata", path: url.path)
            }
            while data.count < offset + 12 + length {
                let more = try more(max(64 << 10, offset + 12 + length - data.count))
                guard !more.isEmpty else {
                    throw BadgeError(.invalidImage, "the PNG is truncated at byte \(data.count)", path: url.path)
                }
                data.append(more)
            }
            let chunk = PNGChunk(type: type, data: data[(offset + 8)..<(offset + 8 + length)], offset: offset)
            let stored = readUInt32(data, at: offset + 8 + length)
            guard stored == CRC32.checksum(Data(type.utf8), chunk.data) else {
                throw BadgeError(.invalidImage, "the PNG chunk \(type) at byte \(offset) has a bad CRC", path: url.path)
            }
            if let entry = textEntry(chunk) { entries.append(entry) }
            offset += 12 + length
        }
    }

    /// The whole of `chunk` (length, type, data, CRC) as it stands in `data`,
    /// the file it was read from: for passing a chunk on without recomputing its CRC.
    public static func rawBytes(of chunk: PNGChunk, in data: Data) -> Data {
        let start = data.startIndex + chunk.offset
        return data[start..<(start + 12 + chunk.data.count)]
    }

    static func readUInt32(_ data: Data, at index: Int) -> UInt32 {
        data.withUnsafeBytes { raw in
            let p = raw.baseAddress!.advanced(by: index - data.startIndex).assumingMemoryBound(to: UInt8.self)
            return UInt32(p[0]) << 24 | UInt32(p[1]) << 16 | UInt32(p[2]) << 8 | UInt32(p[3])
        }
    }

    /// The IHDR chunk's data of an image of 8-bit channels, RGB or RGBA, not
    /// interlaced: what badge's encoder writes.
    package static func header(width: Int, height: Int, alpha: Bool) -> Data {
        var ihdr = Data()
        appendUInt32(UInt32(width), to: &ihdr)
        appendUInt32(UInt32(height), to: &ihdr)
        ihdr.append(contentsOf: [8, alpha ? 6 : 2, 0, 0, 0])
        return ihdr
    }

    static func appendUInt32(_ v: UInt32, to out: inout Data) {
        out.append(contentsOf: [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)])
    }
}

/// CRC-32 (ISO 3309, as PNG and zlib use it), by libdeflate's `crc32`, which
/// folds with carry-less multiplication where the CPU has it, several times
/// faster than zlib 1.2.13's `crc32_z` (docs/PERFORMANCE.md, Encoding).
/// Checking a badge's chunks is on every run's path.
public enum CRC32 {
    public static func checksum<A: DataProtocol, B: DataProtocol>(_ a: A, _ b: B) -> UInt32 {
        update(update(0, a), b)
    }

    public static func checksum<A: DataProtocol>(_ a: A) -> UInt32 {
        update(0, a)
    }

    /// A running CRC-32 (libdeflate's, as zlib's) is the finished one of the bytes so far: it goes on from there.
    private static func update<D: DataProtocol>(_ start: UInt32, _ data: D) -> UInt32 {
        var crc = start
        for region in data.regions {
            region.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                crc = libdeflate_crc32(crc, base, raw.count)
            }
        }
        return crc
    }
}
