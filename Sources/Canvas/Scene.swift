import Foundation

/// A picture as a value: what is drawn, in order, on a `width` × `height`
/// canvas that starts clear. A raster back end draws it (`Canvas.draw(_:)`),
/// band by band if it likes, since every operation confines itself to the
/// rows it is given; the SVG writer (`SVGDocument`) writes it as vectors.
public struct Scene: Sendable {
    public let width: Int
    public let height: Int
    public internal(set) var operations: [Operation]

    public init(width: Int, height: Int, operations: [Operation] = []) {
        self.width = width
        self.height = height
        self.operations = operations
    }

    /// One drawing operation.
    public enum Operation: Sendable {
        /// A shape filled with a paint (see `Canvas.fill`).
        case fill(Fill)
        /// A line of shaped text, its ink box's top-left corner at (x, y).
        case text(TextImage, color: RGBA, x: Int, y: Int)
        /// Film grain over every painted pixel drawn so far (see `Canvas.addGrain`).
        case grain(amount: Int, seed: UInt64)
        /// Line art: `mask` is drawn on a clear canvas of the scene's size, in
        /// black with details cut out in white; a white cut-out counts as a
        /// hole, and every edge of what is left is inked in `color`, `radius`
        /// pixels wide (see `Canvas.drawOutline`).
        case outline(mask: Scene, radius: Int, color: RGBA)
    }

    /// A shape filled with a paint: `softness` (pixels) widens its edge into a
    /// smooth falloff; pixels inside `hidden` may be left undrawn, since the
    /// scene paints over them opaquely later.
    public struct Fill: Sendable {
        public var shape: Shape
        public var paint: Paint
        public var opacity: Double
        public var softness: Double
        public var hidden: Disc?

        public init(shape: Shape, paint: Paint, opacity: Double = 1, softness: Double = 0, hidden: Disc? = nil) {
            self.shape = shape
            self.paint = paint
            self.opacity = opacity
            self.softness = softness
            self.hidden = hidden
        }
    }

    /// This scene's operations followed by `other`'s (of the same size).
    public func appending(_ other: Scene) -> Scene {
        precondition(other.width == width && other.height == height, "scenes of different sizes")
        return Scene(width: width, height: height, operations: operations + other.operations)
    }
}

/// Records drawing calls into a `Scene`: the art engine draws onto one of
/// these with the calls it would make on a canvas. Use it on one thread.
public final class SceneRecorder {
    public private(set) var scene: Scene

    public init(width: Int, height: Int) {
        scene = Scene(width: width, height: height)
    }

    public var width: Int { scene.width }
    public var height: Int { scene.height }

    public func fill(_ shape: Shape, with paint: Paint, opacity: Double = 1, softness: Double = 0, hidden: Disc? = nil) {
        append(.fill(Scene.Fill(shape: shape, paint: paint, opacity: opacity, softness: softness, hidden: hidden)))
    }

    public func draw(_ text: TextImage, color: RGBA, x: Int, y: Int) {
        append(.text(text, color: color, x: x, y: y))
    }

    public func addGrain(amount: Int, seed: UInt64) {
        append(.grain(amount: amount, seed: seed))
    }

    public func drawOutline(of mask: Scene, radius: Int, color: RGBA) {
        precondition(mask.width == width && mask.height == height, "the mask must match the scene")
        append(.outline(mask: mask, radius: radius, color: color))
    }

    private func append(_ operation: Scene.Operation) {
        scene.operations.append(operation)
    }
}

extension Canvas {
    /// Draws `scene` within this canvas's rows (a band's, or all of them):
    /// the same pixels, band by band, as drawn whole. `isCancelled` is asked
    /// between operations; when it says yes, the drawing stops unfinished
    /// (the caller throws the picture away).
    public func draw(_ scene: Scene, isCancelled: @escaping @Sendable () -> Bool = { false }) {
        precondition(scene.width == width && scene.height == height, "the scene must match the canvas")
        for operation in scene.operations {
            if isCancelled() { return }
            switch operation {
            case let .fill(f):
                fill(f.shape, with: f.paint, opacity: f.opacity, softness: f.softness, hidden: f.hidden)
            case let .text(text, color, x, y):
                draw(text, color: color, x: x, y: y)
            case let .grain(amount, seed):
                addGrain(amount: amount, seed: seed)
            case let .outline(maskScene, radius, color):
                guard let mask = try? Canvas(width: width, height: height) else { return }
                mask.draw(maskScene, isCancelled: isCancelled)
                if isCancelled() { return }
                mask.cutOutsAsHoles()
                drawOutline(of: mask, radius: radius, color: color, isCancelled: isCancelled)
            }
        }
    }

    /// A picture drawn in black with details cut out in white becomes a mask
    /// whose cut-outs are holes: each pixel's alpha less its whiteness.
    func cutOutsAsHoles() {
        withMutablePixels { px in
            for i in stride(from: 0, to: px.count, by: 4) where px[i + 3] > 0 {
                px[i + 3] = UInt8(Int(px[i + 3]) * (255 - Int(px[i])) / 255)
            }
        }
    }
}
