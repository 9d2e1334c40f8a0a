import BadgeKit
import CICU

/// Where a line, or a shortened caption, may end in text written without
/// spaces between its words (Chinese, Japanese) or with its endings joined to
/// them (Korean): ICU's line-break opportunities (UAX #14) that are also word
/// boundaries (UAX #29, with ICU's dictionaries for Chinese and Japanese), so
/// that 每天早上跑步 is cut after 每天 or 早上, never inside 早上. ICU is opened
/// on first use (CICU): only such a caption loads it.
package enum LineBreaks {
    /// The offsets, in characters from the start of `text`, at which a phrase
    /// may end (never 0 nor the whole), in order; spaces at a break are left
    /// out of the phrase before it. `language`: "zh", "ja" or "ko".
    package static func phraseEnds(_ text: String, language: String) throws -> [Int] {
        var message = [CChar](repeating: 0, count: 512)
        guard badge_icu_load(&message, message.count) == 0 else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw BadgeError(.generationFailed, "cannot find where the caption may be cut: \(reason)",
                             hint: "install ICU: apt-get install libicu72")
        }
        let units = Array(text.utf16)
        guard !units.isEmpty else { return [] }
        let lines = try boundaries(words: false, units, language: language)
        let words = Set(try boundaries(words: true, units, language: language))
        // A UTF-16 offset to a character offset, where a character begins there.
        var characterAt: [Int: Int] = [:]
        for (n, index) in text.indices.enumerated() { characterAt[index.utf16Offset(in: text)] = n }
        var ends: [Int] = []
        for line in lines where line > 0 && line < units.count {
            // A break after a space: the phrase ends before it.
            var end = line
            while end > 0 && units[end - 1] == 0x20 { end -= 1 }
            guard end > 0, words.contains(end) || words.contains(line), let character = characterAt[end], ends.last != character
            else { continue }
            ends.append(character)
        }
        return ends
    }

    /// The boundaries ICU finds in `units`: line-break opportunities, or word boundaries when `words`.
    private static func boundaries(words: Bool, _ units: [UInt16], language: String) throws -> [Int] {
        var offsets = [Int32](repeating: 0, count: units.count + 1)
        var status: Int32 = 0
        let count = units.withUnsafeBufferPointer { text in
            offsets.withUnsafeMutableBufferPointer { out in
                badge_icu_boundaries(words ? 1 : 0, language, text.baseAddress, Int32(text.count), out.baseAddress, Int32(out.count), &status)
            }
        }
        guard count >= 0 else {
            throw BadgeError(.generationFailed, "cannot find where the caption may be cut: ICU's break iterator failed (error \(status))")
        }
        return offsets.prefix(Int(count)).map(Int.init)
    }
}
