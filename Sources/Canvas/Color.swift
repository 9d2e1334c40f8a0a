import Foundation

/// An sRGB colour with straight (not premultiplied) alpha.
public struct RGBA: Sendable, Hashable, CustomStringConvertible {
    public var r: UInt8
    public var g: UInt8
    public var b: UInt8
    public var a: UInt8

    public init(_ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8 = 255) {
        self.r = r
        self.g = g
        self.b = b
        self.a = a
    }

    /// "#RRGGBB" or "#RRGGBBAA"; nil for anything else.
    public init?(hex: String) {
        var text = hex
        if text.hasPrefix("#") { text.removeFirst() }
        guard text.count == 6 || text.count == 8, let value = UInt32(text, radix: 16) else { return nil }
        if text.count == 6 {
            self.init(UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF))
        } else {
            self.init(UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF))
        }
    }

    /// From hue (0–360), saturation and lightness (0–1).
    public static func hsl(_ h: Double, _ s: Double, _ l: Double, alpha: UInt8 = 255) -> RGBA {
        let c = (1 - abs(2 * l - 1)) * s
        let hp = (h.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360) / 60
        let x = c * (1 - abs(hp.truncatingRemainder(dividingBy: 2) - 1))
        let (r1, g1, b1): (Double, Double, Double)
        switch hp {
        case ..<1: (r1, g1, b1) = (c, x, 0)
        case ..<2: (r1, g1, b1) = (x, c, 0)
        case ..<3: (r1, g1, b1) = (0, c, x)
        case ..<4: (r1, g1, b1) = (0, x, c)
        case ..<5: (r1, g1, b1) = (x, 0, c)
        default: (r1, g1, b1) = (c, 0, x)
        }
        let m = l - c / 2
        func byte(_ v: Double) -> UInt8 { UInt8(max(0, min(255, ((v + m) * 255).rounded()))) }
        return RGBA(byte(r1), byte(g1), byte(b1), alpha)
    }

    /// Hue (0–360), saturation and lightness (0–1).
    public var hsl: (h: Double, s: Double, l: Double) {
        let r = Double(self.r) / 255, g = Double(self.g) / 255, b = Double(self.b) / 255
        let maxV = max(r, g, b), minV = min(r, g, b)
        let l = (maxV + minV) / 2
        guard maxV != minV else { return (0, 0, l) }
        let d = maxV - minV
        let s = l > 0.5 ? d / (2 - maxV - minV) : d / (maxV + minV)
        var h: Double
        switch maxV {
        case r: h = (g - b) / d + (g < b ? 6 : 0)
        case g: h = (b - r) / d + 2
        default: h = (r - g) / d + 4
        }
        h *= 60
        return (h, s, l)
    }

    /// WCAG relative luminance, 0 (black) to 1 (white).
    public var luminance: Double {
        func channel(_ v: UInt8) -> Double {
            let c = Double(v) / 255
            return c <= 0.03928 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
    }

    /// WCAG contrast ratio between two colours, 1 to 21.
    public static func contrast(_ x: RGBA, _ y: RGBA) -> Double {
        let (a, b) = (x.luminance, y.luminance)
        return (max(a, b) + 0.05) / (min(a, b) + 0.05)
    }

    public func mixed(with other: RGBA, _ t: Double) -> RGBA {
        func lerp(_ a: UInt8, _ b: UInt8) -> UInt8 { UInt8((Double(a) + (Double(b) - Double(a)) * t).rounded()) }
        return RGBA(lerp(r, other.r), lerp(g, other.g), lerp(b, other.b), lerp(a, other.a))
    }

    public func withAlpha(_ alpha: UInt8) -> RGBA { RGBA(r, g, b, alpha) }
    public func lighter(_ t: Double) -> RGBA { mixed(with: RGBA(255, 255, 255, a), t) }
    public func darker(_ t: Double) -> RGBA { mixed(with: RGBA(0, 0, 0, a), t) }

    public var description: String { String(format: "#%02X%02X%02X", r, g, b) + (a == 255 ? "" : String(format: "%02X", a)) }

    public static let white = RGBA(255, 255, 255)
    public static let black = RGBA(0, 0, 0)
    public static let clear = RGBA(0, 0, 0, 0)
}

/// What fills a shape: one colour, or a gradient that is dithered so it never bands.
public enum Paint: Sendable {
    case solid(RGBA)
    /// From `start` to `end` (in pixels), through the stops (offset 0–1, colour).
    case linear(start: Point, end: Point, stops: [(Double, RGBA)])
    /// Around `center` out to `radius`.
    case radial(center: Point, radius: Double, stops: [(Double, RGBA)])
}

public struct Point: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public init(_ x: Double, _ y: Double) {
        self.x = x
        self.y = y
    }
}
