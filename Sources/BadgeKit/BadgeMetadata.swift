import Foundation

/// What badge.png says about itself, stored as `badge:*` iTXt chunks right
/// after IHDR. Image and date live in one file, so one rename commits both.
public struct BadgeMetadata: Sendable, Equatable, Codable {
    /// The version of the badge tool that wrote the file.
    public static let version = "0.4.0"
    public static let generatorVersion = "badge " + version
    static let prefix = "badge:"

    /// A random 64-bit id in hex: what `badge history` lists and `badge restore` takes.
    public var id: String
    /// The day (and moment) the promise begins, in `timeZone`.
    public var commitmentDate: Date
    /// IANA time zone the commitment was made in ("Europe/Berlin").
    public var timeZone: String
    /// When this badge was committed to a store or written out.
    public var createdAt: Date
    public var prompt: String
    /// The backend instance name ("procedural", "openai").
    public var backend: String
    public var backendType: String
    public var style: String?
    public var size: Int
    public var seed: UInt64?
    public var model: String?
    public var revisedPrompt: String?
    public var generator: String
    /// Anything else a backend reported, under `badge:x-<key>`.
    public var extra: [String: String]

    public init(
        id: String = BadgeMetadata.newID(), commitmentDate: Date, timeZone: String, createdAt: Date,
        prompt: String, backend: String, backendType: String, style: String? = nil, size: Int,
        seed: UInt64? = nil, model: String? = nil, revisedPrompt: String? = nil,
        generator: String = BadgeMetadata.generatorVersion, extra: [String: String] = [:]
    ) {
        self.id = id
        self.commitmentDate = commitmentDate
        self.timeZone = timeZone
        self.createdAt = createdAt
        self.prompt = prompt
        self.backend = backend
        self.backendType = backendType
        self.style = style
        self.size = size
        self.seed = seed
        self.model = model
        self.revisedPrompt = revisedPrompt
        self.generator = generator
        self.extra = extra
    }

    /// Whether `id` is a badge's id: exactly 16 lowercase hex digits. The
    /// store names history entries by id, so nothing else is ever taken for one.
    public static func isValidID(_ id: String) -> Bool {
        id.utf8.count == 16 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    public static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return hexDigits(generator.next() as UInt64, count: 16)
    }

    /// An id worked out from the image and everything recorded with it but the id: the same
    /// badge made twice gets the same id, as reproducible runs (`SOURCE_DATE_EPOCH`) need.
    /// Throws `.missingLibrary` when libcrypto cannot be opened.
    public func contentID(of png: Data) throws -> String {
        let hash = try SHA256()
        hash.update(png)
        for (keyword, text) in textEntries where keyword != "badge:id" {
            hash.update(keyword)
            hash.update([0])
            hash.update(text)
            hash.update([0])
        }
        return hash.finalize().prefix(8).map { hexDigits(UInt64($0), count: 2) }.joined()
    }

    // MARK: - What the badge shows, as every front describes it

    /// What the badge stands for: the purpose of a `badge prompt` line (the
    /// `promise` note), else the prompt.
    package var promise: String { extra["promise"] ?? prompt }

    /// The caption drawn on the badge, when the backend says (the procedural
    /// backend's `caption-drawn` note).
    package var captionDrawn: String? { extra["caption-drawn"] }

    /// Who chose the style a badge was drawn in.
    package enum StyleSource: String, Sendable, Encodable {
        /// The request: `--style`, a batch job, the configuration's default, the studio's choice.
        case request
        /// The prompt's words ("flat style").
        case prompt
        /// The backend's own default.
        case `default`

        /// What follows the style's name where it is shown: "medal (the default)".
        package var shown: String {
            switch self {
            case .request: ""
            case .prompt: " (from the prompt)"
            case .default: " (the default)"
            }
        }
    }

    /// The style a badge was drawn in and who chose it: the one asked for,
    /// else the one the procedural backend reports in its `style` note
    /// ("flat (from the prompt)", "medal"). Nil for a backend without styles.
    package var styleDrawn: (name: String, source: StyleSource)? {
        backendType == "procedural" ? Self.styleDrawn(asked: style, note: extra["style"]) : style.map { ($0, .request) }
    }

    /// The style asked for, else the one a procedural `style` note names.
    package static func styleDrawn(asked: String?, note: String?) -> (name: String, source: StyleSource)? {
        if let asked { return (asked, .request) }
        guard let note, !note.isEmpty else { return nil }
        let fromPrompt = " (from the prompt)"
        if note.hasSuffix(fromPrompt) { return (String(note.dropLast(fromPrompt.count)), .prompt) }
        return (note, .default)
    }

    var zone: TimeZone { TimeZone(identifier: timeZone) ?? TimeZone(secondsFromGMT: 0)! }

    /// The commitment date as RFC 3339 with the offset of its own time zone.
    public var commitmentDateString: String { Self.rfc3339(commitmentDate, in: zone) }

    /// "January 1, 2027" (in the given locale), on the calendar day of the
    /// commitment's own time zone, wherever it is read.
    public func longCommitmentDate(locale: Locale = .current) -> String {
        commitmentDate.formatted(Self.longDateStyle(locale: locale, timeZone: zone))
    }

    /// The style of `longCommitmentDate`: its formatter is cached by style,
    /// so one made ahead (`warmUpReport`) serves the real date.
    static func longDateStyle(locale: Locale, timeZone: TimeZone) -> Date.FormatStyle {
        var style = Date.FormatStyle(date: .long, time: .omitted, locale: locale, timeZone: timeZone)
        style.calendar = Calendar(identifier: .gregorian)
        return style
    }

    /// Loads what stamping and reporting a badge made now will need from ICU
    /// (the local time zone's rules, the long-date formatter of `locale`) into
    /// Foundation's caches: for a spare thread to do while the badge is being
    /// made.
    public static func warmUpReport(locale: Locale) {
        let zone = TimeZone(identifier: TimeZone.current.identifier) ?? TimeZone(secondsFromGMT: 0)!
        _ = Date().formatted(longDateStyle(locale: locale, timeZone: zone))
    }

    // MARK: - Chunks

    public var textEntries: [(keyword: String, text: String)] {
        var entries: [(String, String)] = [
            ("badge:id", id),
            ("badge:commitment-date", commitmentDateString),
            ("badge:time-zone", timeZone),
            ("badge:created", Self.rfc3339(createdAt, in: zone, fractionalSeconds: true)),
            ("badge:prompt", prompt),
            ("badge:backend", backend),
            ("badge:backend-type", backendType),
            ("badge:size", String(size)),
            ("badge:generator", generator),
        ]
        if let style { entries.append(("badge:style", style)) }
        if let seed { entries.append(("badge:seed", String(seed))) }
        if let model { entries.append(("badge:model", model)) }
        if let revisedPrompt { entries.append(("badge:revised-prompt", revisedPrompt)) }
        for key in extra.keys.sorted() { entries.append(("badge:x-\(key)", extra[key]!)) }
        return entries
    }

    /// Reads the metadata back; nil when the entries are not a badge's,
    /// which includes an id that is not 16 lowercase hex digits.
    public init?(entries: [(keyword: String, text: String)]) {
        var map: [String: String] = [:]
        for (k, v) in entries where k.hasPrefix(Self.prefix) { map[String(k.dropFirst(Self.prefix.count))] = v }
        guard let id = map["id"], Self.isValidID(id), let dateText = map["commitment-date"], let date = Self.parseRFC3339(dateText),
              let prompt = map["prompt"], let backend = map["backend"]
        else { return nil }
        self.id = id
        self.commitmentDate = date
        self.timeZone = map["time-zone"] ?? "UTC"
        self.createdAt = map["created"].flatMap(Self.parseRFC3339) ?? date
        self.prompt = prompt
        self.backend = backend
        self.backendType = map["backend-type"] ?? backend
        self.style = map["style"]
        self.size = map["size"].flatMap(Int.init) ?? 0
        self.seed = map["seed"].flatMap(UInt64.init)
        self.model = map["model"]
        self.revisedPrompt = map["revised-prompt"]
        self.generator = map["generator"] ?? "unknown"
        var extra: [String: String] = [:]
        for (k, v) in map where k.hasPrefix("x-") { extra[String(k.dropFirst(2))] = v }
        self.extra = extra
    }

    /// Returns `png` with this metadata in iTXt chunks right after IHDR. Any
    /// earlier `badge:*` text, and chunks that can carry personal data (eXIf),
    /// are dropped; the image data is copied unchanged.
    public func stamp(into png: Data) throws -> Data {
        let chunks = try PNG.chunks(in: png, verifyCRC: false)
        guard chunks.first?.type == "IHDR" else {
            throw BadgeError(.invalidImage, "the PNG does not start with an IHDR chunk")
        }
        // The chunks kept are copied as they are, CRC included (the IDAT of a
        // large badge is megabytes): only the new text chunks are computed.
        var out = Data(PNG.signature)
        out.reserveCapacity(png.count + 4096)
        out.append(PNG.rawBytes(of: chunks[0], in: png))
        for entry in textEntries { PNG.append(PNG.iTXt(keyword: entry.keyword, text: entry.text), to: &out) }
        PNG.append(PNG.iTXt(keyword: "Software", text: generator), to: &out)
        for chunk in chunks.dropFirst() {
            if chunk.type == "eXIf" { continue }
            if ["iTXt", "tEXt", "zTXt"].contains(chunk.type) {
                let keyword = chunk.data.prefix { $0 != 0 }
                let name = String(decoding: keyword, as: UTF8.self)
                if name.hasPrefix(Self.prefix) || name == "Software" { continue }
            }
            out.append(PNG.rawBytes(of: chunk, in: png))
        }
        return out
    }

    /// Reads a badge's metadata from a PNG file (header chunks only).
    public static func read(from url: URL) throws -> BadgeMetadata? {
        BadgeMetadata(entries: try PNG.readHeaderText(from: url))
    }

    // MARK: - Dates

    /// `fractionalSeconds` keeps milliseconds, so badges made within one second still sort.
    public static func rfc3339(_ date: Date, in zone: TimeZone, fractionalSeconds: Bool = false) -> String {
        // ISO8601FormatStyle is plain Swift; a DateFormatter would open ICU
        // for every badge stamped.
        date.formatted(Date.ISO8601FormatStyle(timeZoneSeparator: .colon, includingFractionalSeconds: fractionalSeconds, timeZone: zone))
    }

    /// With or without fractional seconds. ISO8601FormatStyle parses in plain
    /// Swift; ISO8601DateFormatter would open ICU the first time,
    /// and every commit to the store reads the badge it replaces.
    public static func parseRFC3339(_ text: String) -> Date? {
        try? Date.ISO8601FormatStyle(timeZoneSeparator: .colon).parse(text)
    }

    /// The start of the day `YYYY-MM-DD` in `zone`, or a full RFC 3339 timestamp.
    /// Throws a usage error naming the expected forms.
    public static func parseCommitmentDate(_ text: String, in zone: TimeZone) throws -> Date {
        if let date = parseRFC3339(text) { return date }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        if parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
           let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2])
        {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let components = DateComponents(year: y, month: m, day: d)
            if components.isValidDate(in: calendar), let date = calendar.date(from: components) {
                return date
            }
            throw BadgeError(.usage, "\(text) is not a date on the calendar", hint: "check the month and the day")
        }
        throw BadgeError(.usage, "cannot read the date \"\(text)\"",
                         hint: "write the day to begin as YYYY-MM-DD, e.g. --date 2027-01-01")
    }
}

/// `value` as `count` lowercase hex digits, zero-padded ("%016llx"): plain
/// Swift, where String(format:) costs its first caller a scan of every
/// protocol conformance in the binary.
package func hexDigits(_ value: UInt64, count: Int) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, count - digits.count)) + digits
}
