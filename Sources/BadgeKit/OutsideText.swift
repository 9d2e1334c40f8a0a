import Foundation

/// Text that came from outside (a server's answer or headers, a plugin's
/// output, a file's metadata), made safe to print: C0 control characters
/// (but newline and tab), DEL, C1 control characters and the bidi
/// embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) are
/// dropped, so an ESC sequence in a server's error cannot retitle the window
/// or clear the screen, nor a right-to-left override reverse a file name. Applied where such text is printed (the CLI's Terminal and log
/// handler) and where a backend hands a server's words on (RemoteBackend's
/// scrubber).
public enum OutsideText {
    /// `text` without control characters; `keepingNewlines: false` also drops
    /// line breaks (for one-line fields).
    public static func printable(_ text: String, keepingNewlines: Bool = true) -> String {
        guard text.unicodeScalars.contains(where: { isControl($0, keepingNewlines: keepingNewlines) }) else { return text }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where !isControl(scalar, keepingNewlines: keepingNewlines) {
            scalars.append(scalar)
        }
        return String(scalars)
    }

    static func isControl(_ scalar: Unicode.Scalar, keepingNewlines: Bool) -> Bool {
        switch scalar.value {
        case 0x0A: return !keepingNewlines
        case 0x09: return false
        case 0x00...0x1F, 0x7F...0x9F: return true
        // Bidi embeddings, overrides and isolates: they reorder what follows on the line.
        case 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// JSON text with the characters JSONEncoder leaves as they are but
    /// terminals act on escaped: DEL and C1 (\u007f…\u009f), and the bidi
    /// embeddings, overrides and isolates (\u202a…\u202e, \u2066…\u2069),
    /// which reorder what a terminal shows. They can only stand inside
    /// strings, so the JSON means the same.
    public static func escapingControls(inJSON data: Data) -> Data {
        guard data.contains(where: { $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) else { return data }
        let bytes = [UInt8](data)
        var out = Data()
        out.reserveCapacity(bytes.count)
        func escape(_ value: UInt32) {
            out.append(contentsOf: Array(String(format: "\\u%04x", value).utf8))
        }
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            if byte == 0x7F {
                escape(0x7F)
                i += 1
            } else if byte == 0xC2, i + 1 < bytes.count, (0x80...0x9F).contains(bytes[i + 1]) {
                escape(UInt32(bytes[i + 1]))
                i += 2
            } else if byte == 0xE2, i + 2 < bytes.count,
                      (bytes[i + 1] == 0x80 && (0xAA...0xAE).contains(bytes[i + 2])) || (bytes[i + 1] == 0x81 && (0xA6...0xA9).contains(bytes[i + 2])) {
                // U+2000 + the last two bytes' six bits each.
                escape(0x2000 | UInt32(bytes[i + 1] & 0x3F) << 6 | UInt32(bytes[i + 2] & 0x3F))
                i += 3
            } else {
                out.append(byte)
                i += 1
            }
        }
        return out
    }
}
