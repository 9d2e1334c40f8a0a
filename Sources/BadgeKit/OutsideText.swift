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

    /// JSON text with the control characters JSONEncoder leaves as they are
    /// (DEL and C1, valid in JSON strings but acted on by terminals) escaped
    /// as \u007F…\u009F. They can only stand inside strings, so the JSON
    /// means the same.
    public static func escapingControls(inJSON data: Data) -> Data {
        guard data.contains(0x7F) || data.contains(0xC2) else { return data }
        var out = Data()
        out.reserveCapacity(data.count)
        var bytes = data.makeIterator()
        var pending: UInt8?
        func escape(_ value: UInt8) {
            out.append(contentsOf: Array(String(format: "\\u%04x", value).utf8))
        }
        while let byte = pending ?? bytes.next() {
            pending = nil
            if byte == 0x7F {
                escape(byte)
            } else if byte == 0xC2, let next = bytes.next() {
                if (0x80...0x9F).contains(next) {
                    escape(next)
                } else {
                    out.append(byte)
                    pending = next
                }
            } else {
                out.append(byte)
            }
        }
        return out
    }
}
