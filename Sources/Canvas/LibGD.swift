import BadgeKit
import CGD

/// libgd, opened the first time an image is made or decoded (CGD's
/// functions need it loaded). Every path to a `GDImage` starts here.
enum LibGD {
    static func load() throws {
        guard badge_gd_load(nil, 0) != 0 else { return }
        var message = [CChar](repeating: 0, count: 512)
        _ = badge_gd_load(&message, message.count)
        let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw BadgeError(.missingLibrary, "badge cannot use libgd: \(reason)", hint: "install it: apt-get install libgd3")
    }

    /// The error to throw when one of CGD's OPTIONAL functions answered
    /// nothing on this thread: that this libgd lacks the function, or else
    /// `failure` (gd itself failed).
    static func failure(_ failure: BadgeError) -> BadgeError {
        var message = [CChar](repeating: 0, count: 512)
        guard badge_gd_missing(&message, message.count) == 1 else { return failure }
        let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return BadgeError(.missingLibrary, "badge cannot use libgd for this: \(reason)", hint: "install a newer libgd3: apt-get install libgd3")
    }
}
