import BadgeKit
import Canvas
import Foundation

/// The card turning all the way round, as an animated PNG or GIF: front to
/// back, a rest, then on round to the front again, so the loop never snaps
/// from one face to the other. Angles from `FlipTimeline` (each half turn
/// with its wiggle), each frame the face `CardSide` picks, warped in
/// perspective. Frames are rendered and compressed on every core.
package struct FlipAnimation: Sendable {
    package enum Format: String, Sendable {
        case apng, gif

        /// By the output file's extension; nil for one we do not write.
        package init?(pathExtension: String) {
            switch pathExtension.lowercased() {
            case "png", "apng": self = .apng
            case "gif": self = .gif
            default: return nil
            }
        }
    }

    package var timeline: FlipTimeline
    package var frameRate: Int
    /// Side of the square frames, in pixels.
    package var size: Int
    /// How long the first and the last frame stay, in seconds: the card rests
    /// on each face before the animation loops.
    package var hold: Double
    /// Behind the card; nil leaves it transparent (APNG only: a GIF has no partial transparency).
    package var background: RGBA?

    package static let frameRates = 1...60
    /// GIF delays are whole hundredths of a second and browsers slow anything
    /// under 2 of them down to 10: above 50 frames a second a GIF would crawl.
    package static let gifFrameRates = 1...50

    package init(timeline: FlipTimeline = FlipTimeline(), frameRate: Int = 30, size: Int = 512, hold: Double = 1, background: RGBA? = nil) {
        self.timeline = timeline
        self.frameRate = frameRate
        self.size = size
        self.hold = hold
        self.background = background
    }

    package struct Frame: Sendable, Equatable {
        /// The card's angle in degrees.
        package var angle: Double
        package var side: CardSide
        /// The face's own angle after the back's counter-rotation.
        package var faceAngle: Double
        /// When this frame appears, in seconds from the start of the animation.
        package var time: Double
        package var duration: Double
    }

    /// The frames of one loop: the card resting on the front (`hold`), turning
    /// to the back, resting there, and turning on the same way to the front.
    /// The second turn's last frame, the front at rest, is the loop's first.
    package var frames: [Frame] {
        let half = timeline.angles(frameRate: Double(frameRate))
        let turn = timeline.angle(at: timeline.duration)
        let angles = half + half.dropFirst().dropLast().map { $0 + turn }
        let step = 1 / Double(frameRate)
        var time = 0.0
        return angles.enumerated().map { index, angle in
            let (side, faceAngle) = CardSide.showing(at: angle)
            let duration = index == 0 || index == half.count - 1 ? max(hold, step) : step
            defer { time += duration }
            return Frame(angle: angle, side: side, faceAngle: faceAngle, time: time, duration: duration)
        }
    }

    package var warp: PerspectiveWarp { PerspectiveWarp(outputSize: size) }

    /// The badge and its back face at the resolution the card is drawn at,
    /// so the warp never has to shrink a face much (and text stays crisp).
    package func faces(badge: GDImage, back: BackFace) throws -> (front: FaceTexture, back: FaceTexture) {
        let side = max(8, Int(warp.cardSide.rounded()))
        let scaled = try badge.resized(width: side, height: side)
        return (FaceTexture(try CardShape.front(scaled)), FaceTexture(try back.render(front: scaled)))
    }

    /// One frame as a canvas.
    package func render(_ frame: Frame, front: FaceTexture, back: FaceTexture) throws -> Canvas {
        let canvas = try Canvas(width: size, height: size, background: background ?? .clear)
        let layer = background == nil ? canvas : try Canvas(width: size, height: size)
        warp.render(frame.side == .front ? front : back, degrees: frame.faceAngle, into: layer)
        if layer !== canvas { canvas.composite(layer) }
        return canvas
    }

    package func encode(_ format: Format, front: FaceTexture, back: FaceTexture) throws -> Data {
        let frames = self.frames
        switch format {
        case .apng:
            let pngs = try Self.parallel(frames.count) { k in
                try PNGEncoder.encode(try render(frames[k], front: front, back: back), level: 2, keepAlpha: true)
            }
            let step = APNGEncoder.Delay(1, UInt16(frameRate))
            let delays = frames.map { $0.duration > 1 / Double(frameRate) + 1e-9 ? APNGEncoder.Delay(seconds: $0.duration) : step }
            return try APNGEncoder.assemble(frames: pngs, delays: delays)
        case .gif:
            guard Self.gifFrameRates.contains(frameRate) else {
                throw BadgeError(.usage, "a GIF cannot play \(frameRate) frames a second",
                                 hint: "use --fps \(Self.gifFrameRates.upperBound) or less, or write an animated PNG (.png)")
            }
            var opaque = self
            opaque.background = background ?? .white
            let gif = opaque
            let canvases = try Self.parallel(frames.count) { k in try gif.render(frames[k], front: front, back: back) }
            return try GIFAnimation.encode(canvases, delays: Self.centiseconds(frames))
        }
    }

    /// Frame durations in hundredths of a second, rounded so that the
    /// rounding errors never add up: each frame ends on the hundredth nearest
    /// its true end.
    static func centiseconds(_ frames: [Frame]) -> [Int] {
        frames.map { frame in
            Int(((frame.time + frame.duration) * 100).rounded()) - Int((frame.time * 100).rounded())
        }
    }

    /// `work(k)` for k in 0..<count on every core, on badge's own threads
    /// (`WorkerThreads`); the results in order.
    static func parallel<T>(_ count: Int, _ work: @Sendable (Int) throws -> T) throws -> [T] {
        let slots = Slots<T>(count: count)
        WorkerThreads.shared.perform(iterations: count, threads: ImageThreads.allowed(upTo: count)) { k in
            slots.store(k, Result { try work(k) })
        }
        return try slots.values()
    }
}

/// One result per index, each written by the one worker that made it.
private final class Slots<T>: @unchecked Sendable {
    private var slots: [Result<T, any Error>?]
    private let lock = NSLock()

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    func store(_ k: Int, _ result: Result<T, any Error>) {
        lock.lock()
        slots[k] = result
        lock.unlock()
    }

    func values() throws -> [T] {
        lock.lock()
        defer { lock.unlock() }
        return try slots.map { slot in
            guard let slot else { throw BadgeError(.generationFailed, "a frame of the animation was not rendered") }
            return try slot.get()
        }
    }
}
