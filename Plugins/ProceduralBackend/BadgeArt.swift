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
            guard let style = Style(rawValue: name.lowercased()) else {
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
        /// The check of the image data (libdeflate's), run while it was compressed.
        var inflated: PNGDataCheck.Inflated?
    }

    /// The picture before encoding: drawing and encoding are measured apart (badge-bench draw).
    struct Drawing {
        var canvas: Canvas
        /// What the canvas holds, as recorded.
        var scene: Scene
        var notes: [String: String]
        /// The PNG's bands, compressed while the picture was drawn.
        var encoded: BandedPNG? = nil
        /// Where the caption's ink lies (x, y, width, height), when there is one.
        var captionArea: (x: Int, y: Int, width: Int, height: Int)? = nil
        /// The colour the motif and caption are inked in.
        var ink = RGBA(0, 0, 0)
    }

    /// The PNG row filter that makes these pictures smallest (see PNGEncoder).
    static let filter = PNGEncoder.Filter.none

    /// The art engine's version, recorded in every badge it draws (`art-engine 6`).
    /// One engine is drawn: any change to its pixels is a new number, and a badge
    /// drawn by an earlier one is verified by the release of badge that drew it
    /// (Provenance.retired).
    static let currentEngine = 6

    let request: BadgeRequest
    let caption: Bool
    let compression: Int
    /// Checked between bands and inside the sketch's outline filter: set, the drawing stops
    /// and `render` throws `CancellationError`.
    var cancellation: CancellationFlag? = nil

    func render() throws -> Result {
        let drawing = try draw(encoding: true)
        let (png, inflated) = try drawing.encoded?.finishInflating()
            ?? PNGEncoder.encodeInflating(drawing.canvas, level: compression, filter: Self.filter, inflating: true)
        return Result(png: png, notes: drawing.notes, inflated: inflated)
    }

    func draw() throws -> Drawing {
        try draw(encoding: false)
    }

    /// The picture recorded, not drawn: for the SVG back end.
    struct Recording {
        var scene: Scene
        var notes: [String: String]
    }

    func record() throws -> Recording {
        let made = try make(.scene)
        return Recording(scene: made.scene, notes: made.notes)
    }

    private func draw(encoding: Bool) throws -> Drawing {
        guard let drawing = try make(.pixels(encoding: encoding)).drawing else { preconditionFailure("pixels were asked for") }
        return drawing
    }

    /// What `make` makes: the picture's scene, drawn, or recorded only.
    private enum Output {
        /// Drawn and, when `encoding`, compressed as it is drawn.
        case pixels(encoding: Bool)
        case scene
    }

    /// Records the picture and, for `.pixels`, draws it; drawn in bands and
    /// encoding, the same threads also compress the PNG's bands as soon as
    /// the rows each reads are drawn.
    private func make(_ output: Output) throws -> (drawing: Drawing?, scene: Scene, notes: [String: String]) {
        let (rasterising, encoding): (Bool, Bool) = switch output {
        case let .pixels(encoding): (true, encoding)
        case .scene: (false, false)
        }
        let size = Double(request.size)
        let reading = PromptReading(request.prompt)
        let style = try Self.style(named: request.style, reading: reading)
        let round = style != .tile
        // Finding the font and fitting the caption (a measure at each size
        // tried) need nothing of the background. Drawn in bands, the caption
        // is the first piece of work handed to the drawing threads, so it is
        // usually ready before a band needs it, and no third thread takes a
        // core from the two drawing (2-3 ms late, at times); a band that needs
        // it first fits it itself, or waits for the thread fitting it. Drawn
        // whole, it is fitted beside the background, on the same threads;
        // with one thread allowed (`ImageThreads.limit`: a batch keeps every
        // core busy), first.
        let fitting: @Sendable () -> TextImage? = { [request, caption] in
            guard caption && request.size >= 96, let face = try? Font.caption().open() else { return nil }
            let words = request.caption.map(Caption.given) ?? reading.caption
            return Caption.fitted(caption: words, fonts: FontStack(primary: face), size: size, round: round)
        }
        // Recorded only, the caption is fitted first, on this thread: there is nothing to draw meanwhile.
        let threads = ImageThreads.allowed(upTo: ImageThreads.processorCount)
        let alone = threads == 1 || !rasterising
        let bands = style == .sketch || alone ? 1 : Self.bandCount(side: request.size)
        let cancellation = self.cancellation
        let sharedCaption = alone ? nil : OnceValue { cancellation?.isCancelled == true ? nil : fitting() }
        let ready = alone ? fitting() : nil
        var random = SplitMix64(seed: stableHash(request.prompt, seed: request.seed))
        let (motif, words) = reading.scene
        // An icon in the motif's place, when one says more (IconChoice); drawn only when its font opens.
        let iconChoice = IconChoice.choose(for: request.prompt, reading: reading)
        let icon = iconChoice.flatMap { IconFont.isAvailable() ? $0.icon : nil }
        var palette = style == .sketch ? Palette.sketch(look: reading.look)
            : Palette.make(look: reading.look, colorWords: reading.colorWords, motif: motif, random: &random)
        // A sketch is line art on paper: no horizon scene.
        var look = reading.look
        if style == .sketch { look.horizon = nil }
        // A horizon scene's caption stands on the dark ground.
        if look.horizon != nil { palette.ink = RGBA(255, 249, 240) }
        let composition = Composition(size: size, style: style, palette: palette, layout: Layout(prompt: request.prompt, seed: request.seed),
                                      look: look, motif: motif, icon: icon)
        let plan = Plan(style: style, reading: reading, motif: motif, palette: palette, random: random, composition: composition,
                        caption: { sharedCaption?.value ?? ready })
        // The picture is recorded once, in two parts: the background, which
        // needs nothing of the caption, at once; the rest once the caption is
        // fitted (its lines place the motif), by whichever thread first needs it.
        let (background, afterBackground) = recordBackground(plan)
        let foreground = OnceValue { recordForeground(plan, random: afterBackground) }
        let isCancelled: @Sendable () -> Bool = { cancellation?.isCancelled == true }
        let canvas = rasterising ? try Canvas(width: request.size, height: request.size, mapped: bands == 1) : nil
        var encoded: BandedPNG?
        if let canvas, bands == 1 {
            if let sharedCaption {
                // The caption fitted on a second thread while the background is drawn.
                let whole = SharedCanvas(canvas: canvas)
                WorkerThreads.shared.perform(iterations: 2, threads: 2) { k in
                    if k == 0 { sharedCaption.make() } else { whole.canvas.draw(background, isCancelled: isCancelled) }
                }
            } else {
                canvas.draw(background, isCancelled: isCancelled)
            }
            canvas.draw(foreground.value, isCancelled: isCancelled)
            if cancellation?.isCancelled == true { throw CancellationError() }
        } else if let canvas {
            // Every band draws the recorded scene within its rows, on as many
            // threads as there are cores (badge's own, `WorkerThreads`): the
            // same pixels as drawn whole. `BandWork` hands out the caption
            // (with the rest of the scene, recorded once it is fitted), then
            // the bands, and each PNG band once the rows it reads are drawn.
            // A round badge has transparent corners (RGBA); a tile is promised
            // opaque (RGB), which the encoding checks.
            let side = request.size
            let whole = SharedCanvas(canvas: canvas)
            let png = encoding ? BandedPNG(canvas, level: compression, filter: Self.filter, opaque: !round, inflating: true) : nil
            let work = BandWork(rows: (0..<bands).map { (side * $0 / bands)..<(side * ($0 + 1) / bands) },
                                reads: png.map { png in (0..<png.count).map(png.rowsRead) } ?? [])
            WorkerThreads.shared.share(threads: threads) {
                while let piece = work.next() {
                    switch piece {
                    case .caption:
                        foreground.make()
                    case let .band(k):
                        // Cancelled, the remaining bands are left undrawn (each still counts as
                        // drawn, so no PNG band waits for it) and the picture is thrown away below.
                        if cancellation?.isCancelled != true {
                            let band = whole.canvas.rows(work.rows[k])
                            band.mapRows()
                            band.draw(background, isCancelled: isCancelled)
                            band.draw(foreground.value, isCancelled: isCancelled)
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

        let drawnMotif: String = motif.rawValue + (words.isEmpty ? " (no known word; drawn from the words' hash)" : " <- " + words.joined(separator: ", "))
        let motifNote: String = icon != nil ? iconChoice?.note ?? drawnMotif : drawnMotif
        var notes = [
            "motif": motifNote,
            "palette": palette.name + (reading.colorWords.isEmpty ? "" : " <- " + reading.colorWords.joined(separator: ", ")),
            "style": style.rawValue + (request.style == nil && reading.style != nil ? " (from the prompt)" : ""),
            "caption": caption ? "on" : "off",
        ]
        // The words drawn (a long caption is shortened to fit), for show, history and the card.
        let whole = request.caption.map(Caption.given) ?? reading.caption
        if let drawn = plan.caption()?.text {
            // Not Foundation's replacingOccurrences: its first use bridges to NSString (~0.3 ms after the drawing).
            notes["caption-drawn"] = String(drawn.map { $0 == "\n" ? " " : $0 })
            if let why = Caption.shortening(whole, drawn: drawn) { notes["caption-shortened"] = why }
        }
        if caption, request.caption == nil, whole.isEmpty, !Caption.asksForNoText(request.prompt) {
            notes["caption-omitted"] = "the prompt describes a picture rather than a promise; give a caption with --caption"
        }
        if caption, request.size >= 96, let warning = Self.captionWarning(whole, drawn: plan.caption()) {
            notes["warning"] = warning
        }
        notes["layout"] = composition.layout.description
        if let (kind, word) = composition.look.horizon { notes["scene"] = "\(kind.rawValue) horizon <- \(word)" }
        if let given = request.caption { notes["caption-text"] = given }
        if style != .sketch, composition.look.horizon == nil, let (backdrop, word) = reading.backdrop {
            notes["backdrop"] = "\(backdrop.rawValue) <- \(word)"
        }
        let effects = [reading.grain ? "grain" : nil, reading.glow ? "glow" : nil].compactMap { $0 }
        if !effects.isEmpty { notes["effects"] = effects.joined(separator: ", ") }
        var said = reading.notes
        if let iconChoice, icon == nil {
            said.append("the icon \"\(iconChoice.icon.name)\" was not drawn: the icon font is missing (\(IconFont.path)); "
                        + "install it: apt-get install \(IconFont.package)")
        }
        if !said.isEmpty { notes["note"] = said.joined(separator: "; ") }
        let area = plan.caption().map { text in
            let (x, y) = Self.captionCorner(text, side: request.size, round: round)
            return (x, y, text.box.width, text.box.height)
        }
        let scene = background.appending(foreground.value)
        return (canvas.map { Drawing(canvas: $0, scene: scene, notes: notes, encoded: encoded, captionArea: area, ink: palette.ink) }, scene, notes)
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
        /// The face, rim and arrangement.
        var composition: Composition
        /// The caption, rendered; waits for it when it is fitted on another thread.
        var caption: @Sendable () -> TextImage?
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

        /// Drawing band `k` is finished: the PNG bands waiting only for it are
        /// ready, and go ahead of the drawing bands not yet taken: compressed
        /// and checked while the drawing goes on, with its rows still in the
        /// cache, rather than all after it.
        func drawn(_ k: Int) {
            condition.lock()
            var next = ready.firstIndex { if case .band = $0 { true } else { false } } ?? ready.endIndex
            for png in waiting.keys.sorted() {
                waiting[png]?.remove(k)
                if waiting[png]?.isEmpty == true {
                    waiting[png] = nil
                    ready.insert(.pngBand(png), at: next)
                    next += 1
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

    /// Records the background of `plan`'s picture, and the generator as the
    /// background leaves it (the rest of the picture draws from it).
    private func recordBackground(_ plan: Plan) -> (Scene, SplitMix64) {
        let scene = SceneRecorder(width: request.size, height: request.size)
        var random = plan.random
        plan.composition.background(scene, random: &random)
        return (scene.scene, random)
    }

    /// Records the rest of `plan`'s picture over its background: grain, glow,
    /// motif (or, in a sketch, its line art) and caption. Waits for the caption.
    private func recordForeground(_ plan: Plan, random: SplitMix64) -> Scene {
        let size = Double(request.size)
        let (style, reading, palette) = (plan.style, plan.reading, plan.palette)
        let round = style != .tile
        var random = random
        let composition = plan.composition
        let scene = SceneRecorder(width: request.size, height: request.size)
        let text = plan.caption()
        // Two lines of caption lift the motif and make it a little smaller.
        let twoLines = text?.text.contains("\n") == true
        let motifCenterY = text == nil ? 0.5 : twoLines ? 0.4 : (round ? 0.44 : 0.43)
        if reading.grain && style != .sketch {
            scene.addGrain(amount: 7, seed: stableHash(request.prompt, seed: request.seed))
        }
        // The seed turns the motif a little, so variants differ at a glance.
        let tilt = (random.unit() - 0.5) * 0.16
        let motifRadius = size * (round ? (text == nil ? 0.25 : twoLines ? 0.165 : 0.2) : (text == nil ? 0.32 : twoLines ? 0.25 : 0.27))
        let frame = Frame(center: Point(size / 2, size * motifCenterY), radius: motifRadius, angle: tilt)
        if reading.glow && style != .sketch {
            scene.fill(.circle(center: frame.center, radius: motifRadius * 0.9), with: .solid(RGBA(255, 255, 255, 110)),
                       softness: motifRadius * 0.55)
        }
        if style == .sketch {
            composition.foreground(scene, motif: plan.motif, frame: frame, random: random, drawsMotif: false)
            // Line art: the motif is drawn as a mask, its details cut out of it in white, and
            // every edge of what is left inked: the outline and the inner lines.
            let mask = SceneRecorder(width: request.size, height: request.size)
            composition.drawMotif(mask, plan.motif, frame: composition.motifFrame(frame), ink: .black, cut: .white, random: random)
            scene.drawOutline(of: mask.scene, radius: max(1, Int(size * 0.006)), color: palette.ink)
        } else {
            if composition.look.horizon == nil, let (backdrop, _) = reading.backdrop {
                var behind = MotifPainter(scene: scene, frame: Frame(center: frame.center, radius: motifRadius * 1.3),
                                          ink: palette.ink.withAlpha(62), cut: .clear, random: random)
                behind.draw(backdrop)
            }
            composition.foreground(scene, motif: plan.motif, frame: frame, random: random)
        }

        if let text {
            let (x, y) = Self.captionCorner(text, side: request.size, round: round)
            if style == .flat && composition.look.horizon == nil {
                composition.flatRibbon(scene, x: x, y: y, width: text.box.width, height: text.box.height)
            }
            scene.draw(text, color: palette.ink, x: x, y: y)
        }
        return scene.scene
    }

    /// Where the caption's ink box's top-left corner goes: centred across,
    /// its middle at 68.5% of the height on a round badge (67.5% for two lines,
    /// whose lower line is wider there), at 80% on a tile.
    static func captionCorner(_ text: TextImage, side: Int, round: Bool) -> (x: Int, y: Int) {
        let twoLines = text.text.contains("\n")
        let y = Int(Double(side) * (twoLines ? (round ? 0.675 : 0.8) : (round ? 0.685 : 0.8)))
        return ((side - text.box.width) / 2, y - text.box.height / 2)
    }

    /// What to tell the user when the caption's words cannot all be drawn:
    /// a letter no installed font has, or nothing drawn at all. Fonts are
    /// looked for only when the caption is not wholly in the caption font.
    static func captionWarning(_ words: String, drawn: TextImage?) -> String? {
        guard !words.isEmpty else { return nil }
        // The caption font has every ASCII letter: a caption of them that was drawn needs no font opened.
        let simple = words.unicodeScalars.allSatisfy { $0.isASCII }
        if simple && drawn != nil { return nil }
        guard let face = try? Font.caption().open() else {
            return "the caption was not drawn: no caption font (DejaVu Sans Bold); install it: apt-get install fonts-dejavu-core fontconfig"
        }
        let missing = simple ? [] : FontStack(primary: face).missing(in: words)
        guard !missing.isEmpty || drawn == nil else { return nil }
        if missing.isEmpty {
            // The caption is sized by the side: a larger badge holds no more words.
            return "the caption was not drawn: even its shortest form does not fit the badge at a legible size; give a shorter one with --caption"
        }
        let named = missing.prefix(8).map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
        let what = drawn == nil ? "the caption was not drawn" : "the caption was drawn without some of its letters"
        return "\(what): no installed font has \(named); \(FontStack.hint(for: missing))"
    }

    /// Notches around a round badge's rim, as on a struck medal; their number varies with the seed.
    static func drawNotches(_ scene: SceneRecorder, size s: Double, palette: Palette, random: inout SplitMix64) {
        let c = Point(s / 2, s / 2)
        let notches = 24 + Int(random.next() % 4) * 6
        for k in 0..<notches {
            let a = Double(k) / Double(notches) * 2 * .pi
            let r0 = s * 0.424, r1 = s * 0.44
            scene.fill(.capsule(from: Point(c.x + cos(a) * r0, c.y + sin(a) * r0), to: Point(c.x + cos(a) * r1, c.y + sin(a) * r1),
                                 radius: s * 0.0035), with: .solid(palette.rimDark.withAlpha(110)))
        }
    }
}
