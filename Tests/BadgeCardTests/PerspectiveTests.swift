import BadgeCard
import BadgeTestSupport
import Canvas
import Foundation
import Testing

@Suite(.threadsOfTheirOwn)
struct PerspectiveTests {
    /// Rows of opaque pixels in `column`: the card's height there.
    private func height(_ canvas: Canvas, column: Int) -> Int {
        (0..<canvas.height).filter { canvas.pixel(column, $0).a > 128 }.count
    }

    /// The first and last columns with any opaque pixel.
    private func extent(_ canvas: Canvas) -> (Int, Int) {
        let columns = (0..<canvas.width).filter { x in (0..<canvas.height).contains { canvas.pixel(x, $0).a > 128 } }
        return (columns.first ?? -1, columns.last ?? -1)
    }

    private func square(_ side: Int) throws -> FaceTexture {
        FaceTexture(try Canvas(width: side, height: side, background: RGBA(40, 90, 200)))
    }

    @Test func atRestTheCardIsUpright() throws {
        let warp = PerspectiveWarp(outputSize: 240)
        let canvas = try Canvas(width: 240, height: 240)
        warp.render(try square(200), degrees: 0, into: canvas)
        let (left, right) = extent(canvas)
        #expect(abs(Double(right - left + 1) - warp.cardSide) <= 1)
        #expect(abs(height(canvas, column: left + 2) - height(canvas, column: right - 2)) <= 1)
        #expect(abs(Double(height(canvas, column: 120)) - warp.cardSide) <= 1)
    }

    @Test(arguments: [45.0, -45.0])
    func at45DegreesTheNearEdgeIsTallerThanTheFarEdge(degrees: Double) throws {
        let warp = PerspectiveWarp(outputSize: 240)
        let canvas = try Canvas(width: 240, height: 240)
        warp.render(try square(200), degrees: degrees, into: canvas)
        let (left, right) = extent(canvas)
        let leftHeight = height(canvas, column: left + 1), rightHeight = height(canvas, column: right - 1)
        // A positive angle sends the right edge away: the left edge is near.
        let (near, far) = degrees > 0 ? (leftHeight, rightHeight) : (rightHeight, leftHeight)
        let rest = Int(warp.cardSide.rounded())
        #expect(near > rest + 10, "near edge \(near) px, card at rest \(rest) px")
        #expect(far < rest - 10, "far edge \(far) px")
        // A pinhole camera three widths away: heights scale as d/(d ∓ ½·w·sin 45°).
        let expectedNear = warp.cardSide * 3 / (3 - 0.5 * sin(.pi / 4))
        let expectedFar = warp.cardSide * 3 / (3 + 0.5 * sin(.pi / 4))
        #expect(abs(Double(near) - expectedNear) < 4, "\(near) vs \(expectedNear)")
        #expect(abs(Double(far) - expectedFar) < 4, "\(far) vs \(expectedFar)")
        // Foreshortened, and centred on the axis in perspective (not a squash about the middle).
        let width = right - left + 1
        #expect(Double(width) < warp.cardSide * 0.8)
        let centre = Double(left + right) / 2
        #expect(degrees > 0 ? centre < 119 : centre > 121, "the near half looks wider: centre at \(centre)")
    }

    @Test func edgeOnAt90DegreesTheCardAlmostVanishes() throws {
        let warp = PerspectiveWarp(outputSize: 120)
        let canvas = try Canvas(width: 120, height: 120)
        warp.render(try square(100), degrees: 89.5, into: canvas)
        let (left, right) = extent(canvas)
        #expect(right - left < 4)
    }

    @Test func theWarpKeepsThePictureNotItsMirror() throws {
        // A face whose left half is red and right half is blue stays that way at 30°.
        let face = try Canvas(width: 100, height: 100, background: RGBA(200, 0, 0))
        face.fill(.roundedRect(x: 50, y: 0, width: 50, height: 100, radius: 0), with: .solid(RGBA(0, 0, 200)))
        let canvas = try Canvas(width: 120, height: 120)
        PerspectiveWarp(outputSize: 120).render(FaceTexture(face), degrees: 30, into: canvas)
        let (left, right) = extent(canvas)
        #expect(canvas.pixel(left + 3, 60).r > 150 && canvas.pixel(right - 3, 60).b > 150)
    }

    @Test func flipFramesShowTheRightFaceTheRightWayRound() throws {
        let animation = FlipAnimation(frameRate: 30, size: 96)
        let faces = try animation.faces(badge: try Faces.front(side: 128), back: try Faces.back())
        let frames = animation.frames
        let first = try animation.render(frames[0], front: faces.front, back: faces.back)
        // The frame resting on the back, half way round the loop.
        let restIndex = try #require(frames.firstIndex { abs($0.angle) == 180 })
        let last = try animation.render(frames[restIndex], front: faces.front, back: faces.back)
        // The front is dark navy, the back pale frosting.
        #expect(Faces.luminance(Faces.mean(first, x: 40, y: 40, width: 16, height: 16)) < 0.25)
        #expect(Faces.luminance(Faces.mean(last, x: 24, y: 20, width: 48, height: 10)) > 0.5)
        // Resting, the back face itself, upright: the warp at 0° reproduces it.
        let direct = try Canvas(width: 96, height: 96)
        animation.warp.render(faces.back, degrees: 0, into: direct)
        #expect(last.pixels == direct.pixels)
        // A frame of the turn near 45° (turning left: the right edge comes near) is in perspective.
        let slanted = try #require(frames.first { abs(abs($0.angle) - 45) < 20 }, "no frame near 45°")
        let canvas = try animation.render(slanted, front: faces.front, back: faces.back)
        let (l, r) = extent(canvas)
        #expect(height(canvas, column: r - 1) > height(canvas, column: l + 1) + 4,
                "at \(slanted.angle)° the near (right) edge is taller: \(height(canvas, column: r - 1)) vs \(height(canvas, column: l + 1))")
        // Every frame between 90° and 270° is drawn from the back.
        for frame in frames where abs(frame.angle) > 95 && abs(frame.angle) < 265 {
            let canvas = try animation.render(frame, front: faces.front, back: faces.back)
            let (l, r) = extent(canvas)
            let middle = Faces.mean(canvas, x: (l + r) / 2 - 2, y: 30, width: 4, height: 8)
            #expect(Faces.luminance(middle) > 0.4, "angle \(frame.angle)")
        }
    }
}
