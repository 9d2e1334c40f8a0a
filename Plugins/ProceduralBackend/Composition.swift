import Canvas
import Foundation

/// What a seed varies beyond the hue: the pattern on the
/// face, the rim's, and what stands around the motif in the accent colour.
/// Consecutive seeds (a batch's variants) change all three at once.
struct Layout: Sendable, Equatable {
    enum Backdrop: String, CaseIterable, Sendable { case plain, rays, rings, dots, stripes }
    enum Rim: String, CaseIterable, Sendable { case notches, beads, ridges }
    enum Arrangement: String, CaseIterable, Sendable { case centred, halo, stars, laurel }

    var backdrop: Backdrop
    var rim: Rim
    var arrangement: Arrangement

    init(prompt: String, seed: UInt64) {
        let s = seed &+ stableHash(prompt, seed: 0) % 1_000_003
        backdrop = Backdrop.allCases[Int(s % 5)]
        rim = Rim.allCases[Int(s % 3)]
        arrangement = Arrangement.allCases[Int(s % 4)]
    }

    /// Raw values, not the cases' descriptions: describing an enum case asks the
    /// runtime which protocols it conforms to, a scan of every conformance in
    /// the binary for each type (~1 ms of a badge's start).
    var description: String { "\(backdrop.rawValue), \(rim.rawValue) rim, \(arrangement.rawValue)" }
}

/// The drawing of the face, the rim and what stands around the
/// motif; or, for a prompt about a sunrise, sunset or night sky, a horizon scene.
struct Composition: Sendable {
    let size: Double
    let style: BadgeArt.Style
    let palette: Palette
    let layout: Layout
    let look: LookReading
    /// The motif. In a horizon scene it stands on the horizon as a silhouette,
    /// or is left out when the scene already draws it (a sun, the sea, the moon).
    let motif: Motif
    /// The icon drawn in the motif's place, when the badge draws one (IconChoice).
    var icon: Icon? = nil

    var round: Bool { style != .tile }
    var center: Point { Point(size / 2, size / 2) }
    var outer: Double { size * 0.455 }
    var inner: Double { size * 0.385 }

    /// The horizon's height on the canvas, for a horizon scene.
    var horizonY: Double { round ? size * 0.57 : size * 0.6 }

    // MARK: the background

    func background(_ scene: SceneRecorder, random: inout SplitMix64) {
        let s = size, c = center
        switch style {
        case .sketch: return sketchBackground(scene)
        case .flat where look.horizon == nil: return flatBackground(scene)
        case .flat where round: return flatHorizon(scene)
        default: break
        }
        if round && style == .medal {
            let soft = s * 0.022
            scene.fill(.ring(center: Point(c.x, c.y + s * 0.014), inner: outer - s * 0.016 - 3 * soft, outer: outer),
                        with: .solid(RGBA(0, 0, 0, 120)), softness: soft, hidden: Disc(center: c, radius: outer - 0.51))
        }
        if look.horizon != nil {
            horizonScene(scene, random: &random)
        } else {
            face(scene)
            backdrop(scene)
            if round {
                // The accent ring inside the rim: thin, double or wide, with the rim's pattern.
                // It keeps to the face's outer 0.02 of the side: the caption's lines
                // (Caption.maxWidth) stay clear of it.
                let rings: [(Double, Double)]
                switch layout.rim {
                case .notches: rings = [(0.014, 0.006)]
                case .beads: rings = [(0.02, 0.016), (0.012, 0.004)]
                case .ridges: rings = [(0.02, 0.006)]
                }
                for (from, to) in rings {
                    scene.fill(.ring(center: c, inner: inner - s * from, outer: inner - s * to), with: .solid(palette.accent))
                }
            }
        }
        if round { rim(scene, random: &random) }
    }

    private func face(_ scene: SceneRecorder) {
        let s = size, c = center
        switch style {
        case .tile:
            scene.fill(.roundedRect(x: 0, y: 0, width: s, height: s, radius: 0), with: .linear(
                start: Point(0, 0), end: Point(s, s), stops: [(0, palette.faceLight), (1, palette.faceDark)]))
        case .flat:
            scene.fill(.circle(center: c, radius: inner + 1), with: .solid(palette.faceLight.mixed(with: palette.faceDark, 0.5)))
        default:
            scene.fill(.circle(center: c, radius: inner + 1), with: .radial(
                center: Point(s * 0.42, s * 0.36), radius: inner * 1.35, stops: [(0, palette.faceLight), (1, palette.faceDark)]))
        }
    }

    /// Black or white at `alpha`, whichever is further from the ink: a pattern
    /// drawn in it only ever adds to the ink's contrast with the face.
    func away(_ alpha: UInt8) -> RGBA {
        (palette.ink.luminance > 0.5 ? RGBA.black : RGBA.white).withAlpha(alpha)
    }

    /// Flat's face colour: the plate the motif stands on and the ribbon the caption is on.
    var flatFace: RGBA { palette.faceLight.mixed(with: palette.faceDark, 0.5) }

    /// Flat's field: the disc around the plate, the face taken a third of the way to the ink.
    var flatField: RGBA { flatFace.mixed(with: palette.ink, 0.36) }

    /// Flat: a layout of its own in solid colours, no metal, bevel or shadow.
    /// A disc of the field colour out to the edge, with the seed's pattern on
    /// it and, for the rim, a line of the accent colour, dashed, dotted or
    /// solid; the motif stands on a plate of the face colour (`flatPlate`) and
    /// the caption on a ribbon of it (`flatRibbon`), both drawn with them.
    private func flatBackground(_ scene: SceneRecorder) {
        let s = size, c = center
        scene.fill(.circle(center: c, radius: outer), with: .solid(flatField))
        backdrop(scene)
        let r = outer - s * 0.02
        switch layout.rim {
        case .notches:
            let dashes = 40
            for k in 0..<dashes {
                let a0 = Double(k) / Double(dashes) * 2 * .pi, a1 = a0 + 0.6 / Double(dashes) * 2 * .pi
                scene.fill(.capsule(from: Point(c.x + cos(a0) * r, c.y + sin(a0) * r), to: Point(c.x + cos(a1) * r, c.y + sin(a1) * r),
                                    radius: s * 0.005), with: .solid(palette.accent))
            }
        case .beads:
            let beads = 36
            for k in 0..<beads {
                let a = (Double(k) + 0.5) / Double(beads) * 2 * .pi
                scene.fill(.circle(center: Point(c.x + cos(a) * r, c.y + sin(a) * r), radius: s * 0.0065), with: .solid(palette.accent))
            }
        case .ridges:
            scene.fill(.ring(center: c, inner: r - s * 0.005, outer: r + s * 0.005), with: .solid(palette.accent))
        }
    }

    /// The plate a flat motif stands on: a disc of the face colour around it.
    func flatPlate(_ scene: SceneRecorder, frame: Frame) {
        scene.fill(.circle(center: frame.center, radius: frame.radius * 1.4), with: .solid(flatFace))
    }

    /// The ribbon a flat caption stands on: a band of the face colour across
    /// the disc and a little past it, its rows whole pixels, and behind each
    /// end a swallow-tailed fold in a deeper shade.
    func flatRibbon(_ scene: SceneRecorder, x: Int, y: Int, width: Int, height: Int) {
        let s = size, c = center
        let pad = (s * 0.028).rounded()
        let top = Double(y) - pad, bottom = Double(y + height) + pad
        let half = max(Double(width) / 2 + s * 0.05, s * 0.4)
        let fold = flatFace.mixed(with: palette.ink, 0.55)
        let depth = s * 0.05, drop = (bottom - top) * 0.35
        for side in [-1.0, 1.0] {
            let inner = c.x + side * (half - depth), outer = c.x + side * (half + depth * 0.9)
            scene.fill(.polygon([Point(inner, top + drop), Point(outer, top + drop), Point(c.x + side * (half + depth * 0.2), (top + bottom) / 2 + drop),
                                 Point(outer, bottom + drop), Point(inner, bottom + drop)]), with: .solid(fold))
        }
        scene.fill(.roundedRect(x: c.x - half, y: top, width: 2 * half, height: bottom - top, radius: 0), with: .solid(flatFace))
    }

    /// The part of the disc of radius `r` between the heights `top` and `bottom`.
    private func slice(radius r: Double, from top: Double, to bottom: Double) -> Shape {
        let c = center
        let a0 = asin(max(-1, min(1, (top - c.y) / r))), a1 = asin(max(-1, min(1, (bottom - c.y) / r)))
        let right = (0...24).map { i -> Point in
            let a = a0 + (a1 - a0) * Double(i) / 24
            return Point(c.x + cos(a) * r, c.y + sin(a) * r)
        }
        let left = right.reversed().map { Point(2 * c.x - $0.x, $0.y) }
        return .polygon(right + left)
    }

    /// A flat horizon scene: the sky in bands of solid colour, a solid sun half
    /// set, solid ground with bars of its light, and no rim but a line of light.
    private func flatHorizon(_ scene: SceneRecorder) {
        let s = size, c = center, colours = sky, hy = horizonY
        let night = look.horizon?.kind == .night
        scene.fill(.circle(center: c, radius: outer), with: .solid(colours.top))
        let top = Lab(colours.top), glow = Lab(colours.glow)
        scene.fill(slice(radius: outer, from: hy - s * 0.24, to: hy), with: .solid(top.mixed(with: glow, 0.45).rgba))
        scene.fill(slice(radius: outer, from: hy - s * 0.12, to: hy), with: .solid(colours.glow))
        let sunX = c.x + (standsOnHorizon ? s * 0.13 : 0)
        if !night { scene.fill(.circle(center: Point(sunX, hy), radius: s * 0.085), with: .solid(colours.light)) }
        scene.fill(slice(radius: outer, from: hy, to: c.y + outer), with: .solid(colours.ground))
        // One bar of the light's reflection, above where the caption stands.
        if !night {
            scene.fill(.capsule(from: Point(sunX - s * 0.07, hy + s * 0.024), to: Point(sunX + s * 0.07, hy + s * 0.024), radius: s * 0.006),
                        with: .solid(colours.light.mixed(with: colours.ground, 0.35)))
        }
        scene.fill(.ring(center: c, inner: outer - s * 0.03, outer: outer - s * 0.022), with: .solid(colours.light))
    }

    /// Sketch: paper and ink (Palette.sketch), a pencil ring for the rim with
    /// the seed's ticks, dots or second ring, and the seed's pattern hatched
    /// faintly in ink.
    private func sketchBackground(_ scene: SceneRecorder) {
        let s = size, c = center, ink = palette.ink
        scene.fill(.circle(center: c, radius: outer), with: .solid(palette.faceLight))
        backdrop(scene)
        scene.fill(.ring(center: c, inner: outer - s * 0.015, outer: outer), with: .solid(ink))
        scene.fill(.ring(center: c, inner: s * 0.408, outer: s * 0.414), with: .solid(ink.withAlpha(200)))
        switch layout.rim {
        case .notches:
            let ticks = 48
            for k in 0..<ticks {
                let a = Double(k) / Double(ticks) * 2 * .pi
                let r0 = s * 0.418, r1 = s * 0.436
                scene.fill(.capsule(from: Point(c.x + cos(a) * r0, c.y + sin(a) * r0), to: Point(c.x + cos(a) * r1, c.y + sin(a) * r1),
                                     radius: s * 0.002), with: .solid(ink.withAlpha(210)))
            }
        case .beads:
            let beads = 40
            for k in 0..<beads {
                let a = (Double(k) + 0.5) / Double(beads) * 2 * .pi
                scene.fill(.circle(center: Point(c.x + cos(a) * s * 0.427, c.y + sin(a) * s * 0.427), radius: s * 0.0045), with: .solid(ink))
            }
        case .ridges:
            scene.fill(.ring(center: c, inner: s * 0.425, outer: s * 0.429), with: .solid(ink.withAlpha(200)))
            scene.fill(.ring(center: c, inner: s * 0.397, outer: s * 0.4), with: .solid(ink.withAlpha(160)))
        }
    }

    /// A tone-on-tone pattern on the face, faint enough that the caption over
    /// it reads (OCR reads every script's caption on it: CaptionOCRTests); in
    /// a sketch, hatched in the ink.
    private func backdrop(_ scene: SceneRecorder) {
        let s = size, c = center
        let tone = style == .sketch ? palette.ink.withAlpha(30) : away(30)
        let dots = style == .sketch ? palette.ink.withAlpha(64) : away(48)
        let reach = round ? inner * 0.94 : s * 0.75
        switch layout.backdrop {
        case .plain:
            break
        case .rays:
            let rays = 16
            for k in stride(from: 0, to: rays * 2, by: 2) {
                let a0 = Double(k) / Double(rays * 2) * 2 * .pi, a1 = Double(k + 1) / Double(rays * 2) * 2 * .pi
                var points = [c]
                for i in 0...4 {
                    let a = a0 + (a1 - a0) * Double(i) / 4
                    points.append(Point(c.x + cos(a) * reach, c.y + sin(a) * reach))
                }
                scene.fill(.polygon(points), with: .solid(tone))
            }
        case .rings:
            var r = s * 0.06
            while r < reach - s * 0.01 {
                scene.fill(.ring(center: c, inner: r, outer: r + s * 0.014), with: .solid(tone))
                r += s * 0.05
            }
        case .dots:
            let step = s * 0.05
            let n = Int(reach / step) + 1
            for j in -n...n {
                for i in -n...n {
                    let p = Point(c.x + Double(i) * step + (j % 2 == 0 ? 0 : step / 2), c.y + Double(j) * step)
                    let d = ((p.x - c.x) * (p.x - c.x) + (p.y - c.y) * (p.y - c.y)).squareRoot()
                    guard !round || d < reach - s * 0.01 else { continue }
                    scene.fill(.circle(center: p, radius: s * 0.008), with: .solid(dots))
                }
            }
        case .stripes:
            // Lines at 45°, each as short pieces: a shape is costed by its box,
            // and a long diagonal's box would be most of the face.
            let half = s * 0.006, step = s * 0.045, piece = s * 0.06
            let reachLine = round ? reach - half : s
            let n = (x: 0.7071, y: -0.7071), t = (x: 0.7071, y: 0.7071)
            var d = -reachLine
            while d <= reachLine {
                let length = round ? (reachLine * reachLine - d * d).squareRoot() : s
                let m = Point(c.x + n.x * d, c.y + n.y * d)
                let pieces = max(1, Int((2 * length / piece).rounded(.up)))
                for k in 0..<pieces {
                    let a = -length + 2 * length * Double(k) / Double(pieces), b = -length + 2 * length * Double(k + 1) / Double(pieces)
                    func corner(_ along: Double, _ across: Double) -> Point {
                        Point(m.x + t.x * along + n.x * across, m.y + t.y * along + n.y * across)
                    }
                    scene.fill(.polygon([corner(a, half), corner(b, half), corner(b, -half), corner(a, -half)]), with: .solid(tone))
                }
                d += step
            }
        }
    }

    private func rim(_ scene: SceneRecorder, random: inout SplitMix64) {
        let s = size, c = center
        if style == .flat {
            scene.fill(.ring(center: c, inner: inner, outer: outer), with: .solid(palette.rimLight.mixed(with: palette.rimDark, 0.35)))
        } else {
            scene.fill(.ring(center: c, inner: inner, outer: outer), with: palette.rimMetal(side: s))
            scene.fill(.ring(center: c, inner: inner, outer: inner + s * 0.012), with: palette.rimBevel(side: s))
        }
        let middle = (inner + outer) / 2 + s * 0.004
        switch layout.rim {
        case .notches:
            BadgeArt.drawNotches(scene, size: s, palette: palette, random: &random)
        case .beads:
            let beads = 40
            for k in 0..<beads {
                let a = (Double(k) + 0.5) / Double(beads) * 2 * .pi
                let p = Point(c.x + cos(a) * middle, c.y + sin(a) * middle)
                scene.fill(.circle(center: p, radius: s * 0.0075), with: .solid(palette.rimDark.withAlpha(90)))
                scene.fill(.circle(center: Point(p.x - s * 0.0015, p.y - s * 0.0015), radius: s * 0.0045),
                            with: .solid(palette.rimLight.withAlpha(200)))
            }
        case .ridges:
            let ridges = 96
            for k in 0..<ridges {
                let a = Double(k) / Double(ridges) * 2 * .pi
                let r0 = inner + s * 0.016, r1 = outer - s * 0.008
                scene.fill(.capsule(from: Point(c.x + cos(a) * r0, c.y + sin(a) * r0), to: Point(c.x + cos(a) * r1, c.y + sin(a) * r1),
                                     radius: s * 0.0016), with: .solid(palette.rimDark.withAlpha(80)))
            }
        }
    }

    // MARK: the horizon scene

    /// The scene's colours: the sky's top, the ground's, and the light rising at the horizon.
    struct SkyColours {
        var top: RGBA
        var ground: RGBA
        var glow: RGBA
        var light: RGBA
    }

    static let defaultSkies: [LookReading.Horizon: (top: String, glow: String, light: String)] = [
        .sunset: ("#1B1F4B", "#F2705A", "#FFC65C"), .sunrise: ("#2B3F7A", "#F49A8C", "#FFD59A"),
        .dawn: ("#34477F", "#C8A2D8", "#FFE0B0"), .dusk: ("#231A45", "#B2507A", "#F59A5B"),
        .night: ("#070B1E", "#1F2D5C", "#5868A8"), .horizon: ("#24507F", "#7FB2D8", "#F2E2B8"),
    ]

    /// Dark colours the prompt names are the sky and the ground; light ones the glow, in the order named.
    var sky: SkyColours {
        let kind = look.horizon?.kind ?? .horizon
        let fallback = Self.defaultSkies[kind]!
        let named = look.colours.map { look.pastel ? Lab($0.color).lightTint(minimum: 82).rgba : $0.color }
        let darks = named.filter { Lab($0).l < 40 }, lights = named.filter { Lab($0).l >= 40 }
        let top = darks.first ?? RGBA(hex: fallback.top)!
        let lab = Lab(top)
        var ground = darks.count > 1 ? darks[1] : Lab(l: lab.l * 0.5, a: lab.a * 0.6, b: lab.b * 0.6).rgba
        if Lab(ground).l > 30 { ground = Lab(ground).lighter(30 - Lab(ground).l).rgba }
        let glow = lights.first ?? RGBA(hex: fallback.glow)!
        let light = lights.count > 1 ? lights[1] : (lights.isEmpty ? RGBA(hex: fallback.light)! : Lab(glow).lighter(14).rgba)
        return SkyColours(top: top, ground: ground, glow: glow, light: light)
    }

    private func horizonScene(_ scene: SceneRecorder, random: inout SplitMix64) {
        let s = size, c = center, colours = sky
        let hy = horizonY
        let night = look.horizon?.kind == .night
        // The face's extent: the disc, or the whole square.
        let top = round ? c.y - inner : 0
        let skyShape: Shape = round ? .circle(center: c, radius: inner + 1) : .roundedRect(x: 0, y: 0, width: s, height: hy + 1, radius: 0)
        let skyTop = Lab(colours.top), glow = Lab(colours.glow), light = Lab(colours.light)
        scene.fill(skyShape, with: .linear(start: Point(0, top), end: Point(0, hy), stops: [
            (0, colours.top), (0.3, skyTop.mixed(with: glow, 0.12).rgba), (0.55, skyTop.mixed(with: glow, 0.4).rgba),
            (0.75, skyTop.mixed(with: glow, 0.8).rgba), (0.88, glow.mixed(with: light, 0.5).rgba), (1, colours.light)]))
        // Stars in the upper sky, where the glow does not reach.
        if night || look.horizon?.kind == .dusk {
            for _ in 0..<18 {
                let x = random.unit(), y = random.unit()
                let p = Point(s * (0.1 + 0.8 * x), top + (hy - top) * 0.55 * y + s * 0.02)
                if round && hypot(p.x - c.x, p.y - c.y) > inner - s * 0.03 { continue }
                scene.fill(.circle(center: p, radius: s * (0.002 + 0.003 * random.unit())), with: .solid(RGBA(255, 255, 255, 200)))
            }
        }
        // A few long thin clouds where the light begins, lit from below.
        if !night {
            for k in 0..<3 {
                let y = top + (hy - top) * (0.5 + 0.13 * Double(k)) + s * 0.02 * (random.unit() - 0.5)
                let x = s * (0.2 + 0.6 * random.unit())
                // Clear of the picture's edges.
                var half = min(s * (0.12 + 0.1 * random.unit()), x - s * 0.08, s * 0.92 - x)
                if round {
                    let chord = inner * inner - (y - c.y) * (y - c.y)
                    half = min(half, max(0, chord).squareRoot() - abs(x - c.x) - s * 0.06)
                }
                guard half > s * 0.03 else { continue }
                scene.fill(.capsule(from: Point(x - half, y), to: Point(x + half, y), radius: s * 0.007),
                            with: .solid(colours.glow.mixed(with: colours.light, 0.3).withAlpha(90)), softness: s * 0.012)
            }
        }
        let sunRadius = s * (0.085 + 0.03 * random.unit())
        // Beside a figure standing on the horizon, else near the middle.
        let sunX = c.x + s * (standsOnHorizon ? 0.13 : (random.unit() - 0.5) * 0.12)
        // The glow: brightest on the horizon line, fading up into the sky.
        // Round, the glow stays inside the rim: nothing is drawn in the transparent corners.
        let glowSoftness = round ? s * 0.08 : s * 0.12
        let glowWidth = round ? min(s * 0.28, outer - abs(sunX - c.x) - glowSoftness - s * 0.02) : s * 0.4
        scene.fill(.ellipse(center: Point(sunX, hy), rx: glowWidth, ry: s * 0.1), with: .solid(colours.light.lighter(0.35).withAlpha(night ? 70 : 150)),
                    softness: glowSoftness)
        if !night {
            scene.fill(.circle(center: Point(sunX, hy + sunRadius * 0.2), radius: sunRadius), with: .solid(colours.light.lighter(0.55)))
            scene.fill(.circle(center: Point(sunX, hy + sunRadius * 0.2), radius: sunRadius * 1.25),
                        with: .solid(colours.light.lighter(0.5).withAlpha(90)), softness: s * 0.03)
        }
        // The ground or the sea, in the dark colour, lit a little at the horizon.
        let seaTop = colours.ground.mixed(with: colours.glow, 0.18)
        let sea: Shape
        if round {
            let r = inner + 1, dy = hy - c.y
            let a0 = asin(max(-1, min(1, dy / r)))
            let points = (0...48).map { i -> Point in
                let a = a0 + (.pi - 2 * a0) * Double(i) / 48
                return Point(c.x + cos(a) * r, c.y + sin(a) * r)
            }
            sea = .polygon(points)
        } else {
            sea = .roundedRect(x: 0, y: hy, width: s, height: s - hy, radius: 0)
        }
        scene.fill(sea, with: .linear(start: Point(0, hy), end: Point(0, round ? c.y + inner : s),
                                       stops: [(0, seaTop), (0.35, colours.ground), (1, colours.ground.darker(0.25))]))
        // The sea's faint swell, and the glow spilling onto it.
        scene.fill(.ellipse(center: Point(sunX, hy), rx: glowWidth * 0.8, ry: s * 0.05), with: .solid(colours.light.withAlpha(night ? 25 : 45)),
                    softness: s * 0.05)
        for k in 1..<7 {
            let y = hy + s * (0.02 + Double(k * k) * 0.006)
            let half = round ? (inner * inner - (y - c.y) * (y - c.y)).squareRoot() - s * 0.02 : s / 2
            guard half > 0 else { continue }
            scene.fill(.capsule(from: Point(c.x - half, y), to: Point(c.x + half, y), radius: s * 0.0012),
                        with: .solid(colours.glow.withAlpha(10)))
        }
        // The light's reflection: thin broken lines under the sun, fading further down.
        // Above the caption: round, its two lines begin at about 0.62 of the height.
        let reflectionEnd = round ? hy + s * 0.045 : s * 0.74
        for k in 0..<12 {
            let y = hy + s * (0.01 + Double(k) * 0.011 + Double(k * k) * 0.0011)
            guard y < reflectionEnd else { break }
            var half = sunRadius * (1.25 - Double(k) * 0.07) * (0.7 + 0.5 * random.unit())
            if round {
                let chord = inner * inner - (y - c.y) * (y - c.y)
                guard chord > 0 else { continue }
                half = min(half, chord.squareRoot() - s * 0.03)
            }
            guard half > s * 0.01 else { continue }
            let shift = (random.unit() - 0.5) * s * 0.03
            let gap = half * (0.1 + 0.3 * random.unit()) * (random.unit() < 0.5 ? -1 : 1)
            let color = colours.light.lighter(0.3).withAlpha(UInt8(max(30, 200 - k * 15)))
            let thickness = s * (0.0022 + 0.00025 * Double(k))
            scene.fill(.capsule(from: Point(sunX - half + shift, y), to: Point(sunX + gap - s * 0.006 + shift, y), radius: thickness), with: .solid(color))
            scene.fill(.capsule(from: Point(sunX + gap + s * 0.006 + shift, y), to: Point(sunX + half + shift, y), radius: thickness), with: .solid(color))
        }
        // The horizon line itself, catching the light.
        let halfLine = round ? (inner * inner - (hy - c.y) * (hy - c.y)).squareRoot() : s / 2
        scene.fill(.capsule(from: Point(c.x - halfLine, hy), to: Point(c.x + halfLine, hy), radius: s * 0.0022),
                    with: .solid(colours.light.lighter(0.5).withAlpha(150)))
    }

    // MARK: the motif and what stands around it

    /// Motifs a horizon scene already draws.
    static let sceneryMotifs: Set<Motif> = [.sun, .waves, .abstract, .globe, .moon]

    /// Whether the motif stands on the horizon as a silhouette.
    var standsOnHorizon: Bool { icon != nil || !Self.sceneryMotifs.contains(motif) }

    /// The motif's frame in the arrangement: alone, the motif stands larger;
    /// with something around it, smaller, and a halo (to 1.22 of the motif and
    /// its ring) within the motif's own frame, which the caption keeps clear of.
    func motifFrame(_ frame: Frame) -> Frame {
        var frame = frame
        frame.radius *= layout.arrangement == .centred ? 1.12 : layout.arrangement == .halo ? 0.78 : 0.9
        return frame
    }

    /// The motif, with the arrangement around it in the accent colour; in a
    /// horizon scene, a silhouette standing on the horizon. A sketch draws
    /// its motif as line art itself (`drawsMotif` false).
    func foreground(_ scene: SceneRecorder, motif: Motif, frame: Frame, random: SplitMix64, drawsMotif: Bool = true) {
        if look.horizon != nil {
            let colours = sky
            if look.horizon?.kind == .night || motif == .moon {
                var moon = MotifPainter(scene: scene, frame: Frame(center: Point(center.x + size * 0.16, size * (round ? 0.3 : 0.22)),
                                                                     radius: size * 0.08), ink: colours.light.lighter(0.6), cut: colours.top, random: random)
                moon.draw(.moon)
            }
            guard standsOnHorizon else { return }
            let radius = size * 0.12
            let standing = Frame(center: Point(center.x - size * 0.05, horizonY - radius * 0.82), radius: radius)
            // Dark against the light; at night, light against the dark.
            let night = look.horizon?.kind == .night
            drawMotif(scene, motif, frame: standing, ink: night ? colours.light.lighter(0.3) : colours.ground,
                      cut: night ? colours.top : colours.glow, random: random)
            return
        }
        let accent = palette.accent
        if style == .flat { flatPlate(scene, frame: frame) }
        let frame = motifFrame(frame)
        let r = frame.radius
        switch layout.arrangement {
        case .centred:
            break
        case .halo:
            if style == .medal || style == .tile { scene.fill(.circle(center: frame.center, radius: r * 1.22), with: .solid(away(40))) }
            scene.fill(.ring(center: frame.center, inner: r * 1.22, outer: r * 1.22 + size * 0.01), with: .solid(accent))
        case .stars:
            for k in 0..<5 {
                let a = -.pi / 2 + (Double(k) - 2) * 0.32
                let rr = r * (k == 2 ? 1.42 : 1.36)
                star(scene, Point(frame.center.x + cos(a) * rr, frame.center.y + sin(a) * rr), size * (k == 2 ? 0.026 : 0.018), accent)
            }
        case .laurel:
            // Two branches rising from below the motif, leaves alternating along each.
            let rr = r * 1.3
            for side in [-1.0, 1.0] {
                var stem: [Point] = []
                for i in 0...24 {
                    let a: Double = .pi / 2 + side * (0.32 + 2.1 * Double(i) / 24)
                    stem.append(Point(frame.center.x + cos(a) * rr, frame.center.y + sin(a) * rr))
                }
                scene.fill(.polyline(stem, radius: size * 0.0035), with: .solid(accent))
                for k in 0..<8 {
                    let a: Double = .pi / 2 + side * (0.42 + Double(k) * 0.26)
                    let p = Point(frame.center.x + cos(a) * rr, frame.center.y + sin(a) * rr)
                    // Along the branch, upwards, turned out or in by turns.
                    let tangent: Double = a + side * .pi / 2
                    let turn: Double = k % 2 == 0 ? 0.55 : -0.55
                    let t = tangent + turn * side
                    let length = size * 0.05 * (1 - Double(k) * 0.05), width = size * 0.022 * (1 - Double(k) * 0.05)
                    let tip = Point(p.x + cos(t) * length, p.y + sin(t) * length)
                    scene.fill(.polygon(Self.lens(from: p, to: tip, width: width)), with: .solid(accent))
                }
            }
        }
        guard drawsMotif else { return }
        drawMotif(scene, motif, frame: frame, ink: palette.ink, cut: palette.faceDark.mixed(with: palette.faceLight, 0.4), random: random)
    }

    /// The icon, when the badge draws one and its font renders it; else the hand-drawn motif.
    func drawMotif(_ scene: SceneRecorder, _ motif: Motif, frame: Frame, ink: RGBA, cut: RGBA, random: SplitMix64) {
        if let icon, IconFont.draw(icon, in: scene, frame: frame, ink: ink) { return }
        var painter = MotifPainter(scene: scene, frame: frame, ink: ink, cut: cut, random: random)
        painter.draw(motif)
    }

    private func star(_ scene: SceneRecorder, _ c: Point, _ r: Double, _ color: RGBA) {
        let points = (0..<10).map { k -> Point in
            let a = Double(k) / 10 * 2 * .pi - .pi / 2
            let radius = k % 2 == 0 ? r : r * 0.45
            return Point(c.x + cos(a) * radius, c.y + sin(a) * radius)
        }
        scene.fill(.polygon(points), with: .solid(color))
    }

    static func lens(from a: Point, to b: Point, width: Double) -> [Point] {
        let dx = b.x - a.x, dy = b.y - a.y
        let length = max(1e-9, (dx * dx + dy * dy).squareRoot())
        let nx = -dy / length, ny = dx / length
        let side = { (sign: Double) in (0...10).map { i -> Point in
            let t = Double(i) / 10, bulge = sin(t * .pi) * width / 2 * sign
            return Point(a.x + dx * t + nx * bulge, a.y + dy * t + ny * bulge)
        } }
        return side(1) + side(-1).reversed()
    }
}
