import Canvas
import Foundation

/// Maps a motif's own coordinates (a box from -1 to 1, y down) onto the
/// scene: centred at `center`, `radius` pixels to the box's edge, turned by `angle`.
struct Frame {
    var center: Point
    var radius: Double
    var angle: Double = 0

    func p(_ x: Double, _ y: Double) -> Point {
        let c = cos(angle), s = sin(angle)
        return Point(center.x + (x * c - y * s) * radius, center.y + (x * s + y * c) * radius)
    }

    func len(_ v: Double) -> Double { v * radius }
}

/// Clean pictogram art for each motif, in one ink colour with `cut` (the
/// face colour) for details carved out of it.
struct MotifPainter {
    let scene: SceneRecorder
    var frame: Frame
    let ink: RGBA
    let cut: RGBA
    var random: SplitMix64

    private func fill(_ shape: Shape, _ color: RGBA? = nil, opacity: Double = 1) {
        scene.fill(shape, with: .solid(color ?? ink), opacity: opacity)
    }

    private func capsule(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double, _ r: Double, _ color: RGBA? = nil) {
        fill(.capsule(from: frame.p(x0, y0), to: frame.p(x1, y1), radius: frame.len(r)), color)
    }

    private func box(_ cx: Double, _ cy: Double, _ w: Double, _ h: Double, _ r: Double, _ color: RGBA? = nil) {
        // Boxes are drawn as polygons so the frame's rotation applies to them.
        if frame.angle == 0 {
            let a = frame.p(cx - w / 2, cy - h / 2)
            fill(.roundedRect(x: a.x, y: a.y, width: frame.len(w), height: frame.len(h), radius: frame.len(r)), color)
        } else {
            fill(.polygon([frame.p(cx - w / 2, cy - h / 2), frame.p(cx + w / 2, cy - h / 2),
                           frame.p(cx + w / 2, cy + h / 2), frame.p(cx - w / 2, cy + h / 2)]), color)
        }
    }

    private func polygon(_ points: [(Double, Double)], _ color: RGBA? = nil) {
        fill(.polygon(points.map { frame.p($0.0, $0.1) }), color)
    }

    mutating func draw(_ motif: Motif) {
        switch motif {
        case .dumbbells: dumbbells()
        case .tree: tree(x: 0, base: 0.85, height: 1.7, width: 1.15)
        case .forest: forest()
        case .path: pathThroughForest()
        case .book: book()
        case .drop: drop()
        case .heart: heart()
        case .sun: sun()
        case .runner: runner()
        case .mountain: mountain()
        case .bicycle: bicycle()
        case .swimmer: swimmer()
        case .meditation: meditation()
        case .moon: moon()
        case .waves: waves()
        case .pencil: pencil()
        case .music: music()
        case .laptop: laptop()
        case .speech: speech()
        case .leaf: leaf()
        case .cup: cup()
        case .coins: coins()
        case .globe: globe()
        case .camera: camera()
        case .plane: plane()
        case .suitcase: suitcase()
        case .bed: bed()
        case .phone: phone()
        case .piggyBank: piggyBank()
        case .pot: pot()
        case .sprout: sprout()
        case .noSmoking: noSmoking()
        case .helpingHands: helpingHands()
        case .storybook: storybook()
        case .gradCap: gradCap()
        case .yoga: yoga()
        case .boot: boot()
        case .language: language()
        case .apple: apple()
        case .alarmClock: alarmClock()
        case .palette: palette()
        case .paw: paw()
        case .tooth: tooth()
        case .calendar: calendar()
        case .checklist: checklist()
        case .house: house()
        case .hourglass: hourglass()
        case .trophy: trophy()
        case .lightbulb: lightbulb()
        case .noAlcohol: noAlcohol()
        case .tent: tent()
        case .headphones: headphones()
        case .abstract: abstract()
        }
    }

    private func ring(_ x: Double, _ y: Double, _ r: Double, _ thickness: Double, _ color: RGBA? = nil) {
        fill(.ring(center: frame.p(x, y), inner: frame.len(r - thickness / 2), outer: frame.len(r + thickness / 2)), color)
    }

    private func circle(_ x: Double, _ y: Double, _ r: Double, _ color: RGBA? = nil) {
        fill(.circle(center: frame.p(x, y), radius: frame.len(r)), color)
    }

    private func stroke(_ points: [(Double, Double)], _ r: Double, _ color: RGBA? = nil) {
        fill(.polyline(points.map { frame.p($0.0, $0.1) }, radius: frame.len(r)), color)
    }

    private func wave(y: Double, from x0: Double, to x1: Double, amplitude: Double, periods: Double, phase: Double = 0) -> [(Double, Double)] {
        (0...40).map { i in
            let x = x0 + (x1 - x0) * Double(i) / 40
            return (x, y + amplitude * sin((Double(i) / 40 * periods + phase) * 2 * .pi))
        }
    }

    private func arc(_ cx: Double, _ cy: Double, _ r: Double, from a0: Double, to a1: Double, steps: Int = 32) -> [(Double, Double)] {
        (0...steps).map { i in
            let a = a0 + (a1 - a0) * Double(i) / Double(steps)
            return (cx + cos(a) * r, cy + sin(a) * r)
        }
    }

    private func star(_ x: Double, _ y: Double, _ r: Double, points: Int = 5, _ color: RGBA? = nil) {
        let p = (0..<(points * 2)).map { k -> (Double, Double) in
            let a = Double(k) / Double(points * 2) * 2 * .pi - .pi / 2
            let radius = k % 2 == 0 ? r : r * 0.45
            return (x + cos(a) * radius, y + sin(a) * radius)
        }
        polygon(p, color)
    }

    private func bicycle() {
        for x in [-0.55, 0.55] {
            ring(x, 0.32, 0.36, 0.08)
            circle(x, 0.32, 0.05)
        }
        let rear = (-0.55, 0.32), crank = (-0.05, 0.32), seat = (-0.22, -0.22), head = (0.38, -0.22), front = (0.55, 0.32)
        stroke([rear, seat, crank, rear], 0.045)
        stroke([crank, head, seat], 0.045)
        stroke([head, front], 0.045)
        stroke([head, (0.32, -0.45), (0.5, -0.48)], 0.04)
        stroke([(-0.34, -0.3), (-0.1, -0.3)], 0.055)
        circle(crank.0, crank.1, 0.08)
    }

    private func swimmer() {
        circle(0.42, -0.12, 0.14)
        stroke([(0.25, 0.02), (-0.15, 0.12), (-0.6, 0.1)], 0.1)
        stroke([(0.1, 0.0), (0.2, -0.4), (0.55, -0.5)], 0.08)
        stroke(wave(y: 0.32, from: -0.95, to: 0.95, amplitude: 0.06, periods: 3), 0.055)
        stroke(wave(y: 0.58, from: -0.8, to: 0.8, amplitude: 0.06, periods: 2.5, phase: 0.3), 0.055)
    }

    private func meditation() {
        circle(0, -0.6, 0.16)
        polygon([(-0.2, -0.38), (0.2, -0.38), (0.26, 0.18), (-0.26, 0.18)])
        for side in [-1.0, 1.0] {
            stroke([(side * 0.18, -0.32), (side * 0.42, -0.02), (side * 0.56, 0.2)], 0.075)
            circle(side * 0.58, 0.22, 0.07)
        }
        fill(.ellipse(center: frame.p(0, 0.34), rx: frame.len(0.75), ry: frame.len(0.2)))
        stroke([(-0.45, 0.3), (0.45, 0.38)], 0.03, cut)
    }

    private func moon() {
        // A crescent: the big disc less a smaller one, traced along both arcs.
        let r1 = 0.62, cx = 0.3, cy = -0.22, r2 = 0.52
        let d = (cx * cx + cy * cy).squareRoot()
        let a = (r1 * r1 - r2 * r2 + d * d) / (2 * d)
        let phi = atan2(cy, cx)
        let alpha1 = acos(a / r1), alpha2 = acos((d - a) / r2)
        let outer = arc(-0.12, 0.1, r1, from: phi + alpha1, to: phi + 2 * .pi - alpha1, steps: 64)
        let inner = arc(-0.12 + cx, 0.1 + cy, r2, from: phi + .pi + alpha2, to: phi + .pi - alpha2, steps: 48)
        polygon(outer + inner)
        star(0.55, -0.55, 0.14)
        star(0.25, 0.45, 0.09)
        star(0.75, 0.05, 0.07)
    }

    private func waves() {
        for (k, y) in [-0.35, 0.05, 0.45].enumerated() {
            stroke(wave(y: y, from: -0.85, to: 0.85, amplitude: 0.11, periods: 2, phase: Double(k) * 0.2), 0.085)
        }
    }

    private func pencil() {
        var tilted = self
        tilted.frame.angle += .pi / 4
        tilted.box(0, 0.02, 0.32, 1.0, 0.02)
        tilted.polygon([(-0.16, 0.52), (0.16, 0.52), (0, 0.9)])
        tilted.polygon([(-0.05, 0.78), (0.05, 0.78), (0, 0.9)], cut)
        tilted.box(0, -0.6, 0.32, 0.16, 0.06)
        tilted.box(0, -0.47, 0.34, 0.05, 0, cut)
        tilted.stroke([(0, -0.4), (0, 0.45)], 0.02, cut)
    }

    private func music() {
        for (x, y) in [(-0.4, 0.5), (0.42, 0.34)] {
            var tilted = self
            tilted.frame = Frame(center: frame.p(x, y), radius: frame.radius, angle: frame.angle - 0.35)
            tilted.fill(.ellipse(center: tilted.frame.p(0, 0), rx: frame.len(0.2), ry: frame.len(0.14)))
        }
        capsule(-0.22, 0.46, -0.22, -0.5, 0.045)
        capsule(0.6, 0.3, 0.6, -0.66, 0.045)
        polygon([(-0.26, -0.5), (0.64, -0.7), (0.64, -0.5), (-0.26, -0.3)])
    }

    private func laptop() {
        box(0, -0.18, 1.3, 0.86, 0.06)
        box(0, -0.18, 1.16, 0.72, 0.02, cut)
        polygon([(-0.82, 0.32), (0.82, 0.32), (0.95, 0.5), (-0.95, 0.5)])
        // </> on the screen
        stroke([(-0.2, -0.36), (-0.38, -0.18), (-0.2, 0.0)], 0.045)
        stroke([(0.2, -0.36), (0.38, -0.18), (0.2, 0.0)], 0.045)
        stroke([(0.07, -0.4), (-0.07, 0.04)], 0.04)
    }

    private func speech() {
        box(-0.08, -0.12, 1.5, 0.98, 0.3)
        polygon([(-0.45, 0.3), (-0.1, 0.3), (-0.62, 0.72)])
        for x in [-0.45, -0.08, 0.29] { circle(x, -0.12, 0.09, cut) }
    }

    private func leaf() {
        let upper = arc(0, 0.95, 1.45, from: -.pi / 2 - 0.58, to: -.pi / 2 + 0.58)
        let lower = arc(0, -0.95, 1.45, from: .pi / 2 - 0.58, to: .pi / 2 + 0.58)
        var tilted = self
        tilted.frame.angle -= 0.7
        tilted.polygon(upper + lower)
        tilted.stroke([(-0.78, 0), (0.7, 0)], 0.035, cut)
        for x in [-0.35, 0.0, 0.35] {
            tilted.stroke([(x, 0), (x + 0.22, -0.22)], 0.025, cut)
            tilted.stroke([(x, 0), (x + 0.22, 0.22)], 0.025, cut)
        }
        tilted.stroke([(-0.78, 0), (-1.0, 0.0)], 0.045)
    }

    private func cup() {
        ring(0.42, 0.18, 0.22, 0.09)
        polygon([(-0.62, -0.2), (0.42, -0.2), (0.34, 0.62), (-0.54, 0.62)])
        box(-0.1, 0.72, 1.2, 0.09, 0.045)
        for x in [-0.38, -0.1, 0.18] {
            stroke((0...20).map { i in
                let t = Double(i) / 20
                return (x + 0.07 * sin(t * 2 * .pi), -0.35 - t * 0.45)
            }, 0.035)
        }
    }

    private func coins() {
        for k in 0..<4 {
            let y = 0.62 - Double(k) * 0.16
            fill(.ellipse(center: frame.p(-0.25, y), rx: frame.len(0.48), ry: frame.len(0.13)))
            fill(.ellipse(center: frame.p(-0.25, y - 0.02), rx: frame.len(0.46), ry: frame.len(0.11)), cut, opacity: 0.25)
        }
        circle(0.4, -0.3, 0.45)
        ring(0.4, -0.3, 0.34, 0.05, cut)
        star(0.4, -0.3, 0.18)
    }

    private func globe() {
        circle(0, 0, 0.78)
        let meridian = { (rx: Double) in (0...48).map { i -> (Double, Double) in
            let a = Double(i) / 48 * 2 * .pi
            return (cos(a) * rx, sin(a) * 0.78)
        } }
        stroke(meridian(0.35), 0.03, cut)
        stroke([(0, -0.78), (0, 0.78)], 0.03, cut)
        stroke([(-0.78, 0), (0.78, 0)], 0.03, cut)
        for y in [-0.42, 0.42] {
            let half = (0.78 * 0.78 - y * y).squareRoot()
            stroke([(-half, y), (half, y)], 0.03, cut)
        }
    }

    private func camera() {
        box(0, 0.1, 1.6, 1.0, 0.14)
        box(-0.2, -0.45, 0.5, 0.22, 0.06)
        circle(0, 0.12, 0.36, cut)
        circle(0, 0.12, 0.26)
        circle(-0.08, 0.03, 0.07, cut)
        circle(0.55, -0.2, 0.06, cut)
    }

    private func dumbbells() {
        capsule(-0.78, 0, 0.78, 0, 0.07)
        for side in [-1.0, 1.0] {
            box(side * 0.42, 0, 0.16, 0.78, 0.05)
            box(side * 0.62, 0, 0.14, 0.56, 0.05)
            box(side * 0.79, 0, 0.08, 0.22, 0.03)
        }
    }

    private func tree(x: Double, base: Double, height: Double, width: Double) {
        box(x, base - height * 0.08, width * 0.14, height * 0.2, width * 0.02)
        let tiers = 3
        for k in 0..<tiers {
            let t = Double(k) / Double(tiers)
            let bottom = base - height * (0.14 + t * 0.26)
            let top = bottom - height * 0.46
            let half = width / 2 * (1 - t * 0.28)
            polygon([(x - half, bottom), (x + half, bottom), (x, top)])
        }
    }

    private func forest() {
        tree(x: -0.55, base: 0.75, height: 1.2, width: 0.78)
        tree(x: 0.55, base: 0.75, height: 1.2, width: 0.78)
        tree(x: 0, base: 0.85, height: 1.65, width: 1.0)
    }

    private func pathThroughForest() {
        // A road winding from the foreground into the distance, trees on both sides.
        var left: [(Double, Double)] = []
        var right: [(Double, Double)] = []
        let steps = 24
        for i in 0...steps {
            let t = Double(i) / Double(steps)
            let y = 0.95 - t * 1.25
            let centre = 0.18 * sin(t * .pi * 1.6 + 0.4)
            let half = 0.42 * (1 - t) + 0.04
            left.append((centre - half, y))
            right.append((centre + half, y))
        }
        polygon(left + right.reversed())
        // Dashes down the middle, in the face colour.
        for i in stride(from: 1, to: steps - 2, by: 4) {
            let t0 = Double(i) / Double(steps), t1 = Double(i + 2) / Double(steps)
            capsule(0.18 * sin(t0 * .pi * 1.6 + 0.4), 0.95 - t0 * 1.25, 0.18 * sin(t1 * .pi * 1.6 + 0.4), 0.95 - t1 * 1.25,
                    0.025 * (1 - t0) + 0.008, cut)
        }
        tree(x: -0.72, base: 0.55, height: 1.05, width: 0.62)
        tree(x: 0.74, base: 0.5, height: 0.95, width: 0.56)
        tree(x: -0.42, base: -0.05, height: 0.6, width: 0.36)
        tree(x: 0.48, base: -0.1, height: 0.55, width: 0.32)
    }

    private func book() {
        // An open book seen from the front: two pages rising to the spine.
        polygon([(-0.9, -0.45), (-0.45, -0.6), (0, -0.45), (0, 0.62), (-0.45, 0.48), (-0.9, 0.62)])
        polygon([(0.9, -0.45), (0.45, -0.6), (0, -0.45), (0, 0.62), (0.45, 0.48), (0.9, 0.62)])
        capsule(0, -0.42, 0, 0.6, 0.025, cut)
        for k in 0..<4 {
            let y = -0.28 + Double(k) * 0.2
            capsule(-0.75, y + 0.03, -0.15, y - 0.07, 0.018, cut)
            capsule(0.15, y - 0.07, 0.75, y + 0.03, 0.018, cut)
        }
    }

    private func drop() {
        // A round bottom and a point at the top, joined along the tangents.
        let centre = (x: 0.0, y: 0.25), r = 0.58, tip = (x: 0.0, y: -0.92)
        let alpha = acos(r / (centre.y - tip.y))
        var points: [(Double, Double)] = [(tip.x, tip.y)]
        let start = -Double.pi / 2 + alpha, end = 3 * Double.pi / 2 - alpha
        for i in 0...48 {
            let a = start + (end - start) * Double(i) / 48
            points.append((centre.x + cos(a) * r, centre.y + sin(a) * r))
        }
        polygon(points)
        fill(.ellipse(center: frame.p(-0.24, 0.3), rx: frame.len(0.08), ry: frame.len(0.17)), cut, opacity: 0.55)
    }

    private func heart() {
        var points: [(Double, Double)] = []
        for i in 0..<96 {
            let t = Double(i) / 96 * 2 * .pi
            let x = 16 * pow(sin(t), 3)
            let y = 13 * cos(t) - 5 * cos(2 * t) - 2 * cos(3 * t) - cos(4 * t)
            points.append((x / 18, -y / 18 + 0.08))
        }
        polygon(points)
    }

    private func sun() {
        fill(.circle(center: frame.p(0, 0), radius: frame.len(0.42)))
        let rays = 12
        for k in 0..<rays {
            let a = Double(k) / Double(rays) * 2 * .pi
            let long = k % 2 == 0 ? 0.92 : 0.8
            capsule(cos(a) * 0.58, sin(a) * 0.58, cos(a) * long, sin(a) * long, 0.055)
        }
    }

    private func runner() {
        // A pictogram runner mid-stride, leaning into the run.
        let w = 0.11
        fill(.circle(center: frame.p(0.22, -0.72), radius: frame.len(0.15)))
        capsule(0.12, -0.48, -0.1, 0.12, w)                       // torso
        capsule(0.1, -0.4, 0.42, -0.2, w * 0.85)                  // front upper arm
        capsule(0.42, -0.2, 0.6, -0.42, w * 0.8)                  // front forearm
        capsule(0.06, -0.38, -0.3, -0.2, w * 0.85)                // back upper arm
        capsule(-0.3, -0.2, -0.52, -0.38, w * 0.8)                // back forearm
        capsule(-0.1, 0.12, 0.28, 0.36, w)                        // front thigh
        capsule(0.28, 0.36, 0.18, 0.82, w * 0.9)                  // front shin
        capsule(0.18, 0.82, 0.36, 0.84, w * 0.7)                  // front foot
        capsule(-0.1, 0.12, -0.36, 0.46, w)                       // back thigh
        capsule(-0.36, 0.46, -0.72, 0.5, w * 0.9)                 // back shin
        for k in 0..<3 {                                          // speed lines
            let y = -0.25 + Double(k) * 0.28
            capsule(-0.95, y, -0.7 + Double(k) * 0.05, y, 0.035, ink.withAlpha(170))
        }
    }

    private func mountain() {
        polygon([(-0.95, 0.7), (-0.25, -0.55), (0.15, 0.05), (0.4, -0.25), (0.95, 0.7)])
        polygon([(-0.25, -0.55), (-0.42, -0.25), (-0.3, -0.3), (-0.22, -0.2), (-0.1, -0.3)], cut)
        polygon([(0.4, -0.25), (0.3, -0.1), (0.4, -0.14), (0.48, -0.08)], cut)
    }

    /// For prompts with no known word: a neutral emblem, never a religious or
    /// political sign (no star): a disc inside a ring, a rounded diamond cut
    /// into it and a dot at its heart, with a few beads on the ring's inside;
    /// proportions and beads come from the words.
    private mutating func abstract() {
        let beads = 3 + Int(random.next() % 3)
        let disc = 0.58 + random.unit() * 0.08
        let diamond = 0.3 + random.unit() * 0.12
        fill(.ring(center: frame.p(0, 0), inner: frame.len(0.88), outer: frame.len(0.96)), opacity: 0.8)
        circle(0, 0, disc)
        let d = diamond
        polygon([(0, -d), (d, 0), (0, d), (-d, 0)], cut)
        circle(0, 0, d * 0.38)
        for k in 0..<beads {
            let a = Double(k) / Double(beads) * 2 * .pi + .pi / 2
            circle(cos(a) * 0.76, sin(a) * 0.76, 0.055)
        }
    }
}

/// The motifs of common resolutions.
extension MotifPainter {
    /// A leaf-shaped lens from `a` to `b`, `width` across at its middle.
    private func lens(_ a: (Double, Double), _ b: (Double, Double), width: Double, _ color: RGBA? = nil) {
        let dx = b.0 - a.0, dy = b.1 - a.1
        let length = (dx * dx + dy * dy).squareRoot()
        let nx = -dy / length, ny = dx / length
        var points: [(Double, Double)] = []
        for i in 0...16 {
            let t = Double(i) / 16, bulge = sin(t * .pi) * width / 2
            points.append((a.0 + dx * t + nx * bulge, a.1 + dy * t + ny * bulge))
        }
        for i in (1..<16).reversed() {
            let t = Double(i) / 16, bulge = sin(t * .pi) * width / 2
            points.append((a.0 + dx * t - nx * bulge, a.1 + dy * t - ny * bulge))
        }
        polygon(points, color)
    }

    /// A ring with a slash across it, drawn over what is forbidden; the slash parts it from what is below.
    private func prohibited() {
        ring(0, 0, 0.84, 0.13)
        stroke([(-0.6, -0.6), (0.6, 0.6)], 0.12, cut)
        stroke([(-0.6, -0.6), (0.6, 0.6)], 0.065)
    }

    fileprivate func plane() {
        var t = self
        t.frame.angle += .pi / 4
        t.capsule(0, -0.82, 0, 0.72, 0.12)
        t.polygon([(-0.1, -0.22), (0.1, -0.22), (0.9, 0.16), (0.9, 0.3), (0.1, 0.1), (-0.1, 0.1), (-0.9, 0.3), (-0.9, 0.16)])
        t.polygon([(-0.07, 0.48), (0.07, 0.48), (0.38, 0.7), (0.38, 0.8), (0.07, 0.7), (-0.07, 0.7), (-0.38, 0.8), (-0.38, 0.7)])
    }

    fileprivate func suitcase() {
        stroke([(-0.26, -0.4), (-0.26, -0.66), (0.26, -0.66), (0.26, -0.4)], 0.075)
        box(0, 0.14, 1.56, 1.08, 0.14)
        for x in [-0.42, 0.42] { box(x, 0.14, 0.11, 1.08, 0, cut) }
        for x in [-0.52, 0.52] { circle(x, 0.76, 0.09) }
    }

    fileprivate func bed() {
        box(-0.84, 0.02, 0.14, 1.0, 0.05)
        box(0.84, 0.22, 0.14, 0.6, 0.05)
        box(0, 0.36, 1.8, 0.18, 0.04)
        circle(-0.52, -0.04, 0.16)
        box(0.16, 0.1, 1.2, 0.3, 0.1)
        stroke([(0.22, -0.78), (0.46, -0.78), (0.22, -0.52), (0.46, -0.52)], 0.045)
        stroke([(0.56, -0.46), (0.72, -0.46), (0.56, -0.28), (0.72, -0.28)], 0.035)
    }

    fileprivate func phone() {
        box(-0.22, 0.05, 0.9, 1.7, 0.16)
        box(-0.22, -0.02, 0.72, 1.28, 0.04, cut)
        circle(-0.22, 0.77, 0.06, cut)
        // A heart on the screen, and the call's sound rising beside the phone.
        var small = self
        small.frame = Frame(center: frame.p(-0.22, -0.05), radius: frame.radius * 0.32, angle: frame.angle)
        small.heart()
        for (k, r) in [0.28, 0.5].enumerated() {
            stroke(arc(0.28, -0.55, r, from: -1.25, to: 0.05, steps: 16), 0.06 - Double(k) * 0.008)
        }
    }

    fileprivate func piggyBank() {
        fill(.ellipse(center: frame.p(-0.05, 0.12), rx: frame.len(0.72), ry: frame.len(0.54)))
        box(0.72, 0.08, 0.26, 0.34, 0.1)
        polygon([(0.12, -0.32), (0.36, -0.66), (0.5, -0.26)])
        for x in [-0.42, 0.3] { box(x, 0.66, 0.18, 0.3, 0.06) }
        stroke(arc(-0.86, 0.0, 0.11, from: -0.5, to: 4.2, steps: 16), 0.035)
        capsule(-0.28, -0.28, 0.06, -0.28, 0.035, cut)
        circle(0.4, -0.06, 0.06, cut)
        circle(-0.11, -0.72, 0.17)
        ring(-0.11, -0.72, 0.1, 0.035, cut)
    }

    fileprivate func pot() {
        box(0, 0.3, 1.3, 0.78, 0.14)
        box(0, -0.1, 1.5, 0.13, 0.06)
        for side in [-1.0, 1.0] { box(side * 0.8, 0.12, 0.26, 0.11, 0.05) }
        fill(.ellipse(center: frame.p(0, -0.22), rx: frame.len(0.64), ry: frame.len(0.12)))
        circle(0, -0.34, 0.08)
        for x in [-0.34, 0.0, 0.34] {
            stroke((0...20).map { i in
                let t = Double(i) / 20
                return (x + 0.07 * sin(t * 2 * .pi), -0.5 - t * 0.42)
            }, 0.035)
        }
    }

    fileprivate func sprout() {
        fill(.ellipse(center: frame.p(0, 0.74), rx: frame.len(0.78), ry: frame.len(0.2)))
        stroke([(0, 0.66), (0, 0.2), (0.04, -0.1), (0.1, -0.3)], 0.06)
        lens((0, 0.2), (-0.72, -0.32), width: 0.46)
        lens((0.06, -0.12), (0.7, -0.78), width: 0.5)
        stroke([(-0.08, 0.12), (-0.52, -0.2)], 0.022, cut)
        stroke([(0.14, -0.2), (0.56, -0.62)], 0.022, cut)
    }

    fileprivate func noSmoking() {
        box(-0.05, 0.06, 1.2, 0.24, 0.03)
        box(0.4, 0.06, 0.025, 0.24, 0, cut)
        stroke(wave(y: -0.3, from: -0.55, to: -0.15, amplitude: 0.06, periods: 1.2), 0.03)
        prohibited()
    }

    fileprivate func helpingHands() {
        var small = self
        small.frame = Frame(center: frame.p(0, -0.3), radius: frame.radius * 0.5, angle: frame.angle)
        small.heart()
        for side in [-1.0, 1.0] {
            // A cupped hand: the palm's curve, the thumb over the heart, the wrist below.
            stroke(arc(0, -0.12, 0.68, from: side < 0 ? 0.5 * .pi : 0.08 * .pi, to: side < 0 ? 0.92 * .pi : 0.5 * .pi, steps: 20), 0.13)
            capsule(side * 0.66, 0.0, side * 0.78, -0.32, 0.08)
            capsule(side * 0.55, 0.42, side * 0.72, 0.82, 0.15)
        }
    }

    fileprivate func storybook() {
        circle(-0.32, -0.6, 0.2)
        fill(.ellipse(center: frame.p(-0.32, -0.05), rx: frame.len(0.4), ry: frame.len(0.34)))
        circle(0.36, -0.36, 0.15)
        fill(.ellipse(center: frame.p(0.36, 0.04), rx: frame.len(0.3), ry: frame.len(0.24)))
        var small = self
        small.frame = Frame(center: frame.p(0, 0.5), radius: frame.radius * 0.55, angle: frame.angle)
        small.polygon([(-1.05, -0.5), (-0.5, -0.65), (0, -0.5), (0, 0.62), (-0.5, 0.48), (-1.05, 0.62)], cut)
        small.polygon([(1.05, -0.5), (0.5, -0.65), (0, -0.5), (0, 0.62), (0.5, 0.48), (1.05, 0.62)], cut)
        small.book()
    }

    fileprivate func gradCap() {
        polygon([(-0.52, -0.06), (0.52, -0.06), (0.52, 0.36), (0, 0.5), (-0.52, 0.36)])
        stroke([(-0.98, -0.22), (0, 0.16), (0.98, -0.22)], 0.045, cut)
        polygon([(0, -0.62), (0.98, -0.22), (0, 0.16), (-0.98, -0.22)])
        stroke([(0, -0.22), (0.66, -0.06), (0.66, 0.42)], 0.035)
        box(0.66, 0.52, 0.12, 0.2, 0.04)
        circle(0, -0.22, 0.06, cut)
    }

    fileprivate func yoga() {
        circle(0, -0.44, 0.14)
        stroke([(-0.1, -0.2), (-0.34, -0.5), (-0.06, -0.9)], 0.055)
        stroke([(0.1, -0.2), (0.34, -0.5), (0.06, -0.9)], 0.055)
        capsule(0, -0.24, 0, 0.22, 0.11)
        capsule(-0.02, 0.22, -0.02, 0.86, 0.08)
        stroke([(0.02, 0.24), (0.42, 0.42), (0.04, 0.58)], 0.075)
        capsule(-0.62, 0.93, 0.62, 0.93, 0.04)
    }

    fileprivate func boot() {
        polygon([(-0.5, -0.8), (0.08, -0.8), (0.12, -0.12), (0.66, 0.1), (0.86, 0.3), (0.86, 0.56), (-0.56, 0.56), (-0.58, -0.1)])
        box(0.14, 0.66, 1.5, 0.2, 0.07)
        for k in 0..<4 {
            let y = -0.62 + Double(k) * 0.16
            capsule(-0.14, y, 0.12, y + 0.05, 0.028, cut)
        }
        for x in stride(from: -0.45, through: 0.75, by: 0.24) { box(x, 0.74, 0.09, 0.07, 0, cut) }
        capsule(-0.56, 0.34, 0.84, 0.34, 0.025, cut)
    }

    fileprivate func language() {
        box(0, -0.1, 1.76, 1.18, 0.3)
        polygon([(-0.5, 0.42), (-0.12, 0.42), (-0.66, 0.84)])
        // A Latin letter and a Chinese character: one language, then another.
        stroke([(-0.64, 0.2), (-0.4, -0.42), (-0.16, 0.2)], 0.055, cut)
        capsule(-0.55, -0.02, -0.25, -0.02, 0.045, cut)
        capsule(0.4, -0.5, 0.4, -0.4, 0.045, cut)
        capsule(0.14, -0.3, 0.66, -0.3, 0.045, cut)
        stroke([(0.22, -0.22), (0.6, 0.22)], 0.05, cut)
        stroke([(0.58, -0.22), (0.18, 0.22)], 0.05, cut)
    }

    fileprivate func apple() {
        for x in [-0.24, 0.24] { circle(x, 0.14, 0.52) }
        circle(0, 0.36, 0.42)
        circle(0, -0.34, 0.1, cut)
        capsule(0, -0.3, 0.06, -0.66, 0.05)
        lens((0.1, -0.5), (0.56, -0.74), width: 0.24)
        fill(.ellipse(center: frame.p(-0.32, -0.02), rx: frame.len(0.08), ry: frame.len(0.16)), cut, opacity: 0.5)
    }

    fileprivate func alarmClock() {
        for side in [-1.0, 1.0] {
            circle(side * 0.5, -0.6, 0.2)
            capsule(side * 0.4, 0.6, side * 0.58, 0.86, 0.06)
        }
        circle(0, 0.1, 0.72)
        circle(0, 0.1, 0.56, cut)
        capsule(0, 0.1, 0, -0.28, 0.05)
        capsule(0, 0.1, 0.26, 0.24, 0.05)
        circle(0, 0.1, 0.07)
        for k in 0..<12 where k % 3 == 0 {
            let a = Double(k) / 12 * 2 * .pi
            capsule(sin(a) * 0.44, 0.1 - cos(a) * 0.44, sin(a) * 0.5, 0.1 - cos(a) * 0.5, 0.03)
        }
    }

    fileprivate func palette() {
        fill(.ellipse(center: frame.p(0, 0.04), rx: frame.len(0.9), ry: frame.len(0.74)))
        circle(0.46, 0.36, 0.13, cut)
        circle(0.86, 0.5, 0.26, cut)
        for (x, y) in [(-0.5, 0.02), (-0.3, -0.38), (0.12, -0.46), (0.5, -0.22), (-0.3, 0.4)] { circle(x, y, 0.13, cut) }
    }

    fileprivate func paw() {
        fill(.ellipse(center: frame.p(0, 0.38), rx: frame.len(0.44), ry: frame.len(0.36)))
        for (x, y) in [(-0.58, -0.1), (-0.22, -0.46), (0.22, -0.46), (0.58, -0.1)] {
            fill(.ellipse(center: frame.p(x, y), rx: frame.len(0.16), ry: frame.len(0.21)))
        }
    }

    fileprivate func tooth() {
        for x in [-0.3, 0.3] { circle(x, -0.36, 0.4) }
        polygon([(-0.7, -0.36), (0.7, -0.36), (0.56, 0.2), (0.42, 0.8), (0.18, 0.84), (0.04, 0.34), (-0.04, 0.34), (-0.18, 0.84), (-0.42, 0.8), (-0.56, 0.2)])
        fill(.ellipse(center: frame.p(-0.34, -0.42), rx: frame.len(0.1), ry: frame.len(0.16)), cut, opacity: 0.5)
        star(0.78, -0.76, 0.16, points: 4)
    }

    fileprivate func calendar() {
        box(0, 0.1, 1.6, 1.46, 0.14)
        box(0, 0.26, 1.38, 1.0, 0.04, cut)
        for x in [-0.42, 0.42] { capsule(x, -0.78, x, -0.54, 0.07) }
        for row in 0..<3 {
            for column in 0..<4 {
                let x = -0.48 + Double(column) * 0.32, y = -0.02 + Double(row) * 0.3
                if row == 1 && column == 2 {
                    stroke([(x - 0.1, y), (x - 0.02, y + 0.08), (x + 0.12, y - 0.1)], 0.045)
                } else {
                    box(x, y, 0.18, 0.16, 0.03)
                }
            }
        }
    }

    fileprivate func checklist() {
        box(0, 0.1, 1.36, 1.66, 0.12)
        box(0, 0.16, 1.14, 1.36, 0.04, cut)
        box(0, -0.72, 0.52, 0.24, 0.08)
        for (k, y) in [-0.3, 0.12, 0.54].enumerated() {
            if k < 2 {
                stroke([(-0.42, y), (-0.32, y + 0.1), (-0.14, y - 0.12)], 0.045)
            } else {
                box(-0.3, y, 0.22, 0.22, 0.04)
                box(-0.3, y, 0.12, 0.12, 0.02, cut)
            }
            capsule(0.02, y, 0.38, y, 0.05)
        }
    }

    fileprivate func house() {
        box(0.5, -0.52, 0.18, 0.46, 0.02)
        polygon([(-0.96, -0.02), (0, -0.88), (0.96, -0.02), (0.8, 0.1), (0, -0.62), (-0.8, 0.1)])
        polygon([(-0.66, 0.02), (0, -0.56), (0.66, 0.02), (0.66, 0.82), (-0.66, 0.82)])
        box(0.24, 0.54, 0.3, 0.56, 0.05, cut)
        box(-0.32, 0.3, 0.3, 0.28, 0.03, cut)
        box(-0.32, 0.3, 0.3, 0.04, 0, nil)
        box(-0.32, 0.3, 0.04, 0.28, 0, nil)
    }

    fileprivate func hourglass() {
        box(0, -0.84, 1.16, 0.14, 0.06)
        box(0, 0.84, 1.16, 0.14, 0.06)
        polygon([(-0.48, -0.78), (0.48, -0.78), (0.1, 0), (0.48, 0.78), (-0.48, 0.78), (-0.1, 0)])
        polygon([(-0.36, -0.7), (0.36, -0.7), (0.04, 0), (0.36, 0.7), (-0.36, 0.7), (-0.04, 0)], cut)
        polygon([(-0.24, -0.42), (0.24, -0.42), (0.02, -0.06), (-0.02, -0.06)])
        polygon([(-0.36, 0.7), (0.36, 0.7), (0.24, 0.5), (0, 0.34), (-0.24, 0.5)])
        capsule(0, -0.04, 0, 0.5, 0.018)
    }

    fileprivate func trophy() {
        for side in [-1.0, 1.0] {
            stroke(arc(side * 0.52, -0.48, 0.24, from: side < 0 ? 0.5 * .pi : -0.5 * .pi, to: side < 0 ? 1.5 * .pi : 0.5 * .pi, steps: 16), 0.075)
        }
        let bowl = arc(0, -0.74, 0.58, from: 0, to: .pi, steps: 28).map { ($0.0, -0.74 + ($0.1 + 0.74) * 1.25) }
        polygon([(0.58, -0.74)] + bowl + [(-0.58, -0.74)])
        polygon([(-0.08, -0.06), (0.08, -0.06), (0.12, 0.44), (-0.12, 0.44)])
        box(0, 0.52, 0.6, 0.14, 0.04)
        box(0, 0.72, 0.9, 0.24, 0.05)
        star(0, -0.46, 0.2, cut)
    }

    fileprivate func lightbulb() {
        circle(0, -0.22, 0.56)
        polygon([(-0.34, 0.12), (0.34, 0.12), (0.24, 0.48), (-0.24, 0.48)])
        box(0, 0.58, 0.5, 0.1, 0.04)
        box(0, 0.72, 0.44, 0.1, 0.04)
        capsule(-0.1, 0.84, 0.1, 0.84, 0.05)
        stroke([(-0.14, 0.4), (-0.14, 0.02), (-0.04, -0.12), (0.04, -0.12), (0.14, 0.02), (0.14, 0.4)], 0.035, cut)
        fill(.ellipse(center: frame.p(-0.26, -0.38), rx: frame.len(0.1), ry: frame.len(0.16)), cut, opacity: 0.45)
    }

    fileprivate func noAlcohol() {
        let bowl = [(-0.3, -0.5)] + arc(0, -0.5, 0.3, from: .pi, to: 0, steps: 16).map { ($0.0, -0.5 + (-0.5 - $0.1) * -1.3) }
        polygon(bowl + [(0.3, -0.5)])
        capsule(0, -0.1, 0, 0.4, 0.045)
        fill(.ellipse(center: frame.p(0, 0.42), rx: frame.len(0.24), ry: frame.len(0.06)))
        prohibited()
    }

    fileprivate func tent() {
        polygon([(-0.92, 0.66), (0, -0.78), (0.92, 0.66)])
        polygon([(-0.26, 0.66), (0, 0.08), (0.26, 0.66)], cut)
        capsule(0, -0.78, 0.12, -0.96, 0.035)
        capsule(-0.98, 0.7, 0.98, 0.7, 0.04)
        capsule(0, -0.66, 0, 0.06, 0.02, cut)
    }

    fileprivate func headphones() {
        stroke(arc(0, 0.1, 0.72, from: .pi, to: 2 * .pi, steps: 32), 0.09)
        for side in [-1.0, 1.0] {
            box(side * 0.68, 0.34, 0.3, 0.62, 0.13)
            box(side * 0.5, 0.34, 0.14, 0.42, 0.05)
        }
    }
}
