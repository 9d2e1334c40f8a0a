import Foundation

/// The one scrubber for every string that leaves badge (an error, a log
/// line and its metadata, a revised prompt, a job id): each secret, and any
/// piece of one, becomes `********`. It finds
/// - a secret whole, or split by line breaks, tabs, control characters or
///   zero-width characters (U+200B–U+200D, U+2060, U+FEFF), which a
///   terminal does not show;
/// - any 8 or more consecutive characters of a secret (a truncated echo);
/// - the partial echo servers print, the secret's last four characters
///   after `...`, `…` or `*` (OpenAI: `sk-...abcd`, `sk-proj-****abcd`),
///   with the word they end.
public struct SecretScrubber: Sendable {
    public static let mask = "********"
    /// The secrets, at least 4 bytes each.
    public let secrets: [String]
    private let grams: Set<UInt64>
    private let suffixes: [[UInt8]]

    public init(secrets: [String]) {
        let kept = Array(Set(secrets.filter { $0.utf8.count >= 4 })).sorted { $0.utf8.count > $1.utf8.count }
        self.secrets = kept
        var grams: Set<UInt64> = []
        var suffixes: [[UInt8]] = []
        // Pieces are taken within a secret's words: "Bearer sk-…" gives pieces of
        // "sk-…", never " sk-…", which would take the space before an echo too.
        for word in kept.flatMap({ $0.split(separator: " ") }) {
            let bytes = Array(word.utf8)
            if bytes.count >= Self.piece {
                for start in 0...(bytes.count - Self.piece) { grams.insert(Self.pack(bytes[start..<(start + Self.piece)])) }
            }
            if bytes.count >= 8 { suffixes.append(Array(bytes.suffix(4))) }
        }
        self.grams = grams
        self.suffixes = suffixes
    }

    /// The shortest piece of a secret that is masked: 8 bytes, one UInt64.
    static let piece = 8

    /// Eight bytes as one number, for a set without an array per byte looked at.
    static func pack(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Characters a terminal shows as nothing: stripped before matching, so a secret split by them is found.
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x200B...0x200D, 0x2060, 0xFEFF: return true
        default: return false
        }
    }

    public func scrub(_ text: String) -> String {
        guard !secrets.isEmpty, !text.isEmpty else { return text }
        // The visible bytes, each with the range of scalars it came from.
        let scalars = Array(text.unicodeScalars)
        var visible: [UInt8] = []
        var origin: [Int] = []
        visible.reserveCapacity(text.utf8.count)
        for (index, scalar) in scalars.enumerated() where !Self.isInvisible(scalar) {
            for byte in String(scalar).utf8 {
                visible.append(byte)
                origin.append(index)
            }
        }
        // Scalars to mask, as half-open ranges: each secret whole first (a header's "Bearer …" with its scheme).
        var masked: [Range<Int>] = []
        for secret in secrets {
            let bytes = Array(secret.utf8)
            guard bytes.count <= visible.count else { continue }
            var at = 0
            while at + bytes.count <= visible.count {
                if visible[at] == bytes[0], visible[at..<(at + bytes.count)].elementsEqual(bytes) {
                    masked.append(origin[at]..<(origin[at + bytes.count - 1] + 1))
                    at += bytes.count
                } else {
                    at += 1
                }
            }
        }
        if visible.count >= Self.piece {
            var start = 0
            while start + Self.piece <= visible.count {
                guard grams.contains(Self.pack(visible[start..<(start + Self.piece)])) else { start += 1; continue }
                var end = start + Self.piece
                while end < visible.count && end - start < 4096, grams.contains(Self.pack(visible[(end - Self.piece + 1)...end])) { end += 1 }
                masked.append(origin[start]..<(origin[end - 1] + 1))
                start = end
            }
        }
        for suffix in suffixes {
            var at = 0
            while at + suffix.count <= visible.count {
                defer { at += 1 }
                guard visible[at..<(at + suffix.count)].elementsEqual(suffix) else { continue }
                // An ellipsis or stars just before it: a partial echo.
                var back = at
                var stars = 0
                while back > 0, visible[back - 1] == 0x2A || visible[back - 1] == 0x2E { back -= 1; stars += 1 }
                if stars == 0, back >= 3, visible[(back - 3)..<back].elementsEqual([0xE2, 0x80, 0xA6]) { back -= 3; stars = 1 }
                guard stars > 0 else { continue }
                // The rest of the word before it (the secret's visible prefix).
                while back > 0, !Self.isWordBreak(visible[back - 1]) { back -= 1 }
                masked.append(origin[back]..<(origin[at + suffix.count - 1] + 1))
            }
        }
        guard !masked.isEmpty else { return text }
        masked.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Int>] = []
        for range in masked {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        var out = String.UnicodeScalarView()
        var index = 0
        for range in merged {
            out.append(contentsOf: scalars[index..<range.lowerBound])
            out.append(contentsOf: Self.mask.unicodeScalars)
            index = range.upperBound
        }
        out.append(contentsOf: scalars[index...])
        return String(out)
    }

    /// The shortest run of a secret's letters and digits that `echoes` takes for it.
    static let echoWindow = 8

    /// Whether `text` (what a server said) carries a secret in any form a
    /// reader could put back together: its letters and digits in order with
    /// anything between them (spaces, dashes, line breaks: "sk-SECR ETKEY-1
    /// 2345678"), reversed, percent-encoded, or inside a base64, base64url or
    /// hex token. A run of `echoWindow` of the secret's letters and digits is
    /// enough. Such a text is withheld whole rather than masked piece by piece,
    /// since a piece too short to mask still gives a piece away.
    public func echoes(_ text: String) -> Bool {
        guard !secrets.isEmpty, !text.isEmpty else { return false }
        // Windows are taken within each word of a secret ("Bearer sk-…" gives none across
        // the space), and only from words with a window's worth of letters and digits:
        // a shorter secret is masked whole by `scrub`, never looked for in pieces.
        var windows: Set<UInt64> = []
        for word in secrets.flatMap({ $0.split(separator: " ") }) {
            let letters = Self.lettersAndDigits(Array(word.utf8))
            guard letters.count >= Self.echoWindow else { continue }
            for start in 0...(letters.count - Self.echoWindow) {
                windows.insert(Self.pack(letters[start..<(start + Self.echoWindow)]))
            }
        }
        guard !windows.isEmpty else { return false }
        func carries(_ bytes: [UInt8]) -> Bool {
            let letters = Self.lettersAndDigits(bytes)
            guard letters.count >= Self.echoWindow else { return false }
            for candidate in [letters, Array(letters.reversed())] {
                for start in 0...(candidate.count - Self.echoWindow)
                where windows.contains(Self.pack(candidate[start..<(start + Self.echoWindow)])) {
                    return true
                }
            }
            return false
        }
        // What a server says is looked at up to 64 KiB: a key echoed further in is masked by `scrub` alone.
        let bytes = Array(text.utf8.prefix(64 << 10))
        if carries(bytes) || carries(Self.percentDecoded(bytes)) { return true }
        // Runs that may be an encoding of it: base64 (either alphabet) or hex, split at
        // anything else ("key=c2st…" gives "c2st…"), each tried at every alignment.
        var runs: [[UInt8]] = []
        var run: [UInt8] = []
        for byte in bytes + [0] {
            let isCode = (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2B || byte == 0x2F || byte == 0x2D || byte == 0x5F
            if isCode { run.append(byte); continue }
            if run.count >= 12 { runs.append(run) }
            run = []
        }
        for run in runs {
            let standard = String(decoding: run.map { $0 == 0x2D ? 0x2B : $0 == 0x5F ? 0x2F : $0 }, as: UTF8.self)
            for skip in 0..<4 {
                let body = String(standard.dropFirst(skip))
                let length = body.count / 4 * 4
                if length >= 12, let data = Data(base64Encoded: String(body.prefix(length))), carries(Array(data)) { return true }
            }
            if run.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }) {
                for skip in 0..<2 {
                    let digits = Array(run.dropFirst(skip))
                    let hex = stride(from: 0, to: digits.count - 1, by: 2).compactMap {
                        UInt8(String(decoding: digits[$0...($0 + 1)], as: UTF8.self), radix: 16)
                    }
                    if carries(hex) { return true }
                }
            }
        }
        return false
    }

    /// `%XX` escapes decoded, anything else (a stray `%` too) kept as it is.
    private static func percentDecoded(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x25, index + 2 < bytes.count,
               let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16) {
                out.append(value)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    /// The ASCII letters and digits of `bytes`, in order.
    private static func lettersAndDigits(_ bytes: [UInt8]) -> [UInt8] {
        bytes.filter { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }

    private static func isWordBreak(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x22 || byte == 0x27 || byte == 0x3A || byte == 0x3D || byte == 0x28 || byte == 0x5B || byte == 0x7B || byte == 0x2C
    }
}
