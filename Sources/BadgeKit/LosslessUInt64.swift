/// A 64-bit whole number (a seed) as badge's JSON carries it: written as a string of
/// its decimal digits, read from that string or from an exact JSON integer.
///
/// JSON readers that parse every number as a double (JavaScript, jq 1.6, Python's
/// `json` with `parse_int=float`) round integers above 2^53: the seed
/// 7676146793421657753 comes back as 7676146793421658000 and draws another badge.
/// A string survives every reader, as 64-bit ids do in JSON APIs.
public struct LosslessUInt64: Codable, Sendable, Hashable, CustomStringConvertible {
    public var value: UInt64

    public init(_ value: UInt64) { self.value = value }

    public var description: String { String(value) }

    /// Decimal digits only: no sign, no spaces, no fraction or exponent.
    public static func parse(_ text: String) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return UInt64(text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(String(value))
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            guard let value = Self.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected a whole number from 0 to \(UInt64.max) as a string of digits, found \"\(text)\"")
            }
            self.value = value
        } else {
            value = try container.decode(UInt64.self)
        }
    }
}
