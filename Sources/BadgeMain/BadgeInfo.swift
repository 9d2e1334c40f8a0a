import BadgeKit
import Foundation

/// A badge as the CLI reports it, in text and as `--json`.
struct BadgeInfo: Encodable {
    var id: String
    var path: String
    /// What the badge stands for: the purpose of a `badge prompt` line, else the prompt.
    var promise: String
    var prompt: String
    /// The caption drawn on the badge, when the backend says.
    var caption: String?
    var backend: String
    var backendType: String
    var model: String?
    /// The style drawn, whoever chose it.
    var style: String?
    /// Who chose it: "request" (--style, a batch job or the config's default),
    /// "prompt" (the prompt's words, "flat style"), "default" (the backend's own).
    var styleSource: String?
    var size: Int
    /// A string of digits (LosslessUInt64): JSON readers that use doubles keep it exact.
    var seed: LosslessUInt64?
    var revisedPrompt: String?
    /// RFC 3339 with the offset of `timeZone`.
    var commitmentDate: String
    /// "November 22, 2026", in the user's locale.
    var commitmentDateLong: String
    var timeZone: String
    var createdAt: String
    /// For a history entry: when it was replaced, RFC 3339 in the local time zone.
    var replacedAt: String?
    var bytes: Int
    var extra: [String: String]?

    init(path: URL, metadata m: BadgeMetadata, bytes: Int) {
        id = m.id
        self.path = path.path
        prompt = m.prompt
        promise = m.promise
        caption = m.captionDrawn
        backend = m.backend
        backendType = m.backendType
        model = m.model
        let drawn = m.styleDrawn
        style = drawn?.name
        styleSource = drawn?.source.rawValue
        size = m.size
        // An imported picture was not drawn from a seed: it has none to show.
        seed = m.backendType == "import" ? nil : m.seed.map(LosslessUInt64.init)
        revisedPrompt = m.revisedPrompt
        commitmentDate = m.commitmentDateString
        commitmentDateLong = m.longCommitmentDate(locale: UserLocale.current)
        timeZone = m.timeZone
        createdAt = BadgeMetadata.rfc3339(m.createdAt, in: TimeZone(identifier: m.timeZone) ?? .gmt)
        self.bytes = bytes
        extra = m.extra.isEmpty ? nil : m.extra
    }

    init(_ stored: StoredBadge) {
        self.init(path: stored.url, metadata: stored.metadata, bytes: stored.byteCount)
        replacedAt = stored.replacedAt.map { BadgeMetadata.rfc3339($0, in: .current) }
    }

    /// "procedural (art-engine 4)"; for a model that names the backend's type
    /// ("import (cover)"), the instance and what follows the type: "import (cover)",
    /// "photos (contain)".
    static func backendText(backend: String, type: String, model: String?) -> String {
        guard let model else { return backend }
        if model.hasPrefix(type + " ("), model.hasSuffix(")") {
            return "\(backend) (\(model.dropFirst(type.count + 2).dropLast()))"
        }
        return model == type ? backend : "\(backend) (\(model))"
    }

    /// "Nov 22, 2026, 14:03" in the user's locale and `zone`: the day and the time, for listings.
    /// `dayAndTime` with the zone it is in ("Dec 2, 2026 at 10:32 AM GMT+13"):
    /// for a line that holds times in two zones.
    static func dayTimeAndZone(_ date: Date, in zone: TimeZone) -> String {
        let seconds = zone.secondsFromGMT(for: date)
        let name: String
        if zone.identifier == "UTC" || zone.identifier == "GMT" || zone.identifier == "Etc/UTC" {
            name = "UTC"
        } else if let abbreviation = zone.abbreviation(for: date), abbreviation.contains(where: \.isLetter), !abbreviation.hasPrefix("GMT") {
            name = abbreviation
        } else {
            // An offset where the zone has no letters of its own: "GMT+13", "GMT-3:30".
            let minutes = abs(seconds) / 60
            name = seconds == 0 ? "UTC" : "GMT" + (seconds < 0 ? "-" : "+") + "\(minutes / 60)" + (minutes % 60 == 0 ? "" : String(format: ":%02d", minutes % 60))
        }
        return dayAndTime(date, in: zone) + " " + name
    }

    static func dayAndTime(_ date: Date, in zone: TimeZone) -> String {
        var style = Date.FormatStyle(date: .abbreviated, time: .shortened, locale: UserLocale.current, timeZone: zone)
        style.calendar = Calendar(identifier: .gregorian)
        return date.formatted(style)
    }

    /// The human view: the date first, as on the back of the card.
    var text: String {
        Terminal.table([
            ("Commitment Date", commitmentDateLong),
            ("Promise", promise),
            ("Prompt", prompt == promise ? nil : prompt),
            // Said when the caption is shortened, left out or not drawn, and why (the procedural backend's notes).
            ("Caption", caption.map { drawn in extra?["caption-shortened"].map { "\(drawn) (shortened: \($0))" } ?? drawn }
                ?? extra?["caption-omitted"].map { "none: \($0)" } ?? Self.notDrawn(extra?["warning"])),
            ("Backend", Self.backendText(backend: backend, type: backendType, model: model)),
            ("Fallback from", extra?["fallback-from"]),
            ("Note", extra?["note"]),
            ("Style", style.map { $0 + (styleSource.flatMap(BadgeMetadata.StyleSource.init)?.shown ?? "") }),
            ("Size", "\(size)×\(size)"),
            ("Seed", seed?.description),
            ("Id", id),
            ("File", path),
        ])
    }
}

extension BadgeInfo {
    /// "not drawn (even its shortest form does not fit...)": the reason the
    /// backend's warning gives for a caption it did not draw.
    static func notDrawn(_ warning: String?) -> String? {
        let prefix = "the caption was not drawn: "
        guard let warning, warning.hasPrefix(prefix) else { return nil }
        return "not drawn (\(warning.dropFirst(prefix.count)))"
    }
}

/// The locale to format dates in. A bare "C"/"POSIX" locale (as in containers)
/// has no month names of its own, so it reads as US English, like `date` does.
enum UserLocale {
    static var current: Locale {
        let environment = ProcessInfo.processInfo.environment
        let name = [environment["LC_ALL"], environment["LC_TIME"], environment["LANG"]]
            .compactMap { $0 }.first { !$0.isEmpty } ?? ""
        let base = String(name.split(separator: ".").first ?? "")
        if base.isEmpty || base == "C" || base == "POSIX" { return Locale(identifier: "en_US") }
        return Locale(identifier: base)
    }
}
