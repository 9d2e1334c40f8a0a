import BadgeKit
import Foundation
import Synchronization

/// A scene written as an SVG document: the vector back end beside the
/// rasteriser (`Canvas.draw(_:)`).
///
/// - Shapes become SVG's own (circles, rects, lines, polygons), gradients SVG
///   gradients, soft edges a Gaussian blur of the same spread.
/// - Text becomes its glyphs' outlines, each glyph defined once and placed
///   where the shaping put it: the file looks the same without the font. The
///   outlines are hinted for the text's size and their origins put on the
///   pixel grid, as the rasteriser draws them, so that at its own size the
///   SVG is the PNG's picture; scaled, hinting's small adjustments scale too.
/// - The sketch's line art becomes a filter of the same morphology (a grown
///   mask less a shrunk one).
/// - Grain, a per-pixel noise of a few levels, is left out: no SVG renderer
///   would draw the same noise, and it would cost more than the rest.
///
/// Coordinates are in pixels of the scene (the `viewBox`), to a tenth of a
/// pixel. The document holds nothing active and nothing from outside: no
/// script, no style sheet, no event attribute, no reference but to its own
/// definitions; every string is escaped.
public enum SVGDocument {
    /// The document for `scene`, with `title` and `metadata` (name, value)
    /// in its `<metadata>`, under `namespace`.
    public static func data(_ scene: Scene, title: String? = nil, metadata: [(String, String)] = []) -> Data {
        Written(scene).document(title: title, metadata: metadata)
    }

    /// A scene's drawing and definitions, written once: documents of it with
    /// any title and metadata are put together without writing it again.
    public struct Written: Sendable {
        let writer: SVGWriter

        public init(_ scene: Scene) {
            var writer = SVGWriter(width: scene.width, height: scene.height)
            writer.write(scene.operations)
            writer.flush()
            self.writer = writer
        }

        public func document(title: String? = nil, metadata: [(String, String)] = []) -> Data {
            Data(writer.finished(title: title, metadata: metadata).utf8)
        }
    }

    /// The namespace of the metadata's elements.
    public static let metadataNamespace = "https://badge.invalid/metadata"
}

/// Builds one document: the drawing, and the definitions it refers to.
struct SVGWriter: Sendable {
    let width: Int
    let height: Int
    private var body = ""
    /// Shapes written in a row with the same paint, not yet in `body`: one
    /// group carries their attributes (a medal's 40 notches are one group).
    private var run: (attributes: String, elements: [String]) = ("", [])
    /// A polygon not yet in the run: the next one, painted alike, that shares
    /// an edge with it is joined to it (a stripe drawn as pieces is one shape).
    private var polygon: (points: [Point], attributes: String)?
    private var defs = ""
    /// Definitions made so far, by their markup (a gradient used twice is defined once).
    private var defined: [String: String] = [:]
    /// Glyphs defined so far, by face, id and size.
    private var glyphIDs: [ShapedGlyph.Key: String?] = [:]
    private var nextID = 0

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        body.reserveCapacity(16_384)
    }

    func finished(title: String?, metadata: [(String, String)]) -> String {
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\""
        if title != nil { out += " role=\"img\" aria-label=\"\(Self.escaped(title ?? ""))\"" }
        out += ">"
        if let title { out += "<title>\(Self.escaped(title))</title>" }
        if !metadata.isEmpty {
            out += "<metadata><badge xmlns=\"\(SVGDocument.metadataNamespace)\">"
            for (name, value) in metadata {
                let element = Self.elementName(name)
                out += "<\(element)>\(Self.escaped(value))</\(element)>"
            }
            out += "</badge></metadata>"
        }
        if !defs.isEmpty { out += "<defs>" + defs + "</defs>" }
        return out + body + "</svg>\n"
    }

    mutating func write(_ operations: [Scene.Operation]) {
        for operation in operations {
            switch operation {
            case let .fill(fill): write(fill)
            case let .text(text, color, x, y): write(text, color: color, x: x, y: y)
            case .grain: continue
            case let .outline(mask, radius, color): writeOutline(mask, radius: radius, color: color)
            }
        }
    }

    // MARK: shapes

    private mutating func write(_ fill: Scene.Fill) {
        guard fill.opacity > 0 else { return }
        // Wholly outside the picture, it draws nothing.
        let box = fill.shape.bounds(margin: fill.softness)
        guard box.x1 > 0, box.y1 > 0, box.x0 < Double(width), box.y0 < Double(height) else { return }
        let paint = paintReference(fill.paint)
        var attributes = ""
        if case let .polygon(points) = fill.shape, fill.softness == 0, points.count >= 3 {
            if paint.value != "#000000" { attributes += " fill=\"\(paint.value)\"" }
            let opacity = paint.opacity * min(1, fill.opacity)
            if opacity < 1 { attributes += " fill-opacity=\"\(Self.fraction(opacity))\"" }
            attributes += " fill-rule=\"evenodd\""
            if let current = polygon, current.attributes == attributes, let joined = Self.joined(current.points, points) {
                polygon = (joined, attributes)
                return
            }
            writePolygon()
            polygon = (points, attributes)
            return
        }
        let (element, stroked) = shapeMarkup(fill.shape)
        let opacity = paint.opacity * min(1, fill.opacity)
        if stroked.width > 0 {
            if !element.hasPrefix("line ") { attributes += " fill=\"none\"" }
            attributes += " stroke=\"\(paint.value)\" stroke-width=\"\(Self.number(stroked.width))\""
            if stroked.round { attributes += element.hasPrefix("line ") ? " stroke-linecap=\"round\"" : " stroke-linecap=\"round\" stroke-linejoin=\"round\"" }
            if opacity < 1 { attributes += " stroke-opacity=\"\(Self.fraction(opacity))\"" }
        } else {
            if paint.value != "#000000" { attributes += " fill=\"\(paint.value)\"" }
            if opacity < 1 { attributes += " fill-opacity=\"\(Self.fraction(opacity))\"" }
        }
        if fill.softness > 0 {
            // A blurred shape is drawn alone: a filter on a group would blur the group as one.
            flush()
            body += "<" + element + attributes + " filter=\"url(#\(blur(fill.shape, softness: fill.softness)))\"/>"
            return
        }
        append(element, attributes: attributes)
    }

    /// Adds a shape to the run of shapes painted alike, ending the run first
    /// when this one is painted otherwise.
    private mutating func append(_ element: String, attributes: String) {
        writePolygon()
        appendToRun(element, attributes: attributes)
    }

    private mutating func appendToRun(_ element: String, attributes: String) {
        if attributes != run.attributes { flushRun() }
        run.attributes = attributes
        run.elements.append(element)
    }

    /// Writes the run of shapes painted alike: one alone with its attributes,
    /// several in a group that carries them.
    mutating func flush() {
        writePolygon()
        flushRun()
    }

    /// The pending polygon, as a path of relative steps, into the run.
    private mutating func writePolygon() {
        guard let (points, attributes) = polygon else { return }
        polygon = nil
        appendToRun("path d=\"\(Self.pathData(points))\"", attributes: attributes)
    }

    private mutating func flushRun() {
        defer { run = ("", []) }
        switch run.elements.count {
        case 0: return
        case 1: body += "<" + run.elements[0] + run.attributes + "/>"
        default:
            body += "<g" + run.attributes + ">"
            for element in run.elements { body += "<" + element + "/>" }
            body += "</g>"
        }
    }

    /// The element for `shape`, and, for a shape SVG draws as a stroke, the
    /// stroke's width and whether its ends and joins are round.
    private func shapeMarkup(_ shape: Shape) -> (String, (width: Double, round: Bool)) {
        let n = Self.number
        switch shape {
        case let .circle(c, r):
            return ("circle cx=\"\(n(c.x))\" cy=\"\(n(c.y))\" r=\"\(n(r))\"", (0, false))
        case let .ellipse(c, rx, ry):
            return ("ellipse cx=\"\(n(c.x))\" cy=\"\(n(c.y))\" rx=\"\(n(rx))\" ry=\"\(n(ry))\"", (0, false))
        case let .ring(c, inner, outer):
            return ("circle cx=\"\(n(c.x))\" cy=\"\(n(c.y))\" r=\"\(n((inner + outer) / 2))\"", (max(0, outer - inner), false))
        case let .roundedRect(x, y, w, h, r):
            let radius = max(0, min(r, w / 2, h / 2))
            let corner = radius > 0 ? " rx=\"\(n(radius))\"" : ""
            return ("rect x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(w))\" height=\"\(n(h))\"" + corner, (0, false))
        case let .capsule(a, b, r):
            if a == b { return shapeMarkup(.circle(center: a, radius: r)) }
            return ("line x1=\"\(n(a.x))\" y1=\"\(n(a.y))\" x2=\"\(n(b.x))\" y2=\"\(n(b.y))\"", (2 * r, true))
        case let .polyline(points, r):
            if points.count == 1 { return shapeMarkup(.circle(center: points[0], radius: r)) }
            return ("polyline points=\"\(Self.points(points))\"", (2 * r, true))
        case let .polygon(points):
            return ("polygon points=\"\(Self.points(points))\" fill-rule=\"evenodd\"", (0, false))
        }
    }

    /// A paint as an attribute's value (a colour, or a gradient's `url(#…)`),
    /// and the opacity it carries.
    private mutating func paintReference(_ paint: Paint) -> (value: String, opacity: Double) {
        let n = Self.number
        switch paint {
        case let .solid(c):
            return (Self.hex(c), Double(c.a) / 255)
        case let .linear(start, end, stops):
            let markup = "linearGradient gradientUnits=\"userSpaceOnUse\" x1=\"\(n(start.x))\" y1=\"\(n(start.y))\" x2=\"\(n(end.x))\" y2=\"\(n(end.y))\""
            return ("url(#\(define(markup, closing: "linearGradient", content: Self.stops(stops))))", 1)
        case let .radial(center, radius, stops):
            let markup = "radialGradient gradientUnits=\"userSpaceOnUse\" cx=\"\(n(center.x))\" cy=\"\(n(center.y))\" r=\"\(n(radius))\""
            return ("url(#\(define(markup, closing: "radialGradient", content: Self.stops(stops))))", 1)
        }
    }

    /// A gradient's stops in order of offset, as the rasteriser takes them.
    private static func stops(_ stops: [(Double, RGBA)]) -> String {
        var out = ""
        for (offset, colour) in stops.sorted(by: { $0.0 < $1.0 }) {
            out += "<stop offset=\"\(fraction(max(0, min(1, offset))))\" stop-color=\"\(hex(colour))\""
            if colour.a < 255 { out += " stop-opacity=\"\(fraction(Double(colour.a) / 255))\"" }
            out += "/>"
        }
        return out
    }

    /// A soft edge: the rasteriser's falloff runs smoothly from `softness`
    /// inside the edge to `softness` outside it, a spread whose standard
    /// deviation is softness / √5, which a Gaussian blur of that deviation matches.
    private mutating func blur(_ shape: Shape, softness: Double) -> String {
        let box = shape.bounds(margin: softness * 1.5)
        let n = Self.number
        let markup = "filter filterUnits=\"userSpaceOnUse\" x=\"\(n(box.x0))\" y=\"\(n(box.y0))\" width=\"\(n(box.x1 - box.x0))\" height=\"\(n(box.y1 - box.y0))\""
        return define(markup, closing: "filter", content: "<feGaussianBlur stdDeviation=\"\(n(softness / 5.0.squareRoot()))\"/>")
    }

    /// The id of a definition of `markup` (an element's name and attributes)
    /// holding `content`: the same definition is made once.
    private mutating func define(_ markup: String, closing: String, content: String) -> String {
        let key = markup + content
        if let id = defined[key] { return id }
        let id = newID()
        defined[key] = id
        defs += "<\(markup.prefix { $0 != " " }) id=\"\(id)\"\(markup.drop { $0 != " " })>\(content)</\(closing)>"
        return id
    }

    private mutating func newID() -> String {
        defer { nextID += 1 }
        return Self.identifier(nextID)
    }

    /// Short ids: a, b, …, z, ba, bb, …
    static func identifier(_ k: Int) -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        var k = k, id = ""
        repeat {
            id = String(letters[k % 26]) + id
            k /= 26
        } while k > 0
        return id
    }

    // MARK: line art

    /// The mask's ink, its white cut-outs taken out of its alpha, grown and
    /// shrunk by `radius` (a square window, as the rasteriser's), the shrunk
    /// taken from the grown, and the band left filled with `color`.
    private mutating func writeOutline(_ mask: Scene, radius: Int, color: RGBA) {
        let r = max(1, radius)
        let filter = define(
            "filter filterUnits=\"userSpaceOnUse\" x=\"0\" y=\"0\" width=\"\(width)\" height=\"\(height)\"", closing: "filter",
            content: "<feColorMatrix type=\"matrix\" values=\"0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 -1 0 0 1 0\" result=\"m\"/>"
                + "<feMorphology in=\"m\" operator=\"dilate\" radius=\"\(r)\" result=\"d\"/>"
                + "<feMorphology in=\"m\" operator=\"erode\" radius=\"\(r)\" result=\"e\"/>"
                + "<feComposite in=\"d\" in2=\"e\" operator=\"arithmetic\" k2=\"1\" k3=\"-1\" result=\"b\"/>"
                + "<feFlood flood-color=\"\(Self.hex(color))\"\(color.a < 255 ? " flood-opacity=\"\(Self.fraction(Double(color.a) / 255))\"" : "")/>"
                + "<feComposite in2=\"b\" operator=\"in\"/>")
        var inner = SVGWriter(width: width, height: height)
        inner.nextID = nextID
        inner.defined = defined
        inner.glyphIDs = glyphIDs
        inner.write(mask.operations)
        inner.flush()
        flush()
        nextID = inner.nextID
        defined = inner.defined
        glyphIDs = inner.glyphIDs
        defs += inner.defs
        body += "<g filter=\"url(#\(filter))\">" + inner.body + "</g>"
    }

    // MARK: text

    /// Each glyph of `text`, placed as the shaping placed it: the ink box's
    /// top-left corner at (x, y), as the rasteriser puts it.
    private mutating func write(_ text: TextImage, color: RGBA, x: Int, y: Int) {
        let originX = Double(x - text.box.left), originY = Double(y - text.box.top)
        var uses = ""
        for glyph in text.glyphs {
            let shaped = glyph.shaped
            guard let id = glyphID(shaped) else { continue }
            // On the pixel grid, as `FontFace.rasterise` places the bitmap.
            let gx = originX + Double((shaped.x + 32) >> 6), gy = originY + Double((shaped.y + 32) >> 6)
            uses += "<use href=\"#\(id)\" x=\"\(Self.number(gx))\" y=\"\(Self.number(gy))\"/>"
        }
        guard !uses.isEmpty else { return }
        flush()
        var attributes = ""
        if color != .black { attributes += " fill=\"\(Self.hex(color))\"" }
        if color.a < 255 { attributes += " fill-opacity=\"\(Self.fraction(Double(color.a) / 255))\"" }
        body += "<g\(attributes)>" + uses + "</g>"
    }

    /// The id of the definition of `glyph`'s outline at its size (hinted
    /// there, as the rasteriser draws it); nil for a
    /// glyph with no outline (a space).
    private mutating func glyphID(_ glyph: ShapedGlyph) -> String? {
        let key = glyph.key
        if let known = glyphIDs[key] { return known }
        guard let path = GlyphOutlines.shared.outline(key), !path.isEmpty else {
            glyphIDs[key] = .some(nil)
            return nil
        }
        let id = newID()
        // From 26.6 fixed point, y up, to pixels, y down.
        defs += "<path id=\"\(id)\" transform=\"matrix(.015625 0 0 -.015625 0 0)\" d=\"\(path)\"/>"
        glyphIDs[key] = id
        return id
    }

    // MARK: numbers, colours and text

    /// `v` to a tenth (or `places` decimal places), without trailing zeros
    /// or a leading "0".
    static func number(_ v: Double) -> String { decimal(v, places: 1) }

    static func decimal(_ v: Double, places: Int) -> String {
        guard v.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(v) * scale).rounded()
        guard scaled < 1e15 else { return String(Int(v.rounded())) }
        var digits = Int(scaled)
        if digits == 0 { return "0" }
        var places = places
        while places > 0 && digits % 10 == 0 {
            digits /= 10
            places -= 1
        }
        var text = String(digits)
        if places > 0 {
            if text.count <= places { text = String(repeating: "0", count: places - text.count + 1) + text }
            text.insert(".", at: text.index(text.endIndex, offsetBy: -places))
            if text.hasPrefix("0.") { text.removeFirst() }
        }
        return v < 0 ? "-" + text : text
    }

    /// An opacity or offset, 0 to 1, to three places.
    static func fraction(_ v: Double) -> String { decimal(max(0, min(1, v)), places: 3) }

    /// A closed polygon as path data: the first point, then each step from
    /// the point before, rounded to tenths as the points themselves are.
    static func pathData(_ points: [Point]) -> String {
        func tenths(_ v: Double) -> Int { Int((v * 10).rounded()) }
        func step(_ v: Int) -> String { decimal(Double(v) / 10, places: 1) }
        var out = "M"
        var x = tenths(points[0].x), y = tenths(points[0].y)
        out += step(x) + (y < 0 ? "" : " ") + step(y) + "l"
        for (k, p) in points.dropFirst().enumerated() {
            let nx = tenths(p.x), ny = tenths(p.y)
            let dx = step(nx - x), dy = step(ny - y)
            if k > 0 && !dx.hasPrefix("-") { out += " " }
            out += dx + (dy.hasPrefix("-") ? "" : " ") + dy
            (x, y) = (nx, ny)
        }
        return out + "z"
    }

    /// Twice the signed area of a polygon.
    static func signedArea(_ p: [Point]) -> Double {
        var sum = 0.0
        for i in p.indices {
            let a = p[i], b = p[(i + 1) % p.count]
            sum += a.x * b.y - b.x * a.y
        }
        return sum
    }

    /// Whether every turn of the polygon is to the same side (no point doubled).
    static func isConvex(_ p: [Point]) -> Bool {
        guard p.count >= 3 else { return false }
        var sign = 0.0
        for i in p.indices {
            let a = p[i], b = p[(i + 1) % p.count], c = p[(i + 2) % p.count]
            let cross = (b.x - a.x) * (c.y - b.y) - (b.y - a.y) * (c.x - b.x)
            if cross == 0 { continue }
            if sign == 0 { sign = cross } else if (cross > 0) != (sign > 0) { return false }
        }
        return sign != 0
    }

    /// Two convex polygons of one orientation that share an edge (each has
    /// its ends, in the other's order) as one polygon: they lie on either side
    /// of it, so the one covers what the two cover, and nothing twice. Points
    /// in a straight line with their neighbours are left out. nil when they
    /// share no edge.
    static func joined(_ a: [Point], _ b: [Point]) -> [Point]? {
        guard isConvex(a), isConvex(b), (signedArea(a) > 0) == (signedArea(b) > 0) else { return nil }
        for i in a.indices {
            let a0 = a[i], a1 = a[(i + 1) % a.count]
            for j in b.indices where b[j] == a1 && b[(j + 1) % b.count] == a0 {
                var out = Array(a[...i])
                var k = (j + 2) % b.count
                while k != j {
                    out.append(b[k])
                    k = (k + 1) % b.count
                }
                out += a[(i + 1)...]
                return withoutStraightPoints(out)
            }
        }
        return nil
    }

    static func withoutStraightPoints(_ points: [Point]) -> [Point] {
        var p = points
        var changed = true
        while changed && p.count > 3 {
            changed = false
            for i in p.indices {
                let a = p[(i + p.count - 1) % p.count], b = p[i], c = p[(i + 1) % p.count]
                let cross = (b.x - a.x) * (c.y - b.y) - (b.y - a.y) * (c.x - b.x)
                let scale = abs(b.x - a.x) + abs(b.y - a.y) + abs(c.x - b.x) + abs(c.y - b.y)
                if abs(cross) <= 1e-9 * scale * scale || a == b {
                    p.remove(at: i)
                    changed = true
                    break
                }
            }
        }
        return p
    }

    static func points(_ points: [Point]) -> String {
        var out = ""
        for (k, p) in points.enumerated() {
            if k > 0 { out += " " }
            out += number(p.x) + "," + number(p.y)
        }
        return out
    }

    static func hex(_ c: RGBA) -> String {
        let digits = Array("0123456789abcdef")
        var out = "#"
        for v in [c.r, c.g, c.b] {
            out.append(digits[Int(v >> 4)])
            out.append(digits[Int(v & 15)])
        }
        return out
    }

    /// Text for an XML attribute or element: markup characters escaped, and
    /// the characters XML 1.0 cannot hold (controls, lone surrogates,
    /// U+FFFE and U+FFFF) left out.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n": out += "&#\(scalar.value);"
            case "\r": out += "&#13;"
            default:
                let v = scalar.value
                if v < 0x20 || (0x7F...0x9F).contains(v) || v == 0xFFFE || v == 0xFFFF { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A metadata name as an XML element name: letters, digits and hyphens,
    /// starting with a letter.
    static func elementName(_ name: String) -> String {
        let kept = String(name.unicodeScalars.filter { ($0.isASCII && $0.properties.isAlphabetic) || ("0"..."9").contains($0) || $0 == "-" }
            .map(Character.init))
        guard let first = kept.unicodeScalars.first, first.properties.isAlphabetic else { return "x-" + kept }
        return kept
    }
}

/// Glyph outlines as SVG path data, by face, glyph and size, read from the
/// font files once per process: a font file does not change under a run.
/// A server draws whatever promises it is sent, in any script and at any
/// size the fitting tries, so the outlines kept are bounded: past `limit`
/// the table starts again.
final class GlyphOutlines: Sendable {
    static let shared = GlyphOutlines()
    static let limit = 8192

    private struct State {
        var outlines: [ShapedGlyph.Key: String?] = [:]
        /// The faces opened to read them (FreeType's, used only under the lock).
        var faces: [FaceID: FontFace?] = [:]
    }

    private let state = Mutex(State())

    /// In 26.6 fixed point, y up (see `FontFace.outlinePath`).
    func outline(_ key: ShapedGlyph.Key) -> String? {
        state.withLock { state in
            if let known = state.outlines[key] { return known }
            if state.outlines.count >= Self.limit { state.outlines.removeAll(keepingCapacity: true) }
            if state.faces[key.face] == nil {
                state.faces[key.face] = .some(try? FontFace(file: key.face.file, index: key.face.index, name: key.face.file))
            }
            let read = (state.faces[key.face] ?? nil)?.outlinePath(key.id, pixelSize: key.pixelSize)
            state.outlines[key] = .some(read)
            return read
        }
    }
}
