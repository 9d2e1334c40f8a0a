import BadgeKit
import Foundation
import TerminalGraphics
#if canImport(Glibc)
import Glibc
#endif

/// The badge itself, drawn in the terminal above its details (`badge show`): the
/// kitty graphics protocol, iTerm2's inline images or sixels where the terminal
/// has them, Unicode symbol art otherwise. Only for a terminal on standard output.
enum BadgePicture {
    /// The widest the badge is drawn, in cells: a badge, not a wallpaper.
    static let maximumColumns = 40
    /// Lines kept for the details under it.
    static let detailRows = 13

    /// Draws the badge `png` at the cursor and moves the cursor under it. A
    /// badge that cannot be drawn says why on standard error; the details follow anyway.
    static func draw(_ png: Data, environment: BadgeEnvironment) async {
        var graphics = TerminalGraphics.detect(environment: environment.variables)
        if graphics.mode == .symbols, environment.variables["TERM"] != "dumb", isatty(STDIN_FILENO) == 1,
           let terminal = try? RawTerminal() {
            // Sixels where the terminal says it has them (attribute 4), whatever TERM says.
            let attributes = try? await BlockingExecutor.run { terminal.deviceAttributes(timeout: 250) }
            terminal.restore()
            if attributes?.dropFirst().contains(4) == true { graphics = graphics.drawing(.sixels) }
        }
        let size = terminalSize()
        var cell = (width: 10, height: 20)
        if size.pixelWidth > 0, size.pixelHeight > 0 {
            cell = (max(1, size.pixelWidth / size.columns), max(1, size.pixelHeight / size.rows))
        }
        let aspect = max(0.25, Double(cell.height) / Double(cell.width))
        var columns = max(1, min(maximumColumns, size.columns - 2))
        let rows = max(4, min(Int((Double(columns) / aspect).rounded()), size.rows - detailRows))
        columns = max(1, min(columns, Int((Double(rows) * aspect).rounded())))
        do {
            let drawn = try await graphics.render(png: png, columns: columns, rows: rows, cell: cell)
            let picture: CandidateGrid.Picture = graphics.mode == .symbols ? .lines(drawn.components(separatedBy: "\n")) : .image(drawn)
            let grid = CandidateGrid(across: 1, width: columns, height: rows)
            Terminal.write(to: STDOUT_FILENO, Data((grid.drawRow([picture]) + "\n").utf8))
        } catch {
            Terminal.note("(the badge cannot be drawn here: \(error))")
        }
    }

    /// Standard output's size in cells and, when the terminal says, in pixels.
    static func terminalSize() -> (columns: Int, rows: Int, pixelWidth: Int, pixelHeight: Int) {
        var window = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 else { return (80, 24, 0, 0) }
        return (Int(window.ws_col), Int(window.ws_row), Int(window.ws_xpixel), Int(window.ws_ypixel))
    }
}
