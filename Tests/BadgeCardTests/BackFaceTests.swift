import BadgeCard
import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Testing

@Suite(.threadsOfTheirOwn)
struct BackFaceTests {
    @Test(arguments: [200, 333, 512])
    func theBackIsTheSizeOfTheFront(side: Int) throws {
        let back = try Faces.back().render(front: try Faces.front(side: side))
        #expect(back.width == side && back.height == side)
    }

    @Test func theDateIsDrawnWhereTheLayoutSaysAndNowhereElse() throws {
        let front = try Faces.front(side: 300)
        let face = try Faces.back()
        let withText = try face.render(front: front)
        let bare = try face.render(front: front, text: false)
        let layout = try face.layout(width: 300, height: 300)
        let box = layout.textBox
        let symbol = (x: Int(layout.symbol.x) - 2, y: Int(layout.symbol.y) - 2, side: Int(layout.symbol.size) + 4)
        var changedInText = 0, changedElsewhere = 0
        for y in 0..<300 {
            for x in 0..<300 where withText.pixel(x, y) != bare.pixel(x, y) {
                let inText = x >= box.x - 2 && x < box.x + box.width + 2 && y >= box.y - 2 && y < box.y + box.height + 2
                let inSymbol = x >= symbol.x && x < symbol.x + symbol.side && y >= symbol.y && y < symbol.y + symbol.side
                if inText { changedInText += 1 } else if !inSymbol { changedElsewhere += 1 }
            }
        }
        #expect(changedInText > 1500, "the words cover \(changedInText) pixels")
        #expect(changedElsewhere == 0)
        // Dark ink on pale frosting: the text region gets clearly darker.
        let inked = Faces.luminance(Faces.mean(withText, x: box.x, y: box.y, width: box.width, height: box.height))
        let plain = Faces.luminance(Faces.mean(bare, x: box.x, y: box.y, width: box.width, height: box.height))
        #expect(plain > 0.55 && inked < plain - 0.1, "material \(plain), with text \(inked)")
    }

    @Test func theDateLineChangesWithTheDate() throws {
        let front = try Faces.front(side: 300)
        let a = try Faces.back(date: "November 22, 2026"), b = try Faces.back(date: "January 1, 2027")
        let ra = try a.render(front: front), rb = try b.render(front: front)
        let la = try a.layout(width: 300, height: 300), lb = try b.layout(width: 300, height: 300)
        // The label line is the same; the date line differs.
        #expect(la.lines[0] == lb.lines[0])
        let line = la.lines[1]
        var differing = 0
        for y in line.y..<(line.y + line.height) { for x in 0..<300 where ra.pixel(x, y) != rb.pixel(x, y) { differing += 1 } }
        #expect(differing > 300)
        let label = la.lines[0]
        for y in label.y..<(label.y + label.height) { for x in 0..<300 { #expect(ra.pixel(x, y) == rb.pixel(x, y)) } }
    }

    @Test func theStackIsCentredAndScalesWithTheCard() throws {
        let face = try Faces.back()
        for side in [300, 600] {
            let layout = try face.layout(width: side, height: side)
            for line in layout.lines {
                #expect(abs(Double(line.x) + Double(line.width) / 2 - Double(side) / 2) <= 1.5)
            }
            #expect(abs(layout.symbol.x + layout.symbol.size / 2 - Double(side) / 2) < 0.01)
            let top = layout.symbol.y, bottom = Double(layout.textBox.y + layout.textBox.height)
            #expect(abs((top + bottom) / 2 - Double(side) / 2) < Double(side) * 0.03, "the stack is centred vertically")
            // .headline: 17 points on the app's 300-point card.
            #expect(abs(layout.pixelSize - 17 * Double(side) / 300) < 0.01)
        }
    }

    @Test func aLongDateShrinksToFit() throws {
        let face = try Faces.back(date: "Mittwoch, 22. November 2026 (gregorianisch)")
        let layout = try face.layout(width: 300, height: 300)
        #expect(layout.pixelSize < 17)
        for line in layout.lines { #expect(line.x >= 15 && line.x + line.width <= 285) }
    }

    @Test func theCornersAreRoundedLikeTheApps() throws {
        let back = try Faces.back().render(front: try Faces.front(side: 300))
        #expect(back.pixel(0, 0).a == 0 && back.pixel(299, 299).a == 0)
        // A radius of 20 on a 300 px card: (5, 0) is outside the arc, (25, 0) past it.
        #expect(back.pixel(5, 0).a == 0 && back.pixel(0, 5).a == 0 && back.pixel(294, 0).a == 0)
        #expect(back.pixel(25, 0).a == 255 && back.pixel(150, 150).a == 255 && back.pixel(0, 150).a == 255)
    }

    @Test func theMaterialIsTheFrontFrosted() throws {
        // A frosted red badge gives a reddish back; a blue one a bluish back.
        for (colour, channel) in [(RGBA(220, 30, 30), 0), (RGBA(30, 30, 220), 2)] {
            let front = try GDImage(try Canvas(width: 128, height: 128, background: colour))
            let bare = try Faces.back().render(front: front, text: false)
            let c = Faces.mean(bare, x: 40, y: 40, width: 48, height: 48)
            let values = [c.r, c.g, c.b]
            #expect(values[channel] == values.max(), "\(values)")
            #expect(Faces.luminance(c) > 0.45, "lightened")
        }
    }
}

/// A round badge's card is round on both faces, all the way round the flip.
@Suite(.threadsOfTheirOwn)
struct RoundCardTests {
    /// A round badge as the procedural backend draws one (flat: no shadow): a
    /// rim to 0.455 of the side, a face within 0.385, transparent around.
    static func roundBadge(side: Int = 192) throws -> GDImage {
        let canvas = try Canvas(width: side, height: side)
        let s = Double(side), c = Point(s / 2, s / 2)
        canvas.fill(.circle(center: c, radius: s * 0.455), with: .solid(RGBA(200, 160, 60)))
        canvas.fill(.circle(center: c, radius: s * 0.385), with: .solid(RGBA(30, 60, 120)))
        canvas.fill(.circle(center: Point(s * 0.42, s * 0.42), radius: s * 0.1), with: .solid(.white))
        return try GDImage(canvas)
    }

    @Test func theBackOfARoundBadgeIsRoundWithTheSameRim() throws {
        let front = try Self.roundBadge()
        let disc = try #require(CardShape.disc(of: front))
        #expect(abs(disc.radius - 192 * 0.455) < 1.5)
        #expect(CardShape.disc(of: try Faces.front(side: 96)) == nil, "a square picture has a square back")
        let back = try Faces.back().render(front: front)
        for (x, y) in [(2, 2), (189, 2), (2, 189), (189, 189), (96, 3), (3, 96)] { #expect(back.pixel(x, y).a == 0, "(\(x), \(y))") }
        // The rim is the front's, pixel for pixel; the face is the material.
        for k in 0..<36 {
            let a = Double(k) / 36 * 2 * .pi, r = 192 * 0.42
            let x = Int(96 + cos(a) * r), y = Int(96 + sin(a) * r)
            #expect(back.pixel(x, y) == front.pixel(x, y))
        }
        #expect(back.pixel(96, 96).a == 255)
    }

    /// Every frame of the flip, on either face: nothing outside the badge's disc, as warped.
    @Test func everyFramesAlphaOutsideTheDiscIsZero() throws {
        let animation = FlipAnimation(frameRate: 12, size: 128, hold: 0.5)
        let faces = try animation.faces(badge: try Self.roundBadge(), back: try Faces.back())
        // The disc (with a pixel to spare for the resampling), warped as each frame is.
        let side = Int(animation.warp.cardSide.rounded())
        let mask = try Canvas(width: side, height: side)
        mask.fill(.circle(center: Point(Double(side) / 2, Double(side) / 2), radius: Double(side) * 0.455 + 1.5), with: .solid(.white))
        let disc = FaceTexture(mask)
        var sides = Set<CardSide>()
        for frame in animation.frames {
            let picture = try animation.render(frame, front: faces.front, back: faces.back)
            let allowed = try Canvas(width: 128, height: 128)
            animation.warp.render(disc, degrees: frame.faceAngle, into: allowed)
            var outside = 0
            for y in 0..<128 { for x in 0..<128 where allowed.pixel(x, y).a == 0 && picture.pixel(x, y).a != 0 { outside += 1 } }
            #expect(outside == 0, "\(frame.side) at \(frame.angle)°: \(outside) pixels outside the disc")
            sides.insert(frame.side)
        }
        #expect(sides == [.front, .back])
    }
}
