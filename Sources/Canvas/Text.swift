import BadgeKit
import CFontconfig
import CFreeType
import Foundation
import Synchronization

/// A font for captions: a fontconfig pattern ("DejaVu Sans:bold") or a font
/// file's path. Text is laid out and rasterised by FreeType (hinted, 8-bit
/// anti-aliased coverage) and composited onto a Canvas.
public struct Font: Sendable {
    public var name: String

    public init(_ name: String) { self.name = name }

    public static let captionPattern = Font("DejaVu Sans:bold")
    public static let captionFile = Font("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")

    /// The first of the caption fonts that FreeType can open here.
    /// The first call finds it (fontconfig reads its whole configuration
    /// first, ~4 ms); later calls, on any thread, get the same answer.
    public static func caption() throws -> Font { try captionFont.get() }

    /// Found once per process: which fonts are installed does not change
    /// under a run, and each try opens the font file.
    private static let captionFont: Result<Font, BadgeError> = {
        for font in [captionPattern, captionFile] where (try? font.open()) != nil {
            return .success(font)
        }
        return .failure(BadgeError(.generationFailed, "no caption font was found (DejaVu Sans Bold)",
                                   hint: "install it: apt-get install fonts-dejavu-core fontconfig"))
    }()

    /// The font opened for laying out text: open it once when measuring the
    /// same text at several sizes.
    public func open() throws -> FontFace {
        if name.hasPrefix("/") { return try FontFace(file: name, name: name) }
        let (file, index) = try Self.face(for: name)
        return try FontFace(file: file, index: index, name: name)
    }

    /// The ink box of `text` at `pixelSize` (see `FontFace.measure`).
    public func measure(_ text: String, pixelSize: Double) throws -> TextBox {
        try open().measure(text, pixelSize: pixelSize)
    }

    /// Font files already found, by pattern: fontconfig reads its caches on
    /// the first match, which is worth doing once per process.
    private static let files = Mutex<[String: (file: String, index: Int)]>([:])

    static func face(for name: String) throws -> (file: String, index: Int) {
        try files.withLock { files in
            if let found = files[name] { return found }
            guard let found = Self.match(name) else {
                throw BadgeError(.generationFailed, "fontconfig found no font for \"\(name)\"",
                                 hint: "install one: apt-get install fonts-dejavu-core fontconfig")
            }
            files[name] = found
            return found
        }
    }

    /// fontconfig's file (and face in it) for `pattern`, from the answer cached
    /// by an earlier run while nothing it depends on has changed (see FontMatchCache).
    private static func match(_ pattern: String) -> (file: String, index: Int)? {
        FontMatchCache.standard.face(key: matchKey(pattern)) { fontconfigMatch(pattern) }
    }

    /// Besides its files, what fontconfig's answer depends on: the pattern,
    /// its version and the environment it reads (the user's directories, and
    /// the language, which FcDefaultSubstitute adds to the pattern).
    static func matchKey(_ pattern: String) -> String {
        var key = pattern + "\nfontconfig \(FcGetVersion())"
        for name in ["FONTCONFIG_FILE", "FONTCONFIG_PATH", "FONTCONFIG_SYSROOT", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
                     "XDG_CACHE_HOME", "LC_ALL", "LC_CTYPE", "LANG", "FC_LANG"] {
            key += "\n\(name)=\(FontMatchCache.environment(name) ?? "")"
        }
        return key
    }

    /// Asks fontconfig, and lists what it read to answer: its config files and
    /// their directories, its font directories, and the user's config paths
    /// it would read if they existed.
    static func fontconfigMatch(_ pattern: String) -> FontMatchCache.Match? {
        guard let (file, index) = fontconfigFile(pattern) else { return nil }
        func paths(_ list: OpaquePointer?) -> [String] {
            guard let list else { return [] }
            defer { FcStrListDone(list) }
            var paths: [String] = []
            while let path = FcStrListNext(list) {
                paths.append(String(cString: UnsafeRawPointer(path).assumingMemoryBound(to: CChar.self)))
            }
            return paths
        }
        let configFiles = paths(FcConfigGetConfigFiles(nil))
        // A config file's directory: a file added next to it is read too.
        var watched = configFiles + configFiles.map { ($0 as NSString).deletingLastPathComponent }
        watched += paths(FcConfigGetFontDirs(nil))
        let home = FontMatchCache.environment("HOME") ?? ""
        let config = FontMatchCache.environment("XDG_CONFIG_HOME") ?? home + "/.config"
        watched += [config + "/fontconfig", config + "/fontconfig/fonts.conf", config + "/fontconfig/conf.d",
                    home + "/.fonts.conf", home + "/.fonts.conf.d", (file as NSString).deletingLastPathComponent]
        return FontMatchCache.Match(file: file, watched: watched, index: index)
    }

    static func fontconfigFile(_ pattern: String) -> (file: String, index: Int)? {
        guard let parsed = pattern.withCString({ FcNameParse(UnsafeRawPointer($0).assumingMemoryBound(to: FcChar8.self)) }) else {
            return nil
        }
        defer { FcPatternDestroy(parsed) }
        guard FcConfigSubstitute(nil, parsed, FcMatchPattern) != 0 else { return nil }
        FcDefaultSubstitute(parsed)
        var result = FcResultNoMatch
        guard let match = FcFontMatch(nil, parsed, &result), result == FcResultMatch else { return nil }
        defer { FcPatternDestroy(match) }
        var file: UnsafeMutablePointer<FcChar8>?
        guard FcPatternGetString(match, "file", 0, &file) == FcResultMatch, let file else { return nil }
        var index: Int32 = 0
        if FcPatternGetInteger(match, "index", 0, &index) != FcResultMatch { index = 0 }
        return (String(cString: UnsafeRawPointer(file).assumingMemoryBound(to: CChar.self)), Int(index))
    }
}

/// The box that a text's ink covers: its size, and the offset of its top-left
/// corner from the pen's origin on the baseline (`top` is negative above it).
public struct TextBox: Equatable, Sendable {
    public var width: Int
    public var height: Int
    public var left: Int
    public var top: Int
}

/// An opened font file. FreeType's objects are not shared between threads,
/// so each FontFace has a FreeType instance of its own; use it on one thread.
public final class FontFace {
    private var library: FT_Library?
    private(set) var face: FT_Face?
    let name: String
    /// The file and the face within it.
    let file: String, index: Int
    /// The size its glyphs are loaded at now, in pixels.
    private(set) var pixelSize: Double = 0

    init(file: String, index: Int = 0, name: String) throws {
        self.name = name
        self.file = file
        self.index = index
        guard FT_Init_FreeType(&library) == 0 else {
            throw BadgeError(.generationFailed, "FreeType could not start")
        }
        guard FT_New_Face(library, file, FT_Long(index), &face) == 0, face != nil else {
            // Done here, not again in deinit (which runs for an instance whose init threw once it was whole).
            FT_Done_FreeType(library)
            library = nil
            face = nil
            throw BadgeError(.generationFailed, "cannot open the font \"\(name)\"", path: file,
                             hint: "install it: apt-get install fonts-dejavu-core fontconfig")
        }
    }

    deinit {
        FT_Done_Face(face)
        FT_Done_FreeType(library)
    }

    /// One rasterised glyph, placed relative to the pen's origin on the baseline.
    struct Glyph {
        var x: Int, y: Int, width: Int, height: Int
        var coverage: [UInt8]
        /// The glyph as shaped, for a back end that draws its outline.
        var shaped: ShapedGlyph
    }

    /// The ink box of `text` at `pixelSize`.
    public func measure(_ text: String, pixelSize: Double) throws -> TextBox {
        try render(text, pixelSize: pixelSize).box
    }

    /// `text` at `pixelSize`, rendered once, to be drawn on any thread (band by band, say).
    /// `wordSpacing`: more room after each space, in ems.
    public func render(_ text: String, pixelSize: Double, wordSpacing: Double = 0) throws -> TextImage {
        let glyphs = try glyphs(text, pixelSize: pixelSize, wordSpacing: wordSpacing)
        return TextImage(glyphs: glyphs, box: Self.box(of: glyphs), text: text)
    }

    static func box(of glyphs: [Glyph]) -> TextBox {
        let inked = glyphs.filter { $0.width > 0 && $0.height > 0 }
        guard let first = inked.first else { return TextBox(width: 0, height: 0, left: 0, top: 0) }
        var (x0, y0, x1, y1) = (first.x, first.y, first.x + first.width, first.y + first.height)
        for g in inked.dropFirst() {
            x0 = min(x0, g.x); y0 = min(y0, g.y)
            x1 = max(x1, g.x + g.width); y1 = max(y1, g.y + g.height)
        }
        return TextBox(width: x1 - x0, height: y1 - y0, left: x0, top: y0)
    }

    /// Lays `text` out on one line (kerned, hinted) and renders each glyph.
    func glyphs(_ text: String, pixelSize: Double, wordSpacing: Double = 0) throws -> [Glyph] {
        guard let face, pixelSize > 0, pixelSize < 10_000 else {
            throw BadgeError(.generationFailed, "cannot render text at \(pixelSize) pixels")
        }
        // 26.6 fixed point at 72 dpi: one point is one pixel.
        guard FT_Set_Char_Size(face, 0, FT_F26Dot6(pixelSize * 64), 72, 72) == 0 else {
            throw BadgeError(.generationFailed, "the font \"\(name)\" cannot be set to \(pixelSize) pixels")
        }
        self.pixelSize = pixelSize
        let kerned = badge_ft_has_kerning(face) != 0
        var glyphs: [Glyph] = []
        var pen = 0
        var previous: FT_UInt = 0
        for scalar in text.unicodeScalars {
            let index = FT_Get_Char_Index(face, FT_ULong(scalar.value))
            if kerned, previous != 0, index != 0 {
                var delta = FT_Vector()
                if FT_Get_Kerning(face, previous, index, FT_UInt(FT_KERNING_DEFAULT.rawValue), &delta) == 0 { pen += Int(delta.x) }
            }
            guard let (glyph, advance) = rasterise(index, x: pen, y: 0) else {
                throw BadgeError(.generationFailed, "the font \"\(name)\" cannot draw U+\(String(scalar.value, radix: 16, uppercase: true))")
            }
            glyphs.append(glyph)
            pen += advance
            if wordSpacing != 0, scalar == " " { pen += Int((wordSpacing * pixelSize * 64).rounded()) }
            previous = index
        }
        return glyphs
    }

    /// Sets the size the face's glyphs are loaded at.
    func setPixelSize(_ pixelSize: Double) throws {
        guard let face, pixelSize > 0, pixelSize < 10_000 else {
            throw BadgeError(.generationFailed, "cannot render text at \(pixelSize) pixels")
        }
        guard FT_Set_Char_Size(face, 0, FT_F26Dot6(pixelSize * 64), 72, 72) == 0 else {
            throw BadgeError(.generationFailed, "the font \"\(name)\" cannot be set to \(pixelSize) pixels")
        }
        self.pixelSize = pixelSize
    }

    /// Whether the face has a glyph for `scalar`.
    func covers(_ scalar: Unicode.Scalar) -> Bool {
        guard let face else { return false }
        return FT_Get_Char_Index(face, FT_ULong(scalar.value)) != 0
    }

    /// Renders glyph `index` (at the size set last) with its origin at (x, y)
    /// in 26.6 fixed point, y growing downwards; and its advance (26.6).
    func rasterise(_ index: FT_UInt, x: Int, y: Int) -> (Glyph, advance: Int)? {
        guard let face, FT_Load_Glyph(face, index, FT_Int32(FT_LOAD_DEFAULT)) == 0, let slot = face.pointee.glyph,
              FT_Render_Glyph(slot, FT_RENDER_MODE_NORMAL) == 0
        else { return nil }
        let bitmap = slot.pointee.bitmap
        let width = Int(bitmap.width), height = Int(bitmap.rows), pitch = Int(bitmap.pitch)
        var coverage = [UInt8](repeating: 0, count: width * height)
        if let buffer = bitmap.buffer, width > 0 {
            for row in 0..<height {
                let source = buffer + (pitch >= 0 ? row * pitch : (height - 1 - row) * -pitch)
                coverage.withUnsafeMutableBufferPointer { out in
                    (out.baseAddress! + row * width).update(from: source, count: width)
                }
            }
        }
        let glyph = Glyph(x: (x + 32) >> 6 + Int(slot.pointee.bitmap_left), y: (y + 32) >> 6 - Int(slot.pointee.bitmap_top),
                          width: width, height: height, coverage: coverage,
                          shaped: ShapedGlyph(face: FaceID(file: file, index: self.index), id: UInt32(index), x: x, y: y, pixelSize: pixelSize))
        return (glyph, Int(slot.pointee.advance.x))
    }

    /// Glyph `id`'s outline at `pixelSize`, hinted as `rasterise` hints it,
    /// in 26.6 fixed point (1/64 pixel), y up, as SVG path data; nil when
    /// FreeType cannot load it, "" for a glyph with no outline (a space).
    func outlinePath(_ id: UInt32, pixelSize: Double) -> String? {
        if self.pixelSize != pixelSize { try? setPixelSize(pixelSize) }
        guard let face, self.pixelSize == pixelSize, FT_Load_Glyph(face, FT_UInt(id), FT_Int32(FT_LOAD_DEFAULT) | FT_Int32(FT_LOAD_NO_BITMAP)) == 0,
              let slot = face.pointee.glyph, slot.pointee.format == FT_GLYPH_FORMAT_OUTLINE
        else { return nil }
        let path = PathData()
        var funcs = FT_Outline_Funcs(
            move_to: { to, user in PathData.from(user).move(to!.pointee); return 0 },
            line_to: { to, user in PathData.from(user).command("l", [to!.pointee]); return 0 },
            conic_to: { control, to, user in PathData.from(user).command("q", [control!.pointee, to!.pointee]); return 0 },
            cubic_to: { c1, c2, to, user in PathData.from(user).command("c", [c1!.pointee, c2!.pointee, to!.pointee]); return 0 },
            shift: 0, delta: 0)
        var outline = slot.pointee.outline
        let status = withExtendedLifetime(path) {
            FT_Outline_Decompose(&outline, &funcs, Unmanaged.passUnretained(path).toOpaque())
        }
        guard status == 0 else { return nil }
        return path.finished()
    }
}

/// Which face of which font file.
public struct FaceID: Hashable, Sendable {
    public let file: String
    public let index: Int
}

/// A glyph as the shaping placed it: its face, its id, and its origin in
/// 26.6 fixed point (1/64 pixel) from the text's pen origin, y down, at
/// `pixelSize`.
public struct ShapedGlyph: Hashable, Sendable {
    public var face: FaceID
    public var id: UInt32
    public var x: Int
    public var y: Int
    public var pixelSize: Double

    /// The outline's identity, wherever it is placed.
    struct Key: Hashable, Sendable {
        var face: FaceID
        var id: UInt32
        var pixelSize: Double
    }

    var key: Key { Key(face: face, id: id, pixelSize: pixelSize) }
}

/// SVG path data written from FreeType's outline walk: relative commands,
/// a command letter only where it changes, each contour closed.
private final class PathData {
    private var text = ""
    private var current = (x: 0, y: 0)
    private var start = (x: 0, y: 0)
    private var last: Character = " "
    private var open = false

    static func from(_ user: UnsafeMutableRawPointer?) -> PathData {
        Unmanaged<PathData>.fromOpaque(user!).takeUnretainedValue()
    }

    func move(_ to: FT_Vector) {
        if open {
            text += "z"
            current = start
        }
        last = " "
        command("m", [to])
        start = current
        open = true
        // After a move, further pairs are lines.
        last = "l"
    }

    func command(_ letter: Character, _ points: [FT_Vector]) {
        if letter != last {
            text.append(letter)
            last = letter
        }
        let base = current
        for p in points {
            number(Int(p.x) - base.x)
            number(Int(p.y) - base.y)
        }
        if let end = points.last { current = (Int(end.x), Int(end.y)) }
    }

    private func number(_ v: Int) {
        if v >= 0, let previous = text.last, previous.isNumber { text += " " }
        text += String(v)
    }

    func finished() -> String {
        if open { text += "z" }
        return text
    }
}

/// A line of text rendered by a `FontFace`: its glyphs' coverage and its ink box.
public struct TextImage: Sendable {
    let glyphs: [FontFace.Glyph]
    public let box: TextBox
    /// The glyphs as shaped: faces, ids and positions (see `ShapedGlyph`).
    public var shapedGlyphs: [ShapedGlyph] { glyphs.map(\.shaped) }
    /// The text rendered.
    public let text: String

    init(glyphs: [FontFace.Glyph], box: TextBox, text: String) {
        self.glyphs = glyphs
        self.box = box
        self.text = text
    }

    /// Lines stacked `lineHeight` pixels apart (baseline to baseline), each
    /// centred on the widest: one image, drawn as one.
    public init(lines: [TextImage], lineHeight: Int) {
        let widest = lines.map(\.box.width).max() ?? 0
        var glyphs: [FontFace.Glyph] = []
        for (k, line) in lines.enumerated() {
            // Each line's ink starts where centring puts it.
            let dx = (widest - line.box.width) / 2 - line.box.left
            for var glyph in line.glyphs {
                glyph.x += dx
                glyph.y += k * lineHeight
                glyph.shaped.x += dx * 64
                glyph.shaped.y += k * lineHeight * 64
                glyphs.append(glyph)
            }
        }
        self.init(glyphs: glyphs, box: FontFace.box(of: glyphs), text: lines.map(\.text).joined(separator: "\n"))
    }
}

extension Canvas {
    /// Draws `text` with its ink box's top-left corner at (x, y).
    public func draw(_ text: String, font: Font, pixelSize: Double, color: RGBA, x: Int, y: Int) throws {
        try draw(text, face: try font.open(), pixelSize: pixelSize, color: color, x: x, y: y)
    }

    /// Draws `text` with its ink box's top-left corner at (x, y), in a face already open.
    public func draw(_ text: String, face: FontFace, pixelSize: Double, color: RGBA, x: Int, y: Int) throws {
        draw(try face.render(text, pixelSize: pixelSize), color: color, x: x, y: y)
    }

    /// Draws rendered text with its ink box's top-left corner at (x, y).
    public func draw(_ text: TextImage, color: RGBA, x: Int, y: Int) {
        let originX = x - text.box.left, originY = y - text.box.top
        let ink = (Double(color.r), Double(color.g), Double(color.b), Double(color.a))
        let (width, rows) = (self.width, self.rows)
        pixels.withUnsafeMutableBufferPointer { buffer in
            for glyph in text.glyphs {
                for gy in 0..<glyph.height {
                    let cy = originY + glyph.y + gy
                    guard rows.contains(cy) else { continue }
                    for gx in 0..<glyph.width {
                        let cx = originX + glyph.x + gx
                        let coverage = glyph.coverage[gy * glyph.width + gx]
                        guard coverage > 0, cx >= 0, cx < width else { continue }
                        Self.blend(buffer, at: (cy * width + cx) * 4, ink, Double(coverage) / 255)
                    }
                }
            }
        }
    }
}
