import BadgeKit
import Canvas
import Foundation

/// The back of the card, laid out like the app's back view on its 300-point
/// card: frosted material (here a blurred, lightened copy of the front), the
/// sparkles symbol, 12 points of space, and "Commitment Date:" over the long
/// date in a headline weight, the whole stack centred. Everything scales with
/// the card, so the back is the same size as the front it belongs to.
package struct BackFace: Sendable {
    package static let label = "Commitment Date:"

    /// The long date, as the app's `.formatted(date: .long, time: .omitted)` writes it.
    package var date: String
    package var font: Font
    package var ink = RGBA(28, 28, 30)

    package init(date: String, font: Font) {
        self.date = date
        self.font = font
    }

    /// Where things go on a `width`×`height` face, in pixels.
    package struct Layout: Sendable, Equatable {
        package var symbol: (x: Double, y: Double, size: Double)
        package var pixelSize: Double
        /// The ink box of each line: left, top, width, height.
        package var lines: [(x: Int, y: Int, width: Int, height: Int)]

        /// The box around both lines of text.
        package var textBox: (x: Int, y: Int, width: Int, height: Int) {
            let x0 = lines.map(\.x).min() ?? 0, y0 = lines.map(\.y).min() ?? 0
            let x1 = lines.map { $0.x + $0.width }.max() ?? 0, y1 = lines.map { $0.y + $0.height }.max() ?? 0
            return (x0, y0, x1 - x0, y1 - y0)
        }

        package static func == (a: Layout, b: Layout) -> Bool {
            a.symbol == b.symbol && a.pixelSize == b.pixelSize && a.lines.elementsEqual(b.lines, by: ==)
        }
    }

    package var lines: [String] { [Self.label, date] }

    /// The layout on a `width`×`height` area of a card whose point is `point`
    /// pixels (by default the area's: the card itself). The back of a round
    /// badge lays its text out in the square inside the face at the whole
    /// card's point, so the date is as large as on a square card's back, shrunk
    /// only where it would not fit.
    package func layout(width: Int, height: Int, point given: Double? = nil) throws -> Layout {
        let areaPoint = Double(min(width, height)) / 300
        let point = given ?? areaPoint
        // The square inside a round face (an area of its own) is already inset well within the face:
        // its padding is a quarter of a card's.
        let padding = (given == nil ? 16 : 4) * areaPoint
        // .headline is 17 points; shrink only if a long date in a wide
        // locale would not fit between the paddings.
        var pixelSize = 17 * point
        let widest = try lines.map { try font.measure($0, pixelSize: pixelSize).width }.max() ?? 0
        if Double(widest) > Double(width) - 2 * padding {
            pixelSize *= (Double(width) - 2 * padding) / Double(widest)
        }
        // .headline's line is 22 points for 17-point type.
        let lineHeight = pixelSize * 22 / 17
        var symbolSize = 40 * point
        var spacing = 12 * point
        // In the square inside a round face, the symbol and the space give way before the text does.
        let room = Double(height) - 2 * padding - lineHeight * Double(lines.count)
        if symbolSize + spacing > room {
            let k = max(0, room) / (symbolSize + spacing)
            symbolSize *= k
            spacing *= k
        }
        let stack = symbolSize + spacing + lineHeight * Double(lines.count)
        let top = (Double(height) - stack) / 2
        // Baselines sit where a text line of `lineHeight` puts them: DejaVu
        // Sans rises 0.93 em above its baseline in a 1.17 em line, and the
        // rest of the line height is shared above and below.
        let ascent = pixelSize * 0.93 + (lineHeight - pixelSize * 1.17) / 2
        var boxes: [(x: Int, y: Int, width: Int, height: Int)] = []
        for (index, line) in lines.enumerated() {
            let box = try font.measure(line, pixelSize: pixelSize)
            let baseline = top + symbolSize + spacing + lineHeight * Double(index) + ascent
            boxes.append(((width - box.width) / 2, Int(baseline.rounded()) + box.top, box.width, box.height))
        }
        return Layout(symbol: ((Double(width) - symbolSize) / 2, top, symbolSize), pixelSize: pixelSize, lines: boxes)
    }

    /// The back face for `front`, the same size. `text: false` leaves out the
    /// symbol and the words (the bare material), which is how tests find what
    /// the text adds. The back of a round badge is round too: the front's own
    /// outline and rim, the material within the rim, and the text laid out in
    /// the square inside the face.
    package func render(front: GDImage, text: Bool = true) throws -> Canvas {
        let canvas = try FrostedMaterial.render(front)
        let disc = CardShape.disc(of: front)
        if let disc { Self.keepRim(of: front, disc: disc, on: canvas) }
        if text {
            // The square inscribed in the face, a little inside it, for a round back.
            let side = disc.map { Int($0.face * 2 * 0.72) } ?? canvas.width
            let offset = (canvas.width - side) / 2
            let layout = try layout(width: side, height: disc == nil ? canvas.height : side,
                                    point: Double(min(canvas.width, canvas.height)) / 300)
            let dy = disc == nil ? 0 : (canvas.height - side) / 2
            Sparkles.draw(on: canvas, x: layout.symbol.x + Double(offset), y: layout.symbol.y + Double(dy), size: layout.symbol.size, color: ink)
            for (line, box) in zip(lines, layout.lines) {
                try canvas.draw(line, font: font, pixelSize: layout.pixelSize, color: ink, x: box.x + offset, y: box.y + dy)
            }
        }
        try CardShape.clip(canvas)
        return canvas
    }

    /// The front's pixels beyond the face (its rim, and whatever lies around
    /// it) over the material, and the front's transparency everywhere.
    private static func keepRim(of front: GDImage, disc: CardShape.Disc, on canvas: Canvas) {
        let w = canvas.width
        canvas.withMutablePixels { px in
            for y in 0..<canvas.height {
                for x in 0..<w {
                    let i = (y * w + x) * 4
                    let p = front.pixel(x, y)
                    let r = hypot(Double(x) + 0.5 - disc.center, Double(y) + 0.5 - disc.center)
                    if r >= disc.face {
                        // Premultiplied by nothing: the canvas holds straight RGBA, as the front does.
                        (px[i], px[i + 1], px[i + 2], px[i + 3]) = (p.r, p.g, p.b, p.a)
                    } else {
                        px[i + 3] = UInt8(Int(px[i + 3]) * Int(p.a) / 255)
                    }
                }
            }
        }
    }
}

extension BackFace {
    /// The back of the card for a Promise Badge's PNG bytes, as PNG bytes: the
    /// front decoded within `limits`, the date written long in `locale`, and
    /// the result checked by `PNGDataCheck` like every PNG badge writes.
    package static func png(
        forBadge png: Data, metadata: BadgeMetadata, locale: Locale, limits: ImageLimits, source: String
    ) throws -> Data {
        let front = try GDImage.decodePNG(png, limits: limits, source: source)
        let face = BackFace(date: metadata.longCommitmentDate(locale: locale), font: try Font.caption())
        let back = try PNGEncoder.encode(face.render(front: front), level: 6)
        try PNGDataCheck.verify(back)
        return back
    }
}
