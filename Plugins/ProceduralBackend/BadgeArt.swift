import BadgeKit
import Canvas
import Foundation

/// Draws one badge: the art engine's whole picture for a request.
struct BadgeArt {
    enum Style: String, CaseIterable, Sendable {
        /// A round badge with a metal rim and depth, like a fitness achievement.
        case medal
        /// Full-bleed square, edge to edge, no border, no rounded corners.
        case tile
        /// A round badge in solid colours: no gradients, no shadow.
        case flat
        /// Line art on paper.
        case sketch
    }

    /// The style asked for by name (an unknown name is the caller's error), else
    /// the one the prompt asks for, else a medal.
    static func style(named name: String?, reading: PromptReading) throws -> Style {
        if let name {
            guard let style = Style(rawValue: name) else {
                throw BadgeError(.usage, "the procedural backend has no style \"\(name)\"",
                                 hint: "choose one of: \(Style.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return style
        }
        return reading.style ?? .medal
    }

    struct Result {
        var png: Data
        var notes: [String: String]
    }

    /// The picture before encoding: drawing and encoding are measured apart (badge-bench draw).
    struct Drawing {
        var canvas: Canvas
        var notes: [String: String]
        /// The PNG's bands, compressed while the picture was drawn.
        var encoded: BandedPNG? = nil
        /// Where the caption's ink lies (x, y, width, height), when there is one.
        var captionArea: (x: Int, y: Int, width: Int, height: Int)? = nil
    }

    /// The PNG row filter that makes these pictures smallest (see PNGEncoder).
    static let filter = PNGEncoder.Filter.none

    /// The art engine's versions, by the name a badge records: each draws
    /// the pixels its badges were drawn with, so `badge verify` can check a
    /// badge made by an earlier version. 3: the caption leaves out clauses
    /// that only describe the picture ("lavender pastel"), and a shortened one
    /// no longer ends on punctuation ("RUN MARATHON AT SUNRISE,"); the symbol a
    /// prompt names ("a path as its symbol") is the motif; vibes ("joyful",
    /// "calm", "bold") set the palette's mood (`badge prompt` writes all three).
    /// 4: the caption is the promise in the user's own words, in any script
    /// (Caption), on up to two lines; "no text" draws none; emoji are motif hints;
    /// colours named are the face, accent and rim (pastel tints, dark shades),
    /// composition words ("edge-to-edge", "sunset") choose the tile and the
    /// horizon scene, 28 more motifs, and the seed varies the layout
    /// (Composition, Layout).
    static let engines = ["art-engine 2": 2, "art-engine 3": 3, "art-engine 4": 4]
    static let currentEngine = 4

    let request: BadgeRequest
    let caption: Bool
    let compression: Int
    /// How many threads the drawing and encoding may use (nil: the canvas's default).
    var threads: Int? = nil
    /// The version of the art engine to draw as (`engines`).
    var engine = BadgeArt.currentEngine
    /// Checked between bands and inside the sketch's outline filter: set, the drawing stops
    /// and `render` throws `CancellationError`.
    var cancellation: CancellationFlag? = nil

    func render() throws -> Result {
        let drawing = try draw(encoding: true)
        let png = try drawing.encoded?.finish() ?? PNGEncoder.encode(drawing.canvas, level: compression, filter: Self.filter)
        return Result(png: png, notes: drawing.notes)
    }

    func draw() throws -> Drawing {
        try draw(encoding: false)
    }

    /// Draws the picture; drawn in bands and `encoding`, the same threads also
    /// compress the PNG's bands as soon as the rows each reads are drawn.
    private func draw(encoding: Bool) throws -> Drawing {
        let size = Double(request.size)
        let reading = PromptReading(request.prompt, engine: engine)
        let style = try Self.style(named: request.style, reading: reading)
        let round = style != .tile
        // Finding the font and fitting the caption (a measure at each size
        // tried) need nothing of the background. Drawn in bands, the caption
        // is the first piece of work handed to the drawing threads, so it is
        // usually ready before a band needs it, and no third thread takes a
        // core from the two drawing (2-3 ms late, at times); a band that needs
        // it first fits it itself, or waits for the thread fitting it. Drawn
        // whole, it is fitted on a thread of its own; with one thread allowed
        // (a batch keeps every core busy), first.
        let fitting: @Sendable () -> TextImage? = { [request, caption, engine] in
            guard caption && request.size >= 96, let face = try? Font.caption().open() else { return nil }
            if engine >= 4 {
                let words = request.caption.map(Caption.given) ?? reading.caption
                return Caption.fitted(Caption.forms(words), fonts: FontStack(primary: face), size: size, round: round)
            }
            let words = request.caption.map { PromptReading.drawable($0) } ?? reading.caption
            return Self.fittedCaption(Self.captionForms(words, engine: engine), face: face, size: size, round: round)
        }
        let bands = style == .sketch || threads == 1 ? 1 : Self.bandCount(side: request.size)
        let cancellation = self.cancellation
        let sharedCaption = bands > 1 ? SharedCaption { cancellation?.isCancelled == true ? nil : fitting() } : nil
        let pending = threads == 1 || sharedCaption != nil ? nil : BackgroundValue(fitting)
        let ready = threads == 1 ? fitting() : nil
        var random = SplitMix64(seed: stableHash(request.prompt, seed: request.seed))
        let (motif, words) = reading.scene
        var palette = engine >= 4
            ? Palette.make(look: reading.look, colorWords: reading.colorWords, motif: motif, random: &random)
            : Palette.make(colorWords: reading.colorWords, motif: motif, random: &random)
        var composition: Composition?
        if engine >= 4 && style != .sketch {
            // A horizon scene's caption stands on the dark ground.
            if reading.look.horizon != nil { palette.ink = RGBA(255, 249, 240) }
            composition = Composition(size: size, style: style, palette: palette, layout: Layout(prompt: request.prompt, seed: request.seed),
                                      look: reading.look, motif: motif)
        }
        let plan = Plan(style: style, reading: reading, motif: motif, palette: palette, random: random, composition: composition,
                        caption: { sharedCaption?.value ?? (try? pending?.value) ?? ready })
        let canvas = try Canvas(width: request.size, height: request.size, mapped: bands == 1)
        var encoded: BandedPNG?
        if bands == 1 {
            if let threads { canvas.drawingThreads = threads }
            let mask = style == .sketch ? try Canvas(width: request.size, height: request.size) : nil
            paint(plan, on: canvas, mask: mask)
            if cancellation?.isCancelled == true { throw CancellationError() }
        } else {
            // Every band draws the whole plan within its rows, on as many
            // threads as there are cores (badge's own, `WorkerThreads`): the
            // same pixels as drawn whole. `BandWork` hands out the caption,
            // then the bands, and each PNG band once the rows it reads are
            // drawn. A round badge has transparent corners (RGBA); a tile is
            // promised opaque (RGB), which the encoding checks.
            let side = request.size
            let whole = SharedCanvas(canvas: canvas)
            let png = encoding ? BandedPNG(canvas, level: compression, filter: Self.filter, opaque: !round) : nil
            let work = BandWork(rows: (0..<bands).map { (side * $0 / bands)..<(side * ($0 + 1) / bands) },
                                reads: png.map { png in (0..<png.count).map(png.rowsRead) } ?? [])
            WorkerThreads.shared.share(threads: threads ?? Canvas.processorCount) {
                while let piece = work.next() {
                    switch piece {
                    case .caption:
                        sharedCaption?.make()
                    case let .band(k):
                        // Cancelled, the remaining bands are left undrawn (each still counts as
                        // drawn, so no PNG band waits for it) and the picture is thrown away below.
                        if cancellation?.isCancelled != true {
                            let band = whole.canvas.rows(work.rows[k])
                            band.mapRows()
                            paint(plan, on: band, mask: nil)
                        }
                        work.drawn(k)
                    case let .pngBand(k):
                        if cancellation?.isCancelled != true { png?.compress(k) }
                    }
                }
            }
            if cancellation?.isCancelled == true { throw CancellationError() }
            encoded = png
        }

        var notes = [
            "motif": motif.rawValue + (words.isEmpty ? " (no known word; drawn from the words' hash)" : " <- " + words.joined(separator: ", ")),
            "palette": palette.name + (reading.colorWords.isEmpty ? "" : " <- " + reading.colorWords.joined(separator: ", ")),
            "style": style.rawValue + (request.style == nil && reading.style != nil ? " (from the prompt)" : ""),
            "caption": caption ? "on" : "off",
        ]
        // The words drawn (a long caption is shortened to fit), for show, history and the card.
        if let drawn = plan.caption()?.text { notes["caption-drawn"] = drawn.replacingOccurrences(of: "\n", with: " ") }
        if engine >= 4, caption, request.size >= 96, let warning = Self.captionWarning(request.caption.map(Caption.given) ?? reading.caption,
                                                                                     drawn: plan.caption()) {
            notes["warning"] = warning
        }
        if let composition {
            notes["layout"] = composition.layout.description
            if let (kind, word) = reading.look.horizon { notes["scene"] = "\(kind.rawValue) horizon <- \(word)" }
        }
        if let given = request.caption { notes["caption-text"] = given }
        if style != .sketch, composition?.look.horizon == nil, let (backdrop, word) = reading.backdrop {
            notes["backdrop"] = "\(backdrop.rawValue) <- \(word)"
        }
        let effects = [reading.grain ? "grain" : nil, reading.glow ? "glow" : nil].compactMap { $0 }
        if !effects.isEmpty { notes["effects"] = effects.joined(separator: ", ") }
        if !reading.notes.isEmpty { notes["note"] = reading.notes.joined(separator: "; ") }
        let area = plan.caption().map { text in
            let (x, y) = Self.captionCorner(text, side: request.size, round: round, engine: engine)
            return (x, y, text.box.width, text.box.height)
        }
        return Drawing(canvas: canvas, notes: notes, encoded: encoded, captionArea: area)
    }

    /// Bands of about 128 rows: enough for two cores to share unevenly
    /// loaded rows (the caption lies low, the corners are empty), few enough
    /// that replaying the plan's geometry in each costs little. Below 256 px
    /// a badge takes under a millisecond and is drawn whole.
    static func bandCount(side: Int) -> Int {
        side < 256 ? 1 : min(16, side / 128)
    }

    /// What the picture is drawn from, worked out once before any drawing.
    private struct Plan: Sendable {
        var style: Style
        var reading: PromptReading
        var motif: Motif
        var palette: Palette
        /// The generator after the palette was chosen: every band makes the
        /// same draws from it, so every band draws the same picture.
        var random: SplitMix64
        /// Art engine 4's face, rim and arrangement (nil before, and for a sketch).
        var composition: Composition?
        /// The caption, rendered; waits for it when it is fitted on another thread.
        var caption: @Sendable () -> TextImage?
    }

    /// The caption, fitted once by whichever drawing thread first asks for
    /// it; a thread that asks while another fits it waits for that one.
    private final class SharedCaption: @unchecked Sendable {
        private enum State {
            case unmade
            case making
            case made(TextImage?)
        }

        private let fit: @Sendable () -> TextImage?
        // `state` is read and written only with `condition` locked.
        private var state = State.unmade
        private let condition = NSCondition()

        init(_ fit: @escaping @Sendable () -> TextImage?) {
            self.fit = fit
        }

        /// Fits it now, unless another thread has begun to.
        func make() {
            condition.lock()
            guard case .unmade = state else { return condition.unlock() }
            state = .making
            condition.unlock()
            let caption = fit()
            condition.lock()
            state = .made(caption)
            condition.broadcast()
            condition.unlock()
        }

        var value: TextImage? {
            make()
            condition.lock()
            defer { condition.unlock() }
            while true {
                if case let .made(caption) = state { return caption }
                condition.wait()
            }
        }
    }

    /// The pieces of a picture drawn in bands, each handed out once, when it
    /// is ready: the caption and the drawing bands at once, a PNG band once
    /// every drawing band whose rows it reads is drawn. No piece waits for
    /// one that nobody has taken, so the picture is finished by however many
    /// threads work on it, whichever pieces each takes.
    private final class BandWork: @unchecked Sendable {
        enum Piece {
            case caption
            case band(Int)
            case pngBand(Int)
        }

        /// Each drawing band's rows.
        let rows: [Range<Int>]
        // The rest is read and written only with `condition` locked.
        private let condition = NSCondition()
        private var ready: [Piece]
        /// For each PNG band not yet ready, the drawing bands it still waits for.
        private var waiting: [Int: Set<Int>] = [:]
        /// Pieces not yet handed out.
        private var left: Int

        /// `reads[k]`: the rows PNG band k reads.
        init(rows: [Range<Int>], reads: [Range<Int>]) {
            self.rows = rows
            ready = [.caption] + rows.indices.map { .band($0) }
            for (k, needed) in reads.enumerated() {
                let bands = Set(rows.indices.filter { rows[$0].overlaps(needed) })
                if bands.isEmpty { ready.append(.pngBand(k)) } else { waiting[k] = bands }
            }
            left = ready.count + waiting.count
        }

        /// The next piece to work on: waits while none is ready and some
        /// are still to come; nil once every piece has been handed out.
        func next() -> Piece? {
            condition.lock()
            defer { condition.unlock() }
            while ready.isEmpty && left > 0 { condition.wait() }
            guard left > 0 else { return nil }
            left -= 1
            if left == 0 { condition.broadcast() }
            return ready.removeFirst()
        }

        /// Drawing band `k` is finished: the PNG bands waiting only for it are ready.
        func drawn(_ k: Int) {
            condition.lock()
            for png in waiting.keys.sorted() {
                waiting[png]?.remove(k)
                if waiting[png]?.isEmpty == true {
                    waiting[png] = nil
                    ready.append(.pngBand(png))
                }
            }
            condition.broadcast()
            condition.unlock()
        }
    }

    /// The canvas, shared by the threads that draw its disjoint bands.
    private struct SharedCanvas: @unchecked Sendable {
        let canvas: Canvas
    }

    /// Draws the whole picture of `plan` within `canvas`'s rows. `mask` is the
    /// sketch style's scratch canvas, of the badge's size.
    private func paint(_ plan: Plan, on canvas: Canvas, mask: Canvas?) {
        let size = Double(request.size)
        let (style, reading, palette) = (plan.style, plan.reading, plan.palette)
        let round = style != .tile
        var random = plan.random
        if let composition = plan.composition {
            composition.background(canvas, random: &random)
        } else {
            switch style {
            case .medal: drawMedal(canvas, size: size, palette: palette, random: &random)
            case .tile: drawTile(canvas, size: size, palette: palette)
            case .flat: drawFlat(canvas, size: size, palette: palette)
            case .sketch: drawPaper(canvas, size: size)
            }
        }
        // Between stages too: the picture drawn whole (a sketch, a batch's) has no bands to stop between.
        if cancellation?.isCancelled == true { return }
        let text = plan.caption()
        // Two lines of caption (engine 4) lift the motif and make it a little smaller.
        let twoLines = engine >= 4 && text?.text.contains("\n") == true
        let motifCenterY = text == nil ? 0.5 : twoLines ? (round ? 0.41 : 0.4) : (round ? 0.44 : 0.43)
        if reading.grain && style != .sketch {
            canvas.addGrain(amount: 7, seed: stableHash(request.prompt, seed: request.seed))
        }
        // The seed turns the motif a little, so variants differ at a glance.
        let tilt = (random.unit() - 0.5) * 0.16
        let motifRadius = size * (round ? (text == nil ? 0.25 : twoLines ? 0.175 : 0.2) : (text == nil ? 0.32 : twoLines ? 0.25 : 0.27))
        let frame = Frame(center: Point(size / 2, size * motifCenterY), radius: motifRadius, angle: tilt)
        if reading.glow && style != .sketch {
            canvas.fill(.circle(center: frame.center, radius: motifRadius * 0.9), with: .solid(RGBA(255, 255, 255, 110)),
                        softness: motifRadius * 0.55)
        }
        let sketchInk = RGBA(44, 44, 56)
        if let mask {
            // Line art: the motif is drawn as a mask, and only its outline is inked.
            var painter = MotifPainter(canvas: mask, frame: frame, ink: .black, cut: .clear, random: random)
            painter.draw(plan.motif)
            if cancellation?.isCancelled == true { return }
            canvas.drawOutline(of: mask, radius: max(1, Int(size * 0.006)), color: sketchInk,
                               isCancelled: { cancellation?.isCancelled == true })
        } else if let composition = plan.composition {
            if composition.look.horizon == nil, let (backdrop, _) = reading.backdrop {
                var behind = MotifPainter(canvas: canvas, frame: Frame(center: frame.center, radius: motifRadius * 1.3),
                                          ink: palette.ink.withAlpha(62), cut: .clear, random: random)
                behind.draw(backdrop)
            }
            composition.foreground(canvas, motif: plan.motif, frame: frame, random: random)
        } else {
            if let (backdrop, _) = reading.backdrop {
                var behind = MotifPainter(canvas: canvas, frame: Frame(center: frame.center, radius: motifRadius * 1.3),
                                          ink: palette.ink.withAlpha(62), cut: .clear, random: random)
                behind.draw(backdrop)
            }
            var painter = MotifPainter(canvas: canvas, frame: frame, ink: palette.ink,
                                       cut: palette.faceDark.mixed(with: palette.faceLight, 0.4), random: random)
            painter.draw(plan.motif)
        }

        if let text {
            let (x, y) = Self.captionCorner(text, side: request.size, round: round, engine: engine)
            canvas.draw(text, color: style == .sketch ? sketchInk : palette.ink, x: x, y: y)
        }
    }

    /// Where the caption's ink box's top-left corner goes: centred across,
    /// its middle at 68.5% of the height on a round badge (70% for two lines,
    /// from engine 4), at 80% on a tile.
    static func captionCorner(_ text: TextImage, side: Int, round: Bool, engine: Int) -> (x: Int, y: Int) {
        let twoLines = engine >= 4 && text.text.contains("\n")
        let y = Int(Double(side) * (twoLines ? (round ? 0.7 : 0.8) : (round ? 0.685 : 0.8)))
        return ((side - text.box.width) / 2, y - text.box.height / 2)
    }

    /// What to tell the user when the caption's words cannot all be drawn:
    /// a letter no installed font has, or nothing drawn at all. Fonts are
    /// looked for only when the caption is not wholly in the caption font.
    static func captionWarning(_ words: String, drawn: TextImage?) -> String? {
        guard !words.isEmpty else { return nil }
        guard let face = try? Font.caption().open() else {
            return "the caption was not drawn: no caption font (DejaVu Sans Bold); install it: apt-get install fonts-dejavu-core fontconfig"
        }
        let simple = words.unicodeScalars.allSatisfy { $0.isASCII }
        let missing = simple ? [] : FontStack(primary: face).missing(in: words)
        guard !missing.isEmpty || drawn == nil else { return nil }
        if missing.isEmpty {
            return "the caption was not drawn: even its shortest form does not fit the badge at a legible size; give a shorter one with --caption, or a larger --size"
        }
        let named = missing.prefix(8).map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
        let what = drawn == nil ? "the caption was not drawn" : "the caption was drawn without some of its letters"
        return "\(what): no installed font has \(named); \(FontStack.hint(for: missing))"
    }

    /// The forms of the caption to try, longest first: everything, then
    /// without the small words, then fewer words, never ending on a small word
    /// ("PATH THROUGH A") nor, from engine 3 on, on the punctuation after one
    /// ("RUN MARATHON AT SUNRISE,").
    static func captionForms(_ caption: String, engine: Int) -> [String] {
        let all = caption.split(separator: " ").map(String.init)
        @inline(__always) func bare(_ word: String) -> String {
            engine >= 3 ? word.lowercased().trimmingCharacters(in: .punctuationCharacters) : word.lowercased()
        }
        var candidates = [all, all.filter { !PromptReading.fillers.contains(bare($0)) }]
        var shorter = candidates[1]
        while shorter.count > 1 {
            shorter.removeLast()
            while let last = shorter.last, PromptReading.fillers.contains(bare(last)) || PromptReading.linkers.contains(bare(last)) {
                shorter.removeLast()
            }
            if !shorter.isEmpty { candidates.append(shorter) }
        }
        return candidates.filter { !$0.isEmpty }.map { words in
            let text = words.joined(separator: " ")
            return engine >= 3 ? String(text.reversed().drop(while: { $0.isPunctuation }).reversed()) : text
        }
    }

    /// The caption rendered at the largest size at which it fits the badge, or
    /// nil when nothing of the prompt can be drawn or the badge is too small to read it.
    private static func fittedCaption(_ forms: [String], face: FontFace, size: Double, round: Bool) -> TextImage? {
        let maxWidth = size * (round ? 0.56 : 0.8)
        for text in forms where !text.isEmpty {
            var pixelSize = size * 0.068
            while pixelSize >= size * 0.04 {
                // The rendering that fits is the one drawn: no second rendering.
                if let image = try? face.render(text, pixelSize: pixelSize), Double(image.box.width) <= maxWidth {
                    return image
                }
                pixelSize *= 0.92
            }
        }
        return nil
    }

    /// Notches around a round badge's rim, as on a struck medal; their number varies with the seed.
    static func drawNotches(_ canvas: Canvas, size s: Double, palette: Palette, random: inout SplitMix64) {
        let c = Point(s / 2, s / 2)
        let notches = 24 + Int(random.next() % 4) * 6
        for k in 0..<notches {
            let a = Double(k) / Double(notches) * 2 * .pi
            let r0 = s * 0.424, r1 = s * 0.44
            canvas.fill(.capsule(from: Point(c.x + cos(a) * r0, c.y + sin(a) * r0), to: Point(c.x + cos(a) * r1, c.y + sin(a) * r1),
                                 radius: s * 0.0035), with: .solid(palette.rimDark.withAlpha(110)))
        }
    }

    private func drawMedal(_ canvas: Canvas, size s: Double, palette: Palette, random: inout SplitMix64) {
        let c = Point(s / 2, s / 2)
        let outer = s * 0.455, inner = s * 0.385
        // Soft shadow, then the metal rim with light from the top left.
        // The shadow and the rim are drawn only where they can show: the rim
        // and the face are opaque, and every pixel they cover wholly (out to
        // half a pixel inside their edges) takes their colour whatever was
        // below, so the shadow is not drawn inside the rim's outer edge nor
        // the rim inside the face's edge (a hundredth of a pixel to spare).
        let soft = s * 0.022
        canvas.fill(.ring(center: Point(c.x, c.y + s * 0.014), inner: outer - s * 0.016 - 3 * soft, outer: outer),
                    with: .solid(RGBA(0, 0, 0, 120)), softness: soft, hidden: Disc(center: c, radius: outer - 0.51))
        canvas.fill(.ring(center: c, inner: inner - 2, outer: outer), with: palette.rimMetal(side: s),
                    hidden: Disc(center: c, radius: inner - 0.51))
        // A bevel: the inner edge of the rim catches light from the other side.
        canvas.fill(.ring(center: c, inner: inner, outer: inner + s * 0.02), with: palette.rimBevel(side: s))
        Self.drawNotches(canvas, size: s, palette: palette, random: &random)
        canvas.fill(.circle(center: c, radius: inner), with: .radial(
            center: Point(s * 0.42, s * 0.36), radius: inner * 1.35,
            stops: [(0, palette.faceLight), (1, palette.faceDark)]))
        // A faint sheen across the upper face.
        canvas.fill(.ellipse(center: Point(c.x, c.y - inner * 0.55), rx: inner * 0.78, ry: inner * 0.38),
                    with: .linear(start: Point(0, c.y - inner), end: Point(0, c.y - inner * 0.15),
                                  stops: [(0, RGBA(255, 255, 255, 46)), (1, RGBA(255, 255, 255, 0))]))
    }

    private func drawFlat(_ canvas: Canvas, size s: Double, palette: Palette) {
        let c = Point(s / 2, s / 2)
        canvas.fill(.circle(center: c, radius: s * 0.455), with: .solid(palette.rimLight.mixed(with: palette.rimDark, 0.35)))
        canvas.fill(.circle(center: c, radius: s * 0.385), with: .solid(palette.faceLight.mixed(with: palette.faceDark, 0.45)))
    }

    private func drawPaper(_ canvas: Canvas, size s: Double) {
        let c = Point(s / 2, s / 2)
        let ink = RGBA(44, 44, 56)
        canvas.fill(.circle(center: c, radius: s * 0.455), with: .solid(RGBA(250, 246, 234)))
        canvas.fill(.ring(center: c, inner: s * 0.44, outer: s * 0.455), with: .solid(ink))
        canvas.fill(.ring(center: c, inner: s * 0.408, outer: s * 0.414), with: .solid(ink.withAlpha(200)))
    }

    private func drawTile(_ canvas: Canvas, size s: Double, palette: Palette) {
        canvas.fill(.roundedRect(x: 0, y: 0, width: s, height: s, radius: 0), with: .linear(
            start: Point(0, 0), end: Point(s, s), stops: [(0, palette.faceLight), (1, palette.faceDark)]))
        canvas.fill(.circle(center: Point(s * 0.5, s * 0.43), radius: s * 0.36), with: .solid(RGBA(255, 255, 255, 26)), softness: s * 0.08)
    }
}
