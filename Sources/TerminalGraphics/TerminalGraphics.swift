import BadgeKit
import CChafa
import Canvas
import Foundation

/// Pictures in the terminal, drawn by chafa: the kitty graphics protocol, iTerm2
/// inline images or sixels where the terminal has them, Unicode symbol art
/// everywhere else. Which one is chafa's terminal database's answer for the
/// environment (TERM, TERM_PROGRAM, COLORTERM, ...), with KITTY_WINDOW_ID read
/// here too, since the database reads TERM alone for kitty.
package struct TerminalGraphics: Sendable {
    package enum Mode: String, Sendable, CaseIterable {
        case symbols, sixels, kitty, iterm2

        var chafaMode: Int32 {
            switch self {
            case .symbols: return Int32(BADGE_CHAFA_SYMBOLS)
            case .sixels: return Int32(BADGE_CHAFA_SIXELS)
            case .kitty: return Int32(BADGE_CHAFA_KITTY)
            case .iterm2: return Int32(BADGE_CHAFA_ITERM2)
            }
        }
    }

    /// How pictures are drawn.
    package var mode: Mode
    /// The colours symbol art uses (a chafa canvas mode).
    let colors: Int32
    /// What chafa reads to know the terminal's escape sequences.
    let environment: [String: String]

    /// The terminal `environment` describes.
    package static func detect(environment: [String: String]) -> TerminalGraphics {
        var environment = environment
        if environment["KITTY_WINDOW_ID"].map({ !$0.isEmpty }) == true, !(environment["TERM"] ?? "").contains("kitty") {
            environment["TERM"] = "xterm-kitty"
        }
        var colors: Int32 = 0
        let chafaMode = withEnvironment(environment) { badge_chafa_detect($0, &colors) }
        let mode = Mode.allCases.first { $0.chafaMode == chafaMode } ?? .symbols
        return TerminalGraphics(mode: mode, colors: colors, environment: environment)
    }

    /// The same terminal, drawing pictures as `mode` says (a terminal that
    /// answered a query for sixels, say).
    package func drawing(_ mode: Mode) -> TerminalGraphics {
        TerminalGraphics(mode: mode, colors: colors, environment: environment)
    }

    /// What shows `png` in `columns`×`rows` terminal cells of `cell` pixels
    /// each: escape sequences and text, to print at the cursor. Symbol art is
    /// `rows` lines, each `columns` cells wide, separated by "\n". Decodes and
    /// draws on a thread of its own.
    package func render(png: Data, columns: Int, rows: Int, cell: (width: Int, height: Int)) async throws -> String {
        let this = self
        return try await BlockingExecutor.run {
            // Enough pixels for the cells (a symbol stands for 8×8 at most), not more.
            let side = this.mode == .symbols ? min(512, columns * 8) : min(1024, columns * cell.width)
            let image = try GDImage.decodePNG(png)
            let scaled = image.width == side ? image : try image.resized(width: side, height: max(1, side * image.height / image.width))
            var pixels = [UInt8](repeating: 0, count: scaled.width * scaled.height * 4)
            for y in 0..<scaled.height {
                for x in 0..<scaled.width {
                    let p = scaled.pixel(x, y), i = (y * scaled.width + x) * 4
                    pixels[i] = p.r; pixels[i + 1] = p.g; pixels[i + 2] = p.b; pixels[i + 3] = p.a
                }
            }
            let printed = Self.withEnvironment(this.environment) { envp in
                badge_chafa_render(pixels, Int32(scaled.width), Int32(scaled.height), Int32(columns), Int32(rows),
                                   Int32(cell.width), Int32(cell.height), this.mode.chafaMode, this.colors, envp)
            }
            guard let printed else {
                throw BadgeError(.generationFailed, "chafa could not draw the picture for the terminal")
            }
            defer { free(printed) }
            return String(cString: printed)
        }
    }

    /// Calls `body` with `environment` as a NULL-terminated C array of "NAME=value".
    static func withEnvironment<T>(_ environment: [String: String], _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> T) -> T {
        var strings: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") }
        strings.append(nil)
        defer { strings.forEach { free($0) } }
        return strings.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
    }
}
