import BadgeKit
import Foundation

/// A zlib stream that inflates to `count` zero bytes, in fixed Huffman codes:
/// one literal, then matches of 258 bytes at distance 1 (13 bits each).
public func zeroBomb(count: Int) -> Data {
    var out = Data([0x78, 0x01])
    var bits: UInt64 = 0, used = 0
    func put(_ value: Int, _ length: Int) {
        bits |= UInt64(value) << used
        used += length
        while used >= 8 {
            out.append(UInt8(bits & 0xFF))
            bits >>= 8
            used -= 8
        }
    }
    // Huffman codes are written most significant bit first.
    func code(_ value: Int, _ length: Int) {
        var reversed = 0
        for k in 0..<length where value & (1 << k) != 0 { reversed |= 1 << (length - 1 - k) }
        put(reversed, length)
    }
    put(1, 1); put(1, 2)  // the final block, fixed codes
    code(0x30, 8)  // literal 0
    var left = count - 1
    while left >= 258 {
        code(0xC5, 8)  // length 258 (code 285)
        code(0, 5)  // distance 1
        left -= 258
    }
    for _ in 0..<left { code(0x30, 8) }
    code(0, 7)  // end of block (256)
    if used > 0 { put(0, 8 - used) }
    let adler = UInt32(count % 65521) << 16 | 1
    out.append(contentsOf: withUnsafeBytes(of: adler.bigEndian, Array.init))
    return out
}

/// PNGs at exactly 64×64 that carry more than a still picture, as servers
/// and plugins have sent them (issue #31): an APNG, a zTXt that inflates to
/// 64 MB, and ComfyUI-like tEXt naming the upload and a crafted badge:id.
public enum HostilePNG {
    public static let side = 64
    public static let still = TestPNG.solid(width: side, height: side, rgb: (200, 40, 90))
    public static let names = ["APNG", "zTXt bomb", "server tEXt"]

    /// `still` with `extra` chunks inserted after IHDR (and `tail` before IEND).
    public static func with(_ extra: [PNGChunk], tail: [PNGChunk] = []) throws -> Data {
        var chunks = try PNG.chunks(in: still)
        chunks.insert(contentsOf: extra, at: 1)
        chunks.insert(contentsOf: tail, at: chunks.count - 1)
        return PNG.assemble(chunks)
    }

    public static func be32(_ v: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(v).bigEndian, Array.init) }

    /// Two frames: the default image (IDAT) and a second one in fdAT.
    public static func apng() throws -> Data {
        let frame = { (sequence: Int) in
            Data(be32(sequence) + be32(side) + be32(side) + be32(0) + be32(0) + [0, 1, 0, 100, 0, 0])
        }
        let other = try PNG.chunks(in: TestPNG.solid(width: side, height: side, rgb: (0, 255, 0))).first { $0.type == "IDAT" }!
        return try with([PNGChunk(type: "acTL", data: Data(be32(2) + be32(0))), PNGChunk(type: "fcTL", data: frame(0))],
                        tail: [PNGChunk(type: "fcTL", data: frame(1)), PNGChunk(type: "fdAT", data: Data(be32(2)) + other.data)])
    }

    public static func zTXtBomb() throws -> Data {
        try with([PNGChunk(type: "zTXt", data: Data("Comment".utf8) + Data([0, 0]) + zeroBomb(count: 64 << 20))])
    }

    public static func serverText() throws -> Data {
        let workflow = #"{"1": {"class_type": "LoadImage", "inputs": {"image": "holiday-GPS.jpg"}}}"#
        return try with([PNGChunk(type: "tEXt", data: Data("prompt".utf8) + Data([0]) + Data(workflow.utf8)),
                         PNGChunk(type: "tEXt", data: Data("badge:id".utf8) + Data([0]) + Data("../../planted".utf8))])
    }

    public static func make(_ name: String) throws -> Data {
        switch name {
        case "APNG": return try apng()
        case "zTXt bomb": return try zTXtBomb()
        default: return try serverText()
        }
    }
}
