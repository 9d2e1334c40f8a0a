import BadgeCard
import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Testing

/// The animated PNG and GIF files, read back chunk by chunk and block by block.
@Suite(.threadsOfTheirOwn)
struct AnimationFileTests {
    private func u32(_ data: Data, _ at: Int) -> UInt32 {
        data[data.startIndex + at..<data.startIndex + at + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private func u16(_ data: Data, _ at: Int) -> UInt16 {
        UInt16(data[data.startIndex + at]) << 8 | UInt16(data[data.startIndex + at + 1])
    }

    /// Frame `k` of an APNG as a still PNG of its own.
    private func still(_ chunks: [PNGChunk], frame k: Int) -> Data {
        var frames: [[Data]] = []
        for chunk in chunks {
            switch chunk.type {
            case "fcTL": frames.append([])
            case "IDAT": frames[frames.count - 1].append(chunk.data)
            case "fdAT": frames[frames.count - 1].append(chunk.data.dropFirst(4))
            default: break
            }
        }
        return PNG.assemble([chunks[0]] + frames[k].map { PNGChunk(type: "IDAT", data: Data($0)) } + [PNGChunk(type: "IEND", data: Data())])
    }

    @Test func apngChunksAreInOrderWithOneSequence() throws {
        let colours = [RGBA(255, 0, 0), RGBA(0, 255, 0), RGBA(0, 0, 255, 128)]
        let frames = try colours.map { try PNGEncoder.encode(try Canvas(width: 16, height: 12, background: $0), keepAlpha: true) }
        let delays = [APNGEncoder.Delay(seconds: 1), APNGEncoder.Delay(1, 30), APNGEncoder.Delay(seconds: 0.5)]
        let apng = try APNGEncoder.assemble(frames: frames, delays: delays)
        let chunks = try PNG.chunks(in: apng) // every CRC checked
        #expect(chunks.map(\.type) == ["IHDR", "acTL", "fcTL", "IDAT", "fcTL", "fdAT", "fcTL", "fdAT", "IEND"])
        let actl = chunks[1].data
        #expect(u32(actl, 0) == 3 && u32(actl, 4) == 0, "three frames, looping forever")
        var sequence: [UInt32] = []
        var delaysRead: [(UInt16, UInt16)] = []
        for chunk in chunks {
            if chunk.type == "fcTL" {
                sequence.append(u32(chunk.data, 0))
                #expect(u32(chunk.data, 4) == 16 && u32(chunk.data, 8) == 12)
                delaysRead.append((u16(chunk.data, 20), u16(chunk.data, 22)))
                #expect(chunk.data[chunk.data.startIndex + 24] == 0 && chunk.data[chunk.data.startIndex + 25] == 0)
            }
            if chunk.type == "fdAT" { sequence.append(u32(chunk.data, 0)) }
        }
        #expect(sequence == [0, 1, 2, 3, 4])
        #expect(delaysRead.map(\.0) == [1000, 1, 500] && delaysRead.map(\.1) == [1000, 30, 1000])
        // Each frame decodes to the picture it was made from.
        for (k, colour) in colours.enumerated() {
            let image = try GDImage.decodePNG(still(chunks, frame: k))
            let p = image.pixel(8, 6)
            #expect(p.r == colour.r && p.g == colour.g && p.b == colour.b && abs(Int(p.a) - Int(colour.a)) <= 1)
        }
        // A reader that knows no APNG sees the first frame.
        #expect(try GDImage.decodePNG(apng).pixel(0, 0).r == 255)
    }

    /// Every frame of an animated PNG is inflated by zlib before it is written
    /// (`PNGDataCheck`, which `badge card animate` runs through its output file):
    /// a later frame whose data is damaged or of the wrong size is refused by number.
    @Test func theIndependentCheckInflatesEveryFrame() throws {
        let frames = try [RGBA(255, 0, 0), RGBA(0, 255, 0), RGBA(0, 0, 255)].map {
            try PNGEncoder.encode(try Canvas(width: 16, height: 12, background: $0), keepAlpha: true)
        }
        let apng = try APNGEncoder.assemble(frames: frames, delays: Array(repeating: .init(1, 10), count: 3))
        try PNGDataCheck.verify(apng)
        let animation = FlipAnimation(frameRate: 12, size: 48, hold: 0.5)
        let faces = try animation.faces(badge: try Faces.front(side: 96), back: try Faces.back())
        try PNGDataCheck.verify(try animation.encode(.apng, front: faces.front, back: faces.back))

        let chunks = try PNG.chunks(in: apng)
        let lastData = try #require(chunks.lastIndex { $0.type == "fdAT" })
        func replacingLastFrameData(_ data: Data) -> Data {
            var changed = chunks
            changed[lastData] = PNGChunk(type: "fdAT", data: chunks[lastData].data.prefix(4) + data)
            return PNG.assemble(changed)
        }
        func refusal(_ png: Data) -> String {
            do { try PNGDataCheck.verify(png) } catch let error as BadgeError { return error.message } catch { return "\(error)" }
            return "accepted"
        }
        // Cut short: the frame's zlib stream does not end.
        let frameData = chunks[lastData].data.dropFirst(4)
        #expect(refusal(replacingLastFrameData(Data(frameData.prefix(frameData.count / 2)))).contains("ends before its zlib stream does"))
        // A sound stream of a 16×11 picture where the fcTL promises 16×12.
        let smaller = try PNGEncoder.encode(try Canvas(width: 16, height: 11, background: .white), keepAlpha: true)
        let smallerData = try PNG.chunks(in: smaller).filter { $0.type == "IDAT" }.reduce(Data()) { $0 + $1.data }
        #expect(refusal(replacingLastFrameData(smallerData)).contains("holds \(11 * (1 + 16 * 4)) bytes where its header promises \(12 * (1 + 16 * 4))"))
        // A frame control chunk with no data after it.
        var orphan = chunks
        orphan.remove(at: lastData)
        #expect(refusal(PNG.assemble(orphan)) == "frame 3 of the animated PNG has no image data (fdAT)")
    }

    @Test func framesOfDifferentSizesAreRefused() throws {
        let a = try PNGEncoder.encode(try Canvas(width: 8, height: 8, background: .white), keepAlpha: true)
        let b = try PNGEncoder.encode(try Canvas(width: 9, height: 8, background: .white), keepAlpha: true)
        let error = #expect(throws: BadgeError.self) { try APNGEncoder.assemble(frames: [a, b], delays: [.init(1, 10), .init(1, 10)]) }
        #expect(error?.code == .generationFailed, "\(String(describing: error))")
        #expect(error?.message == "frame 1 of the animation differs in size or colour type from the first", "\(String(describing: error))")
    }

    @Test func theFlipAsAPNGIsTrueColourWithEveryFrame() throws {
        let animation = FlipAnimation(frameRate: 12, size: 48, hold: 0.5)
        let faces = try animation.faces(badge: try Faces.front(side: 96), back: try Faces.back())
        let chunks = try PNG.chunks(in: try animation.encode(.apng, front: faces.front, back: faces.back))
        let ihdr = chunks[0].data
        #expect(u32(ihdr, 0) == 48 && ihdr[ihdr.startIndex + 8] == 8 && ihdr[ihdr.startIndex + 9] == 6, "8-bit RGBA")
        #expect(u32(chunks[1].data, 0) == UInt32(animation.frames.count))
        let controls = chunks.filter { $0.type == "fcTL" }
        #expect(controls.count == animation.frames.count)
        #expect(u16(controls[0].data, 20) == 500 && u16(controls[0].data, 22) == 1000)
        #expect(u16(controls[1].data, 20) == 1 && u16(controls[1].data, 22) == 12)
        // The corners around the card stay transparent; the middle of the frame resting on the back is opaque.
        let back = try #require(animation.frames.firstIndex { $0.side == .back && $0.duration == 0.5 })
        let rest = try GDImage.decodePNG(still(chunks, frame: back))
        #expect(rest.pixel(0, 0).a == 0)
        #expect(rest.pixel(24, 24).a == 255)
    }

    /// The frame delays of a GIF, block by block (GIF89a: extensions and images in sub-blocks).
    private func gifDelays(_ gif: Data) throws -> (delays: [Int], loops: Bool, images: Int) {
        let bytes = [UInt8](gif)
        #expect(Array(bytes[0..<6]) == Array("GIF89a".utf8))
        var i = 13
        if bytes[10] & 0x80 != 0 { i += 3 << (Int(bytes[10] & 7) + 1) }
        var delays: [Int] = [], loops = false, images = 0
        func skipSubBlocks() { while bytes[i] != 0 { i += Int(bytes[i]) + 1 }; i += 1 }
        while i < bytes.count {
            switch bytes[i] {
            case 0x21:
                let label = bytes[i + 1]
                if label == 0xF9 { delays.append(Int(bytes[i + 4]) | Int(bytes[i + 5]) << 8) }
                if label == 0xFF && String(decoding: bytes[(i + 3)..<(i + 14)], as: UTF8.self) == "NETSCAPE2.0" { loops = true }
                i += 2
                skipSubBlocks()
            case 0x2C:
                images += 1
                let packed = bytes[i + 9]
                i += 10
                if packed & 0x80 != 0 { i += 3 << (Int(packed & 7) + 1) }
                i += 1 // LZW minimum code size
                skipSubBlocks()
            case 0x3B:
                return (delays, loops, images)
            default:
                Issue.record("unexpected GIF block 0x\(String(bytes[i], radix: 16)) at \(i)")
                return (delays, loops, images)
            }
        }
        Issue.record("the GIF has no trailer")
        return (delays, loops, images)
    }

    @Test func theFlipAsGIFHasEveryFrameAndItsTiming() throws {
        let animation = FlipAnimation(frameRate: 30, size: 48, hold: 1)
        let faces = try animation.faces(badge: try Faces.front(side: 96), back: try Faces.back())
        let gif = try animation.encode(.gif, front: faces.front, back: faces.back)
        let parsed = try gifDelays(gif)
        #expect(parsed.loops)
        #expect(parsed.images == animation.frames.count)
        #expect(parsed.delays.count == animation.frames.count)
        // Resting a second on the front and on the back; 30 fps in hundredths: 3s and 4s, adding up to the true length.
        #expect(parsed.delays.filter { $0 == 100 }.count == 2 && parsed.delays.first == 100)
        #expect(Set(parsed.delays.filter { $0 != 100 }).isSubset(of: [3, 4]))
        let total = animation.frames.reduce(0) { $0 + $1.duration }
        #expect(abs(Double(parsed.delays.reduce(0, +)) - total * 100) <= 1)
        // gd reads it back; the background is opaque white (within the quantiser's rounding).
        let corner = try GDImage.decode(gif, accepting: [.gif]).pixel(0, 0)
        #expect(corner.a == 255 && min(corner.r, corner.g, corner.b) >= 248, "\(corner)")
    }

    @Test func aGIFCannotPlayFasterThan50FramesASecond() throws {
        let animation = FlipAnimation(frameRate: 60, size: 32)
        let faces = try animation.faces(badge: try Faces.front(side: 64), back: try Faces.back())
        let error = #expect(throws: BadgeError.self) { try animation.encode(.gif, front: faces.front, back: faces.back) }
        #expect(error?.code == .usage, "\(String(describing: error))")
        #expect(error?.message == "a GIF cannot play 60 frames a second", "\(String(describing: error))")
        #expect(error?.hint == "use --fps 50 or less, or write an animated PNG (.png)", "\(String(describing: error))")
    }
}
