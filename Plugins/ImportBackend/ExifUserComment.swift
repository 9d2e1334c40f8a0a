import BadgeKit
import Foundation

/// Reads the EXIF UserComment (tag 0x9286 in the Exif IFD) of a JPEG: where
/// AUTOMATIC1111 and other generators keep their prompt and settings when they
/// save JPEG. Only this one tag is read; nothing else of the EXIF is kept.
enum ExifUserComment {
    static func read(fromJPEG data: Data) -> String? {
        ImageIntake.jpegExif(data).flatMap(comment(inTIFF:))
    }

    static func comment(inTIFF t: [UInt8]) -> String? {
        guard t.count >= 8, t[0] == t[1], t[0] == 0x49 || t[0] == 0x4D else { return nil }
        let little = t[0] == 0x49
        func u16(_ o: Int) -> Int? {
            guard o >= 0, o + 2 <= t.count else { return nil }
            return little ? Int(t[o]) | Int(t[o + 1]) << 8 : Int(t[o]) << 8 | Int(t[o + 1])
        }
        func u32(_ o: Int) -> Int? {
            guard let a = u16(o), let b = u16(o + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        /// The entry for `tag` in the IFD at `offset`: (type, count, value-or-offset field position).
        func entry(_ tag: Int, inIFD offset: Int) -> (count: Int, field: Int)? {
            guard let n = u16(offset) else { return nil }
            for k in 0..<min(n, 512) {
                let e = offset + 2 + k * 12
                guard let id = u16(e), let count = u32(e + 4) else { return nil }
                if id == tag { return (count, e + 8) }
            }
            return nil
        }
        guard let ifd0 = u32(4), let exifPointer = entry(0x8769, inIFD: ifd0), let exifIFD = u32(exifPointer.field),
              let comment = entry(0x9286, inIFD: exifIFD), comment.count > 8, comment.count <= 1 << 20
        else { return nil }
        let start = comment.count <= 4 ? comment.field : (u32(comment.field) ?? -1)
        guard start >= 0, start + comment.count <= t.count else { return nil }
        let prefix = Array(t[start..<(start + 8)])
        let text = Array(t[(start + 8)..<(start + comment.count)])
        switch String(decoding: prefix.prefix { $0 != 0 }, as: UTF8.self) {
        case "ASCII", "":
            return clean(String(decoding: text.prefix { $0 != 0 }, as: UTF8.self))
        case "UNICODE":
            // UTF-16 in the TIFF's byte order, says the standard; piexif (which
            // AUTOMATIC1111 uses) writes big-endian regardless. The reading
            // with more plain ASCII is the right one.
            let big = utf16(text, bigEndian: true), small = utf16(text, bigEndian: false)
            func ascii(_ s: String) -> Int { s.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 }.count }
            return clean(ascii(big) >= ascii(small) ? big : small)
        default:
            return nil
        }
    }

    private static func utf16(_ bytes: [UInt8], bigEndian: Bool) -> String {
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var i = 0
        while i + 1 < bytes.count {
            units.append(bigEndian ? UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1]) : UInt16(bytes[i + 1]) << 8 | UInt16(bytes[i]))
            i += 2
        }
        return String(decoding: units.prefix { $0 != 0 }, as: UTF16.self)
    }

    private static func clean(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// AUTOMATIC1111's parameters end in a settings line such as
    /// "Steps: 20, Sampler: Euler a, CFG scale: 7, Seed: 42, Size: 512x512".
    static func looksLikeGeneratorParameters(_ text: String) -> Bool {
        text.contains("Steps: ") && (text.contains("Sampler: ") || text.contains("Seed: "))
    }
}
