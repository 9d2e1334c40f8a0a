import Foundation

/// How hard a token given to `badge serve` is to guess. A token made by
/// `openssl rand -hex 32` or `ServeSettings.newToken` passes; a word, a short
/// token, or one of runs and repeats does not. (A long passphrase of words
/// passes: the estimate knows no dictionary.)
///
/// The estimate is the one for a string of characters drawn at random from
/// the alphabets it uses: its length times log2 of the alphabet's size, where
/// the alphabet is hex digits (16) if it is written in them alone, base64's (64)
/// if it has letters of both cases and nothing outside base64, else the sum of
/// the classes that occur (26 lower case letters, 26 capitals, 10 digits, 32
/// other printable characters). That is an upper bound for any token, so a
/// token below `minimumBits` is refused; and two patterns that make a long
/// token far weaker than its length are refused as well: few different
/// characters, and runs of neighbouring ones.
package enum TokenStrength {
    /// 128 bits: 32 hex digits, or 22 characters of base64.
    package static let minimumBits = 128
    /// 32 random hex digits hold 14 different ones on average, and fewer than
    /// 8 about 3.5 times in a hundred million.
    package static let minimumDistinct = 8

    /// Why `token` is too weak, in words that show none of it; nil when strong enough.
    package static func weakness(of token: String) -> String? {
        let bytes = Array(token.utf8)
        let bits = Int(estimatedBits(bytes))
        if bits < minimumBits {
            return "\(bytes.count) characters of \(alphabetSize(bytes)) kinds hold at most \(bits) bits of randomness, and \(minimumBits) are needed"
        }
        // A pattern repeated (acacac, abcabc): random tokens this long use many more.
        let distinct = Set(bytes).count
        if distinct < minimumDistinct {
            return "it is made of only \(distinct) different character\(distinct == 1 ? "" : "s"), and \(minimumDistinct) are needed"
        }
        // Neighbouring characters (abcd, 4321, aaaa) in more than half of its steps.
        let steps = zip(bytes, bytes.dropFirst()).filter { abs(Int($0) - Int($1)) <= 1 }.count
        if steps * 2 > bytes.count - 1 {
            return "\(steps) of its \(bytes.count - 1) steps go to the same or the next character (like abcd or 1111)"
        }
        return nil
    }

    /// Length times log2 of the alphabet's size.
    static func estimatedBits(_ bytes: [UInt8]) -> Double {
        Double(bytes.count) * log2(Double(max(1, alphabetSize(bytes))))
    }

    /// 16 for hex digits of one case; else the sizes of the classes present.
    static func alphabetSize(_ bytes: [UInt8]) -> Int {
        func isDigit(_ b: UInt8) -> Bool { b >= 48 && b <= 57 }
        func isLower(_ b: UInt8) -> Bool { b >= 97 && b <= 122 }
        func isUpper(_ b: UInt8) -> Bool { b >= 65 && b <= 90 }
        if bytes.allSatisfy({ isDigit($0) || ($0 >= 97 && $0 <= 102) }) || bytes.allSatisfy({ isDigit($0) || ($0 >= 65 && $0 <= 70) }) {
            return bytes.allSatisfy(isDigit) ? 10 : 16
        }
        // Base64 (either alphabet): letters of both cases, digits and its two symbols.
        if bytes.contains(where: isLower) && bytes.contains(where: isUpper)
            && bytes.allSatisfy({ isDigit($0) || isLower($0) || isUpper($0) || "-_+/=".utf8.contains($0) }) {
            return 64
        }
        var size = 0
        if bytes.contains(where: isDigit) { size += 10 }
        if bytes.contains(where: isLower) { size += 26 }
        if bytes.contains(where: isUpper) { size += 26 }
        if bytes.contains(where: { !isDigit($0) && !isLower($0) && !isUpper($0) }) { size += 32 }
        return size
    }
}
