import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Testing

/// `badge card flip`'s animated PNG and GIF, decoded by two readers that are
/// not badge's: Pillow (Debian's python3-pil, Witnesses/pillow_frames.py) and
/// Chromium's own image decoder (Browser/animation_frames.py). Each must find
/// the frames badge says it wrote, at the size asked for, looping for ever,
/// with the rests and the frame times badge wrote; the two must agree on every
/// pixel of every frame; and the frames must show the card turning: the front
/// at rest first, the back (the right way round) at rest in the middle, turned
/// between, its far edge shorter the way it turns.
@Suite(.threadsOfTheirOwn)
struct AnimationWitnessTests {
    static let pillow = Sandbox.repository.appendingPathComponent("Tests/BadgeCLITests/Witnesses/pillow_frames.py")
    static let chromium = Sandbox.repository.appendingPathComponent("Tests/BadgeCLITests/Browser/animation_frames.py")

    /// One animation as a reader decoded it.
    struct Decoded {
        var reader: String
        var width: Int
        var height: Int
        var frames: [[UInt8]]
        var durations: [Double]
        /// 0 or "forever": plays for ever; another number: that many times.
        var loop: Any?

        var loopsForever: Bool { (loop as? NSNumber)?.intValue == 0 && reader == "Pillow" || loop as? String == "forever" }

        func pixel(_ frame: Int, _ x: Int, _ y: Int) -> RGBA {
            let i = (y * width + x) * 4
            let p = frames[frame]
            return RGBA(p[i], p[i + 1], p[i + 2], p[i + 3])
        }

        init(reader: String, json: Data) throws {
            self.reader = reader
            let o = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any], "\(reader): not JSON: \(String(decoding: json.prefix(400), as: UTF8.self))")
            width = (o["width"] as? NSNumber)?.intValue ?? 0
            height = (o["height"] as? NSNumber)?.intValue ?? 0
            durations = (o["durations_ms"] as? [Any] ?? []).map { ($0 as? NSNumber)?.doubleValue ?? .nan }
            loop = o["loop"]
            frames = try (o["pixels"] as? [String] ?? []).map { try #require(Data(base64Encoded: $0)).map { $0 } }
            #expect((o["frames"] as? NSNumber)?.intValue == frames.count, "\(reader): the frame count and the frames decoded differ")
            #expect(frames.allSatisfy { $0.count == width * height * 4 }, "\(reader): a frame of another size")
        }
    }

    static func decode(_ file: URL, mime: String, _ s: Sandbox) async throws -> [Decoded] {
        let pillow = try await HelperProgram.run(["/usr/bin/python3", Self.pillow.path, file.path], environment: s.environment, limit: 120)
        try #require(pillow.status == 0 && !pillow.killed, "Pillow could not read \(file.lastPathComponent): \(pillow.why)")
        let chromium = try await HelperProgram.run(["python3", Self.chromium.path, file.path, mime], environment: s.environment, limit: 300)
        try #require(chromium.status == 0 && !chromium.killed, "Chromium could not read \(file.lastPathComponent): \(chromium.why)")
        return [try Decoded(reader: "Pillow", json: pillow.stdout), try Decoded(reader: "Chromium", json: chromium.stdout)]
    }

    /// The box of the pixels `inside` says belong to the card in frame `k`.
    static func box(_ d: Decoded, _ k: Int, inside: (RGBA) -> Bool) -> (x: Int, y: Int, width: Int, height: Int)? {
        var minX = Int.max, minY = Int.max, maxX = -1, maxY = -1
        for y in 0..<d.height {
            for x in 0..<d.width where inside(d.pixel(k, x, y)) {
                minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
            }
        }
        return maxX < 0 ? nil : (minX, minY, maxX - minX + 1, maxY - minY + 1)
    }

    /// How many pixels of column `x` of frame `k` belong to the card.
    static func columnHeight(_ d: Decoded, _ k: Int, _ x: Int, inside: (RGBA) -> Bool) -> Int {
        (0..<d.height).filter { inside(d.pixel(k, x, $0)) }.count
    }

    /// Mean colour of each cell of a `cells`×`cells` grid over the inner part of the
    /// card's box (clear of the rounded corners), each channel 0–1.
    static func grid(cells: Int, width: Int, height: Int, _ pixel: (Int, Int) -> RGBA) -> [Double] {
        var out: [Double] = []
        for cy in 0..<cells {
            for cx in 0..<cells {
                var sum = [0.0, 0.0, 0.0], n = 0.0
                for y in (cy * height / cells)..<max(cy * height / cells + 1, (cy + 1) * height / cells) {
                    for x in (cx * width / cells)..<max(cx * width / cells + 1, (cx + 1) * width / cells) {
                        let p = pixel(x, y)
                        sum[0] += Double(p.r) / 255; sum[1] += Double(p.g) / 255; sum[2] += Double(p.b) / 255
                        n += 1
                    }
                }
                out += sum.map { $0 / n }
            }
        }
        return out
    }

    static func distance(_ a: [Double], _ b: [Double]) -> Double {
        zip(a, b).map { abs($0 - $1) }.reduce(0, +) / Double(a.count)
    }

    /// The grid of a face image (the badge, the back badge drew), over the same inner part.
    static func grid(of image: GDImage, cells: Int, mirrored: Bool = false) -> [Double] {
        let inset = image.width / 8
        let side = image.width - 2 * inset
        return grid(cells: cells, width: side, height: side) { x, y in
            image.pixel(mirrored ? image.width - 1 - inset - x : inset + x, inset + y)
        }
    }

    static func grid(of d: Decoded, frame k: Int, box: (x: Int, y: Int, width: Int, height: Int), cells: Int) -> [Double] {
        let inset = box.width / 8
        return grid(cells: cells, width: box.width - 2 * inset, height: box.height - 2 * inset) { x, y in
            d.pixel(k, box.x + inset + x, box.y + inset + y)
        }
    }

    /// How far apart two readings of a pixel are: alpha, and colour where it is
    /// seen (premultiplied by its alpha).
    static func gap(_ a: RGBA, _ b: RGBA) -> Int {
        func seen(_ c: UInt8, _ alpha: UInt8) -> Int { Int(c) * Int(alpha) / 255 }
        let alpha = abs(Int(a.a) - Int(b.a))
        let red = abs(seen(a.r, a.a) - seen(b.r, b.a)), green = abs(seen(a.g, a.a) - seen(b.g, b.a))
        let blue = abs(seen(a.b, a.a) - seen(b.b, b.a))
        return max(alpha, red, green, blue)
    }

    /// The number of frames badge says it wrote ("… 23 frames at 12 fps …").
    static func framesClaimed(_ stdout: String) throws -> Int {
        let match = try #require(stdout.firstMatch(of: /(\d+) frames at (\d+) fps/), "badge did not say how many frames: \(stdout)")
        return try #require(Int(match.1))
    }

    @Test func theFlipAsAnimatedPNGAndGIFIsWhatPillowAndChromiumShow() async throws {
        let s = try Sandbox()
        let made = try await s.run(["generate", "--style", "tile", "--size", "192", "--seed", "7", "--date", "2027-03-14", "Swim forty lengths every Saturday"])
        try #require(made.status == 0, "\(made.stderr)")
        let backFile = s.root.appendingPathComponent("back.png")
        let back = try await s.run(["card", "back", "-o", backFile.path])
        try #require(back.status == 0, "\(back.stderr)")
        let frontImage = try GDImage.decodePNG(try #require(s.badge))
        let backImage = try GDImage.decodePNG(try Data(contentsOf: backFile))

        let size = 128, fps = 12, hold = 0.5
        let apngFile = s.root.appendingPathComponent("flip.png"), gifFile = s.root.appendingPathComponent("flip.gif")
        let apngRun = try await s.run(["card", "flip", "-o", apngFile.path, "--size", "\(size)", "--fps", "\(fps)", "--hold", "\(hold)",
                                       "--direction", "right"])
        try #require(apngRun.status == 0, "\(apngRun.stderr)")
        let gifRun = try await s.run(["card", "flip", "-o", gifFile.path, "--size", "\(size)", "--fps", "\(fps)", "--hold", "\(hold)",
                                      "--background", "#203040"])
        try #require(gifRun.status == 0, "\(gifRun.stderr)")
        let count = try Self.framesClaimed(apngRun.stdout)
        #expect(try Self.framesClaimed(gifRun.stdout) == count)
        #expect(count >= 12 && count % 2 == 0, "the turn there and the turn back, with a rest on each face: \(count) frames")
        let middle = count / 2
        // "the turn takes 1.11 s": the frames of one turn, 1/12 s apart, are as many as it takes.
        let turnMatch = try #require(apngRun.stdout.firstMatch(of: /the turn takes (\d+\.\d+) s/), "\(apngRun.stdout)")
        let turn = try #require(Double(turnMatch.1)) * Double(fps)
        #expect(Double(middle) > turn - 0.1 && Double(middle - 1) < turn + 0.1, "\(middle) frames to the back for a turn of \(turn / Double(fps)) s")

        let apng = try await Self.decode(apngFile, mime: "image/png", s)
        let gif = try await Self.decode(gifFile, mime: "image/gif", s)
        let step = 1000 / Double(fps), total = 2 * hold * 1000 + Double(count - 2) * step

        for (format, d) in apng.map({ ("APNG", $0) }) + gif.map({ ("GIF", $0) }) {
            let what = "\(d.reader), \(format)"
            try #require(d.frames.count == count, "\(what): \(d.frames.count) frames where badge wrote \(count)")
            #expect(d.width == size && d.height == size, "\(what): \(d.width)×\(d.height)")
            #expect(d.loopsForever, "\(what): loop \(String(describing: d.loop))")
            // A rest on the front (first) and on the back (middle), 1/12 s for every other frame:
            // exact in the animated PNG (a fraction), in whole hundredths in the GIF that never drift.
            #expect(d.durations[0] == hold * 1000 && d.durations[middle] == hold * 1000, "\(what): \(d.durations)")
            let others = d.durations.indices.filter { $0 != 0 && $0 != middle }.map { d.durations[$0] }
            if format == "APNG" {
                #expect(others.allSatisfy { abs($0 - step) < 0.5 }, "\(what): \(d.durations)")
            } else {
                #expect(others.allSatisfy { $0 == 80 || $0 == 90 }, "\(what): \(d.durations)")
            }
            #expect(abs(d.durations.reduce(0, +) - total) <= 10, "\(what): \(d.durations.reduce(0, +)) ms in all, not \(total)")
        }

        // The two readers agree on every pixel of every frame.
        for (name, pair) in [("APNG", apng), ("GIF", gif)] {
            var worst = 0, at = ""
            for k in 0..<count {
                for y in 0..<size {
                    for x in 0..<size {
                        let a = pair[0].pixel(k, x, y), b = pair[1].pixel(k, x, y)
                        let gap = Self.gap(a, b)
                        if gap > worst { (worst, at) = (gap, "frame \(k) (\(x), \(y)): Pillow \(a), Chromium \(b)") }
                    }
                }
            }
            #expect(worst <= 2, "\(name): Pillow and Chromium disagree by \(worst) at \(at)")
        }

        let cells = 12
        let front = Self.grid(of: frontImage, cells: cells), backGrid = Self.grid(of: backImage, cells: cells)
        let mirror = Self.grid(of: backImage, cells: cells, mirrored: true)
        let background = RGBA(0x20, 0x30, 0x40)
        func near(_ p: RGBA, _ q: RGBA, _ tolerance: Int) -> Bool {
            abs(Int(p.r) - Int(q.r)) <= tolerance && abs(Int(p.g) - Int(q.g)) <= tolerance && abs(Int(p.b) - Int(q.b)) <= tolerance
        }
        for (d, inside, name) in [(apng[0], { (p: RGBA) in p.a >= 128 }, "APNG"), (gif[0], { (p: RGBA) in !near(p, background, 12) }, "GIF")] {
            // Around the card: transparent, or the GIF's background, in every frame.
            for k in 0..<count {
                let corner = d.pixel(k, 0, 0)
                if name == "APNG" {
                    #expect(corner.a == 0, "\(name) frame \(k): corner \(corner)")
                } else {
                    #expect(corner.a == 255 && near(corner, background, 6), "\(name) frame \(k): corner \(corner)")
                }
            }
            // At rest: the front first, the back in the middle, the right way round.
            let rest = try #require(Self.box(d, 0, inside: inside), "\(name): frame 0 is empty")
            #expect(rest.width > size * 2 / 3 && abs(rest.width - rest.height) <= 2, "\(name): the card at rest is \(rest)")
            let first = Self.grid(of: d, frame: 0, box: rest, cells: cells)
            let shownBack = Self.grid(of: d, frame: middle, box: try #require(Self.box(d, middle, inside: inside)), cells: cells)
            let (firstToFront, firstToBack) = (Self.distance(first, front), Self.distance(first, backGrid))
            #expect(firstToFront < 0.06 && firstToFront < firstToBack / 2, "\(name): frame 0 is not the front (front \(firstToFront), back \(firstToBack))")
            let (middleToBack, middleToFront) = (Self.distance(shownBack, backGrid), Self.distance(shownBack, front))
            #expect(middleToBack < 0.06 && middleToBack < middleToFront / 2, "\(name): frame \(middle) is not the back (back \(middleToBack), front \(middleToFront))")
            #expect(middleToBack < Self.distance(shownBack, mirror), "\(name): the back is mirrored")
            print("\(name) at rest: frame 0 from the front \(firstToFront), from the back \(firstToBack); frame \(middle) from the back \(middleToBack), "
                + "from the front \(middleToFront), from the mirrored back \(Self.distance(shownBack, mirror))")

            // Between the rests the card turns: every frame differs from the rest before it, and
            // it is seen foreshortened (the springs pass 90° between two frames at 12 fps, so
            // narrower than three quarters of its width, not edge-on) on the way over and home.
            let widths = (0..<count).map { Self.box(d, $0, inside: inside)?.width ?? 0 }
            #expect(widths[1..<middle].min()! < rest.width * 3 / 4, "\(name): never turned on the way over: \(widths)")
            #expect(widths[(middle + 1)...].min()! < rest.width * 3 / 4, "\(name): never turned on the way home: \(widths)")
            for k in 1..<middle {
                let changed = (0..<size * size).filter { d.pixel(k, $0 % size, $0 / size) != d.pixel(0, $0 % size, $0 / size) }.count
                #expect(changed > size * size / 50, "\(name): frame \(k) looks like the rest on the front (\(changed) pixels differ)")
            }
            // Turning, the edge going away is the shorter one: the right edge for --direction right
            // (the animated PNG), the left for the default, left (the GIF).
            let turning = try #require((1..<middle).first { widths[$0] < rest.width * 9 / 10 && widths[$0] > rest.width / 2 },
                                       "\(name): no frame early in the turn: \(widths)")
            let box = try #require(Self.box(d, turning, inside: inside))
            let left = Self.columnHeight(d, turning, box.x + 1, inside: inside)
            let right = Self.columnHeight(d, turning, box.x + box.width - 2, inside: inside)
            if name == "APNG" {
                #expect(right < left - 2, "APNG frame \(turning): the right edge should go away (left \(left) px, right \(right) px)")
            } else {
                #expect(left < right - 2, "GIF frame \(turning): the left edge should go away (left \(left) px, right \(right) px)")
            }
        }
        // The GIF shows what the animated PNG shows, on its background.
        for k in [0, middle] {
            let box = try #require(Self.box(apng[0], k, inside: { $0.a >= 128 }))
            let composed = Self.grid(cells: cells, width: box.width, height: box.height) { x, y in
                let p = apng[0].pixel(k, box.x + x, box.y + y), a = Double(p.a) / 255
                func over(_ c: UInt8, _ b: UInt8) -> UInt8 { UInt8((Double(c) * a + Double(b) * (1 - a)).rounded()) }
                return RGBA(over(p.r, background.r), over(p.g, background.g), over(p.b, background.b))
            }
            let shown = Self.grid(cells: cells, width: box.width, height: box.height) { x, y in gif[0].pixel(k, box.x + x, box.y + y) }
            #expect(Self.distance(composed, shown) < 0.02, "GIF frame \(k) differs from the animated PNG's: \(Self.distance(composed, shown))")
        }
    }
}
