import BadgeKit
import CFreeType
import CRaqm
import Foundation
import Synchronization

/// The caption font and, for what it cannot draw, the fonts fontconfig finds
/// for each script: text in any script, shaped. Text in simple scripts that
/// the caption font covers wholly (Latin, Greek, Cyrillic) is laid out by
/// FreeType alone, as `FontFace.render` does; anything else (Arabic and
/// Hebrew right to left, Devanagari, CJK, a letter the caption font lacks) is
/// shaped by libraqm (HarfBuzz for the glyphs, FriBidi for their order), which
/// is loaded only then, and its glyphs are rasterised by FreeType. Fallback
/// fonts are looked up and opened only when a text needs them. Use one on one
/// thread (its faces are FreeType's).
public final class FontStack {
    public let primary: FontFace
    /// Fallback faces opened so far, by fontconfig language (nil: none found).
    private var fallbacks: [String: FontFace?] = [:]

    public init(primary: FontFace) { self.primary = primary }

    /// The scalars of `text` that no font found here can draw (spaces and
    /// joiners aside): a caption with any is drawn without them, and the
    /// caller says which fonts to install (`FontStack.hint`).
    public func missing(in text: String) -> [Unicode.Scalar] {
        text.unicodeScalars.filter { !Self.isInvisible($0) && face(for: $0, in: text) == nil }
    }

    /// What to install for scalars no font here draws.
    public static func hint(for missing: [Unicode.Scalar]) -> String {
        let cjk = missing.contains { Self.language(of: $0, kana: false, hangul: false).map { ["ja", "ko", "zh-cn"].contains($0) } ?? false }
        return "install fonts for it: apt-get install fonts-noto-core" + (cjk ? " fonts-noto-cjk" : "") + " fontconfig"
    }

    /// `text` on one line at `pixelSize`: shaped when it needs it, else as
    /// `FontFace.render` lays it out. Scalars no font draws are left out.
    /// `wordSpacing`: more room after each space, in ems.
    public func render(_ text: String, pixelSize: Double, wordSpacing: Double = 0) throws -> TextImage {
        let simple = text.unicodeScalars.allSatisfy { Self.isSimple($0) && primary.covers($0) }
        if simple { return try primary.render(text, pixelSize: pixelSize, wordSpacing: wordSpacing) }
        var drawable = String.UnicodeScalarView()
        drawable.append(contentsOf: text.unicodeScalars.filter { Self.isInvisible($0) || face(for: $0, in: text) != nil })
        let glyphs = try shaped(String(drawable), pixelSize: pixelSize, wordSpacing: wordSpacing)
        return TextImage(glyphs: glyphs, box: FontFace.box(of: glyphs), text: text)
    }

    /// Scripts drawn one glyph a letter, left to right, without shaping.
    static func isSimple(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0...0x2FF, 0x370...0x52F, 0x1E00...0x1FFF, 0x2000...0x206F, 0x20A0...0x20CF: return true
        default: return false
        }
    }

    /// Spaces, joiners and marks of direction: no glyph of their own to find.
    static func isInvisible(_ s: Unicode.Scalar) -> Bool {
        s.properties.isWhitespace || s.properties.isDefaultIgnorableCodePoint
    }

    /// The fontconfig language whose fonts draw `s` (nil: any font that has it).
    /// Han is read as Japanese beside kana, Korean beside hangul, else Chinese.
    static func language(of s: Unicode.Scalar, kana: Bool, hangul: Bool) -> String? {
        switch s.value {
        case 0x370...0x3FF, 0x1F00...0x1FFF: return "el"
        case 0x400...0x52F: return "ru"
        case 0x590...0x5FF, 0xFB1D...0xFB4F: return "he"
        case 0x600...0x6FF, 0x750...0x77F, 0x8A0...0x8FF, 0xFB50...0xFDFF, 0xFE70...0xFEFF: return "ar"
        case 0x900...0x97F, 0xA8E0...0xA8FF: return "hi"
        case 0x980...0x9FF: return "bn"
        case 0xE00...0xE7F: return "th"
        case 0x3040...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F: return "ja"
        case 0x1100...0x11FF, 0x3130...0x318F, 0xAC00...0xD7AF: return "ko"
        case 0x2E80...0x2FFF, 0x3000...0x303F, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0xFF00...0xFF65:
            return kana ? "ja" : hangul ? "ko" : "zh-cn"
        default: return nil
        }
    }

    /// The face that draws `s`: a letter of a script with fonts of its own
    /// takes the font fontconfig gives for that script's language (which may
    /// be the caption font), anything else the caption font, else any font
    /// fontconfig finds with the letter.
    private func face(for s: Unicode.Scalar, in text: String) -> FontFace? {
        let scalars = text.unicodeScalars
        let kana = scalars.contains { (0x3040...0x30FF).contains($0.value) }
        let hangul = scalars.contains { (0xAC00...0xD7AF).contains($0.value) || (0x1100...0x11FF).contains($0.value) }
        if !Self.isSimple(s), let language = Self.language(of: s, kana: kana, hangul: hangul),
           let face = fallback("lang=" + language), face.covers(s) {
            return face
        }
        if primary.covers(s) { return primary }
        if let face = fallback("charset=" + String(s.value, radix: 16)), face.covers(s) { return face }
        return nil
    }

    /// The bold sans-serif face fontconfig gives for `query` ("lang=ja",
    /// "charset=e01"), opened once; the caption font itself when that is what
    /// fontconfig gives. Answers for languages are cached between runs.
    private func fallback(_ query: String) -> FontFace? {
        if let opened = fallbacks[query] { return opened }
        let pattern = "sans-serif:bold:" + query
        let found = query.hasPrefix("lang=") ? try? Font.face(for: pattern) : Font.fontconfigFile(pattern)
        var face: FontFace?
        if let found {
            face = found.file == primary.file && found.index == primary.index
                ? primary : try? FontFace(file: found.file, index: found.index, name: pattern)
        }
        fallbacks[query] = face
        return face
    }

    /// Lays `text` out with libraqm: runs of one face each, in the paragraph's
    /// direction (from its first strong letter), and renders each glyph.
    private func shaped(_ text: String, pixelSize: Double, wordSpacing: Double) throws -> [FontFace.Glyph] {
        var message = [CChar](repeating: 0, count: 512)
        guard badge_raqm_load(&message, message.count) == 0 else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw BadgeError(.generationFailed, "cannot shape the caption: \(reason)",
                             hint: "install libraqm: apt-get install libraqm0")
        }
        // Each scalar's face, as UTF-8 byte ranges (libraqm's indices for UTF-8 text).
        var runs: [(face: FontFace, start: Int, length: Int)] = []
        var bytes: [UInt8] = []
        var previous: FontFace?
        for scalar in text.unicodeScalars {
            let start = bytes.count
            bytes.append(contentsOf: String(scalar).utf8)
            // Spaces, digits and punctuation stay in the run around them when its face has them.
            let neutral = !scalar.properties.isAlphabetic
            let face = (neutral ? previous.flatMap { $0.covers(scalar) ? $0 : nil } : nil) ?? face(for: scalar, in: text) ?? previous ?? primary
            if let last = runs.last, last.face === face {
                runs[runs.count - 1].length += bytes.count - start
            } else {
                runs.append((face, start, bytes.count - start))
            }
            previous = face
        }
        for run in runs { try run.face.setPixelSize(pixelSize) }
        guard let layout = badge_raqm_create() else { throw BadgeError(.generationFailed, "libraqm could not start") }
        defer { badge_raqm_destroy(layout) }
        let laidOut = bytes.withUnsafeBufferPointer { utf8 -> Bool in
            utf8.withMemoryRebound(to: CChar.self) { text in
                guard badge_raqm_set_text_utf8(layout, text.baseAddress, text.count),
                      badge_raqm_set_par_direction(layout, RAQM_DIRECTION_DEFAULT) else { return false }
                for run in runs {
                    guard badge_raqm_set_freetype_face_range(layout, run.face.face, run.start, run.length) else { return false }
                }
                return badge_raqm_layout(layout)
            }
        }
        var count = 0
        guard laidOut, let laid = badge_raqm_get_glyphs(layout, &count) else {
            throw BadgeError(.generationFailed, "libraqm could not lay out the caption")
        }
        let faces = runs.map(\.face)
        var glyphs: [FontFace.Glyph] = []
        var pen = 0
        for g in UnsafeBufferPointer(start: laid, count: count) {
            guard let face = faces.first(where: { $0.face == g.ftface }) else { continue }
            // HarfBuzz's offsets point up; the canvas's y grows downwards.
            if let (glyph, _) = face.rasterise(FT_UInt(g.index), x: pen + Int(g.x_offset), y: -Int(g.y_offset)) {
                glyphs.append(glyph)
            }
            pen += Int(g.x_advance)
            if wordSpacing != 0, Int(g.cluster) < bytes.count, bytes[Int(g.cluster)] == 0x20 {
                pen += Int((wordSpacing * pixelSize * 64).rounded())
            }
        }
        return glyphs
    }
}
