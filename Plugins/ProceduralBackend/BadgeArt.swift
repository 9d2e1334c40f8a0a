import BadgeKit
import Canvas
import Foundation

/// Draws one badge: the art engine's whole picture for a request.
struct BadgeArt {
    enum Style: String, CaseIterable {
        case medal, tile
    }

    struct Result {
        var png: Data
        var notes: [String: String]
    }

    let request: BadgeRequest
    let style: Style
    let caption: Bool
    let compression: Int

    func render() throws -> Result {
        let size = Double(request.size)
        let reading = PromptReading(request.prompt)
        var random = SplitMix64(seed: stableHash(request.prompt, seed: request.seed))
        let (motif, words) = reading.scene
        let palette = Palette.make(colorWords: reading.colorWords, motif: motif, random: &random)
        let canvas = try Canvas(width: request.size, height: request.size)
        let text = caption ? fittedCaption(reading.caption, size: size) : nil
        let motifCenterY = text == nil ? 0.5 : (style == .medal ? 0.44 : 0.43)

        switch style {
        case .medal: drawMedal(canvas, size: size, palette: palette, random: &random)
        case .tile: drawTile(canvas, size: size, palette: palette)
        }
        // The seed turns the motif a little, so variants differ at a glance.
        let tilt = (random.unit() - 0.5) * 0.16
        let motifRadius = size * (style == .medal ? (text == nil ? 0.25 : 0.2) : (text == nil ? 0.32 : 0.27))
        var painter = MotifPainter(
            canvas: canvas, frame: Frame(center: Point(size / 2, size * motifCenterY), radius: motifRadius, angle: tilt),
            ink: palette.ink, cut: palette.faceDark.mixed(with: palette.faceLight, 0.4), random: random)
        // A soft shadow under the motif lifts it off the face.
        painter.draw(motif)

        let image = try GDImage(canvas)
        if let (string, pixelSize) = text {
            let font = try Font.caption()
            let box = try font.measure(string, pixelSize: pixelSize)
            let y = Int(size * (style == .medal ? 0.685 : 0.8))
            try image.draw(string, font: font, pixelSize: pixelSize, color: palette.ink,
                           x: (request.size - box.width) / 2, y: y - box.height / 2)
        }
        let notes = [
            "motif": motif.rawValue + (words.isEmpty ? " (no known word; drawn from the words' hash)" : " <- " + words.joined(separator: ", ")),
            "palette": palette.name + (reading.colorWords.isEmpty ? "" : " <- " + reading.colorWords.joined(separator: ", ")),
            "style": style.rawValue,
            "caption": caption ? "on" : "off",
        ]
        return Result(png: try image.pngData(compression: compression), notes: notes)
    }

    /// The caption and the pixel size at which it fits the badge, or nil when
    /// nothing of the prompt can be drawn or the badge is too small to read it.
    private func fittedCaption(_ caption: String, size: Double) -> (String, Double)? {
        guard !caption.isEmpty, size >= 96, let font = try? Font.caption() else { return nil }
        let maxWidth = size * (style == .medal ? 0.56 : 0.8)
        let all = caption.split(separator: " ").map(String.init)
        // Shorter forms in turn: everything, then without the small words, then
        // fewer words, never ending on a small word ("PATH THROUGH A").
        var candidates = [all, all.filter { !PromptReading.fillers.contains($0.lowercased()) }]
        var shorter = candidates[1]
        while shorter.count > 1 {
            shorter.removeLast()
            while let last = shorter.last, PromptReading.fillers.contains(last.lowercased()) || PromptReading.linkers.contains(last.lowercased()) {
                shorter.removeLast()
            }
            if !shorter.isEmpty { candidates.append(shorter) }
        }
        for words in candidates where !words.isEmpty {
            let text = words.joined(separator: " ")
            var pixelSize = size * 0.068
            while pixelSize >= size * 0.04 {
                if let box = try? font.measure(text, pixelSize: pixelSize), Double(box.width) <= maxWidth {
                    return (text, pixelSize)
                }
                pixelSize *= 0.92
            }
        }
        return nil
    }

    private func drawMedal(_ canvas: Canvas, size s: Double, palette: Palette, random: inout SplitMix64) {
        let c = Point(s / 2, s / 2)
        let outer = s * 0.455, inner = s * 0.385
        // Soft shadow, then the metal rim with light from the top left.
        canvas.fill(.circle(center: Point(c.x, c.y + s * 0.014), radius: outer), with: .solid(RGBA(0, 0, 0, 120)),
                    softness: s * 0.022)
        canvas.fill(.circle(center: c, radius: outer), with: .linear(
            start: Point(s * 0.2, s * 0.1), end: Point(s * 0.8, s * 0.9),
            stops: [(0, palette.rimLight), (0.5, palette.rimLight.mixed(with: palette.rimDark, 0.45)), (1, palette.rimDark)]))
        // A bevel: the inner edge of the rim catches light from the other side.
        canvas.fill(.ring(center: c, inner: inner, outer: inner + s * 0.02), with: .linear(
            start: Point(s * 0.8, s * 0.9), end: Point(s * 0.2, s * 0.1),
            stops: [(0, palette.rimLight), (1, palette.rimDark.darker(0.2))]))
        // Notches around the rim, as on a struck medal; their number varies with the seed.
        let notches = 24 + Int(random.next() % 4) * 6
        for k in 0..<notches {
            let a = Double(k) / Double(notches) * 2 * .pi
            let r0 = s * 0.424, r1 = s * 0.44
            canvas.fill(.capsule(from: Point(c.x + cos(a) * r0, c.y + sin(a) * r0), to: Point(c.x + cos(a) * r1, c.y + sin(a) * r1),
                                 radius: s * 0.0035), with: .solid(palette.rimDark.withAlpha(110)))
        }
        canvas.fill(.circle(center: c, radius: inner), with: .radial(
            center: Point(s * 0.42, s * 0.36), radius: inner * 1.35,
            stops: [(0, palette.faceLight), (1, palette.faceDark)]))
        // A faint sheen across the upper face.
        canvas.fill(.ellipse(center: Point(c.x, c.y - inner * 0.55), rx: inner * 0.78, ry: inner * 0.38),
                    with: .linear(start: Point(0, c.y - inner), end: Point(0, c.y - inner * 0.15),
                                  stops: [(0, RGBA(255, 255, 255, 46)), (1, RGBA(255, 255, 255, 0))]))
    }

    private func drawTile(_ canvas: Canvas, size s: Double, palette: Palette) {
        canvas.fill(.roundedRect(x: 0, y: 0, width: s, height: s, radius: 0), with: .linear(
            start: Point(0, 0), end: Point(s, s), stops: [(0, palette.faceLight), (1, palette.faceDark)]))
        canvas.fill(.circle(center: Point(s * 0.5, s * 0.43), radius: s * 0.36), with: .solid(RGBA(255, 255, 255, 26)), softness: s * 0.08)
    }
}
