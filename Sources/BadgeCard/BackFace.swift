import BadgeKit
import Canvas
import Foundation

/// The back of the card, laid out like the app's back view on its 300-point
/// card: frosted material (here a blurred, lightened copy of the front), the
/// sparkles symbol, 12 points of space, and "Commitment Date:" over the long
/// date in a headline weight, the whole stack centred. Everything scales with
/// the card, so the back is the same size as the front it belongs to.
public struct BackFace: Sendable {
    public static let label = "Commitment Date:"

    /// The long date, as the app's `.formatted(date: .long, time: .omitted)` writes it.
    public var date: String
    public var font: Font
    public var ink = RGBA(28, 28, 30)

    public init(date: String, font: Font) {
        self.date = date
        self.font = font
    }

    /// Where things go on a `width`×`height` face, in pixels.
    public struct Layout: Sendable, Equatable {
        public var symbol: (x: Double, y: Double, size: Double)
        public var pixelSize: Double
        /// The ink box of each line: left, top, width, height.
        public var lines: [(x: Int, y: Int, width: Int, height: Int)]

        /// The box around both lines of text.
        public var textBox: (x: Int, y: Int, width: Int, height: Int) {
            let x0 = lines.map(\.x).min() ?? 0, y0 = lines.map(\.y).min() ?? 0
            let x1 = lines.map { $0.x + $0.width }.max() ?? 0, y1 = lines.map { $0.y + $0.height }.max() ?? 0
            return (x0, y0, x1 - x0, y1 - y0)
        }

        public static func == (a: Layout, b: Layout) -> Bool {
            a.symbol == b.symbol && a.pixelSize == b.pixelSize && a.lines.elementsEqual(b.lines, by: ==)
        }
    }

    public var lines: [String] { [Self.label, date] }

    public func layout(width: Int, height: Int) throws -> Layout {
        let point = Double(min(width, height)) / 300
        let padding = 16 * point
        // .headline is 17 points; shrink only if a long date in a wide
        // locale would not fit between the paddings.
        var pixelSize = 17 * point
        let widest = try lines.map { try font.measure($0, pixelSize: pixelSize).width }.max() ?? 0
        if Double(widest) > Double(width) - 2 * padding {
            pixelSize *= (Double(width) - 2 * padding) / Double(widest)
        }
        // .headline's line is 22 points for 17-point type.
        let lineHeight = pixelSize * 22 / 17
        let symbolSize = 40 * point
        let spacing = 12 * point
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
    /// the text adds.
    public func render(front: GDImage, text: Bool = true) throws -> Canvas {
        let canvas = try FrostedMaterial.render(front)
        if text {
            let layout = try layout(width: canvas.width, height: canvas.height)
            Sparkles.draw(on: canvas, x: layout.symbol.x, y: layout.symbol.y, size: layout.symbol.size, color: ink)
            for (line, box) in zip(lines, layout.lines) {
                try canvas.draw(line, font: font, pixelSize: layout.pixelSize, color: ink, x: box.x, y: box.y)
            }
        }
        try CardShape.clip(canvas)
        return canvas
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
