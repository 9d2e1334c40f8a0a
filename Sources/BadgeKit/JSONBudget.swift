import Foundation

/// A bound on how much a JSON text from outside (a server's answer, a
/// manifest) may cost to parse. Bytes are bounded where the text is read;
/// what a parser's memory follows is the number of values: Foundation keeps
/// each one as an object of its own (~60 bytes), so 60 MB of `[0,0,...]`
/// took 1.76 GB. `values(in:)` counts them in one pass over the bytes,
/// without building anything, before a parser sees the text.
public enum JSONBudget {
    /// The most values a server's answer may hold: far more than any image
    /// API answers with (a few dozen), a ComfyUI history or queue included.
    public static let maxServerValues = 1_000_000

    /// An upper bound on the values in `data` (every array or object, and
    /// every member or element: commas, colons and brackets outside strings),
    /// counted up to `limit + 1` and no further.
    public static func values(in data: Data, upTo limit: Int) -> Int {
        data.withUnsafeBytes { raw -> Int in
            var count = 1
            var inString = false
            var escaped = false
            for byte in raw {
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == 0x5C {  // backslash
                        escaped = true
                    } else if byte == 0x22 {
                        inString = false
                    }
                    continue
                }
                switch byte {
                case 0x22: inString = true
                case 0x2C, 0x5B, 0x7B:  // , [ {
                    count += 1
                    if count > limit { return count }
                default: break
                }
            }
            return count
        }
    }

    /// Whether `data` holds at most `limit` values.
    public static func fits(_ data: Data, limit: Int = maxServerValues) -> Bool {
        values(in: data, upTo: limit) <= limit
    }
}
