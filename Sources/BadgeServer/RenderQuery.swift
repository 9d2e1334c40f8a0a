import BadgeKit
import Foundation
import ProceduralBackend

/// A request of the render API (`/v1/badge.png?promise=...&style=...&seed=...&size=...`),
/// read strictly: every parameter known, given once, and in range. Its
/// `canonical` form names one badge, the cache's key.
package struct RenderQuery: Sendable, Equatable {
    package var promise: String
    package var style: String?
    package var seed: UInt64?
    package var size: Int
    package var caption: String?
    /// The commitment day recorded in the badge (midnight UTC), or nil.
    package var date: String?

    package static let parameters = ["promise", "style", "seed", "size", "caption", "date"]
    package static let defaultSize = 256
    package static let maxPromiseBytes = 4000
    package static let maxQueryBytes = 16 << 10

    /// A parameter the request got wrong, and what it may be.
    package struct Problem: Error, Sendable, Equatable {
        package var parameter: String
        package var message: String
        package var allowed: String
    }

    /// Reads a raw query string (`a=1&b=two+words`, percent-encoded).
    package static func parse(_ query: String?, maxSize: Int) throws(Problem) -> RenderQuery {
        let query = query ?? ""
        if query.utf8.count > maxQueryBytes {
            throw Problem(parameter: "promise", message: "the query is \(query.utf8.count) bytes long", allowed: "at most \(maxQueryBytes) bytes")
        }
        var values: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            guard let name, parameters.contains(name) else {
                let shown = name.map { RenderQuery.shown($0) } ?? "a parameter that is not valid percent-encoding"
                var allowed = parameters.joined(separator: ", ")
                if let name, let near = ConfigObject.closest(to: name, in: parameters) { allowed = "did you mean \"\(near)\"? " + allowed }
                throw Problem(parameter: name ?? "?", message: "unknown parameter \(shown)", allowed: allowed)
            }
            guard values[name] == nil else {
                throw Problem(parameter: name, message: "\(name) is given twice", allowed: "once")
            }
            guard let value = parts.count > 1 ? decode(parts[1]) : "" else {
                throw Problem(parameter: name, message: "\(name) is not valid percent-encoded UTF-8", allowed: "UTF-8, percent-encoded")
            }
            values[name] = value
        }

        guard let promise = values["promise"], !BadgeRequest.isBlank(promise) else {
            throw Problem(parameter: "promise", message: "the promise is missing; describe it in a few words, e.g. promise=Run+a+marathon",
                          allowed: "1 to \(maxPromiseBytes) bytes of text")
        }
        guard promise.utf8.count <= maxPromiseBytes else {
            throw Problem(parameter: "promise", message: "the promise is \(promise.utf8.count) bytes long",
                          allowed: "1 to \(maxPromiseBytes) bytes of text")
        }
        let styles = ProceduralGenerator.styles
        var style: String?
        if let given = values["style"] {
            guard styles.contains(given.lowercased()) else {
                var allowed = styles.joined(separator: ", ")
                if let near = ConfigObject.closest(to: given.lowercased(), in: styles) { allowed = "did you mean \"\(near)\"? " + allowed }
                throw Problem(parameter: "style", message: "the procedural backend has no style \(shown(given))", allowed: allowed)
            }
            style = given.lowercased()
        }
        var seed: UInt64?
        if let given = values["seed"] {
            guard !given.isEmpty, given.utf8.count <= 20, given.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let number = UInt64(given) else {
                throw Problem(parameter: "seed", message: "seed must be a whole number, not \(shown(given))", allowed: "0 to \(UInt64.max)")
            }
            seed = number
        }
        let sizes = BadgeRequest.sizeRange.lowerBound...maxSize
        var size = min(defaultSize, maxSize)
        if let given = values["size"] {
            guard given.utf8.count <= 6, given.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let number = Int(given), sizes.contains(number) else {
                throw Problem(parameter: "size", message: "size must be from \(sizes.lowerBound) to \(sizes.upperBound) pixels, not \(shown(given))",
                              allowed: "\(sizes.lowerBound) to \(sizes.upperBound)")
            }
            size = number
        }
        let caption = values["caption"]
        if let caption, caption.utf8.count > 200 {
            throw Problem(parameter: "caption", message: "the caption is \(caption.utf8.count) bytes long", allowed: "at most 200 bytes")
        }
        let date = values["date"]
        if let date, (try? dayStart(date)) == nil {
            throw Problem(parameter: "date", message: "date must be a day written YYYY-MM-DD, not \(shown(date))", allowed: "YYYY-MM-DD")
        }
        return RenderQuery(promise: promise, style: style, seed: seed, size: size, caption: caption, date: date)
    }

    /// The seed drawn: the one given, else one worked out from the promise
    /// (FNV-1a), so the same query always names the same badge.
    package var effectiveSeed: UInt64 {
        if let seed { return seed }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in promise.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }

    /// One string per badge: the parameters in a fixed order, defaults filled
    /// in, each text led by its length in bytes, so that no promise or
    /// caption (which may hold any character) reads as another's fields.
    package var canonical: String {
        func text(_ name: String, _ value: String) -> String { "\(name)=\(value.utf8.count):\(value)" }
        var parts = [text("promise", promise), "style=\(style ?? "")", "seed=\(effectiveSeed)", "size=\(size)"]
        if let caption { parts.append(text("caption", caption)) }
        if let date { parts.append("date=\(date)") }
        return parts.joined(separator: "\u{0}")
    }

    package var request: BadgeRequest {
        BadgeRequest(prompt: promise, style: style, size: size, seed: effectiveSeed, caption: caption)
    }

    /// Midnight UTC of `day` (YYYY-MM-DD), the render API's commitment date.
    static func dayStart(_ day: String) throws -> Date {
        try BadgeMetadata.parseCommitmentDate(day, in: TimeZone(identifier: "UTC")!)
    }

    /// `text` with `+` as a space and each `%XX` as the byte it names, read as
    /// UTF-8; nil when a `%` is not followed by two hex digits or the bytes are
    /// not UTF-8. The same as Foundation's `removingPercentEncoding` after `+`
    /// is replaced (RenderQueryTests compares the two on random queries), in
    /// plain Swift: Foundation's bridges to NSString and was a quarter of the
    /// server's CPU on a cached badge.
    package static func decode(_ text: Substring) -> String? {
        let input = text.utf8
        var bytes: [UInt8] = []
        bytes.reserveCapacity(input.count)
        var i = input.startIndex
        while i != input.endIndex {
            let byte = input[i]
            i = input.index(after: i)
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard i != input.endIndex, let high = hexValue(input[i]) else { return nil }
                i = input.index(after: i)
                guard i != input.endIndex, let low = hexValue(input[i]) else { return nil }
                i = input.index(after: i)
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static func shown(_ text: String) -> String {
        ServeSettings.quoted(text)
    }
}
