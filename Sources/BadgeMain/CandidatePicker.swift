import BadgeKit
import Foundation
import TerminalGraphics
#if canImport(Glibc)
import Glibc
#endif

/// `generate --choose N [--pick K]`: how many candidates, and the one picked in advance.
struct Choice {
    static let defaultCount = 4
    var count: Int
    var pick: Int?

    /// Refuses, before anything is drawn, to wait for a key that cannot come.
    func checkTerminal() throws {
        guard pick == nil else { return }
        guard isatty(STDIN_FILENO) == 1, Terminal.stdoutIsTerminal else {
            throw BadgeError(.usage, "--choose \(count) shows the candidates and waits for your key, but this is not a terminal",
                             hint: "add --pick K (1 to \(count)) to choose without asking, e.g. badge generate --choose \(count) --pick 1 \"...\"")
        }
    }

    /// The candidate to commit: the one --pick names, or the one the person picks
    /// (`ChoiceCancelled` when they cancel).
    func choose(from maker: CandidateMaker, context: CommandContext) async throws -> CheckedBadge {
        guard let pick else {
            return try await CandidatePicker(maker: maker, environment: context.environment).run()
        }
        let spinner = Spinner("\(maker.backend.name): drawing \(count) candidates")
        spinner.start()
        defer { spinner.stop() }
        let candidates = try await maker.make(round: 0)
        spinner.stop()
        let picked = candidates[pick - 1]
        if let failure = picked.failure {
            var error = failure
            error.message = "candidate \(pick) of \(count) failed: \(failure.message)"
            if error.hint == nil {
                let made = candidates.filter { $0.made != nil }.map { "\($0.number)" }
                error.hint = made.isEmpty ? "no candidate was made; the current badge is unchanged"
                    : "candidates \(made.joined(separator: ", ")) were made; pick one of them"
            }
            throw error
        }
        guard let made = picked.made else { throw BadgeError(.generationFailed, "candidate \(pick) of \(count) was not made") }
        return made
    }
}

/// The person cancelled the choice (`q`, Esc, Ctrl-C): not an error. badge says
/// "Nothing was committed." and exits with `exitStatus`: 130 for Ctrl-C and Esc, as
/// fzf does, 1 for `q`.
struct ChoiceCancelled: Error {
    var exitStatus: Int32
    static let message = "Nothing was committed."
}

/// The numbered grid of candidates in the terminal, and the keys that choose:
/// 1–N commits that one, `r` draws a new set, `s` saves them all as files
/// without committing, `q`, Esc or Ctrl-C cancel.
struct CandidatePicker {
    var maker: CandidateMaker
    var environment: BadgeEnvironment

    /// The candidate picked; throws `ChoiceCancelled` when the person cancels.
    func run() async throws -> CheckedBadge {
        let terminal = try RawTerminal()
        defer { terminal.restore() }
        var graphics = TerminalGraphics.detect(environment: environment.variables)
        if graphics.mode == .symbols, environment.variables["TERM"] != "dumb" {
            // Sixels where the terminal says it has them (attribute 4), whatever TERM says.
            let attributes = try await BlockingExecutor.run { terminal.deviceAttributes(timeout: 250) }
            if attributes?.dropFirst().contains(4) == true { graphics = graphics.drawing(.sixels) }
        }
        environment.logger.debug("terminal graphics", metadata: ["mode": "\(graphics.mode.rawValue)"])
        var round = 0
        var candidates = try await make(round: round, on: terminal)
        try await draw(candidates, round: round, graphics: graphics, on: terminal)
        while true {
            let key = try await nextKey(terminal)
            switch key {
            case .escape, .interrupt, .character("q"), .character("Q"):
                terminal.write("\r\u{1B}[2K")
                throw ChoiceCancelled(exitStatus: key == .character("q") || key == .character("Q") ? 1 : 130)
            case .character("r"), .character("R"):
                round += 1
                candidates = try await make(round: round, on: terminal)
                try await draw(candidates, round: round, graphics: graphics, on: terminal)
            case .character("s"), .character("S"):
                status(save(candidates), on: terminal)
            case let .character(digit) where digit.wholeNumberValue.map({ (1...candidates.count).contains($0) }) == true:
                let candidate = candidates[digit.wholeNumberValue! - 1]
                if let made = candidate.made {
                    terminal.write("\r\u{1B}[2K" + "Committing candidate \(candidate.number)…\r\n")
                    return made
                }
                status("Candidate \(candidate.number) failed; pick another, r for a new set, q to cancel.", on: terminal)
            case let .character(character):
                let number = character.wholeNumberValue
                keys(number.map { "\($0): there are \(candidates.count)" } ?? "\(character): not a key here", on: terminal)
            case .other:
                keys("that key means nothing here", on: terminal)
            }
        }
    }

    /// The next key; checks for cancellation (SIGINT from outside, SIGTERM) while it waits.
    private func nextKey(_ terminal: RawTerminal) async throws -> RawTerminal.Key {
        while true {
            try Task.checkCancellation()
            if let key = try await BlockingExecutor.run({ terminal.key(within: 200) }) { return key }
        }
    }

    private func make(round: Int, on terminal: RawTerminal) async throws -> [Candidates.Candidate] {
        terminal.write("\r\u{1B}[2K" + Style.dim("Drawing \(maker.count) candidates with \(maker.backend.name)…"))
        let candidates = try await maker.make(round: round)
        terminal.write("\r\u{1B}[2K")
        return candidates
    }

    /// Replaces the last line (the keys' line) with `text`, then the keys again below it.
    private func status(_ text: String, on terminal: RawTerminal) {
        terminal.write("\r\u{1B}[2K" + OutsideText.printable(text) + "\r\n" + keysLine(count: maker.count))
    }

    /// The keys' line again, with a word on the key just pressed.
    private func keys(_ word: String, on terminal: RawTerminal) {
        terminal.write("\r\u{1B}[2K" + keysLine(count: maker.count) + " " + Style.dim("· " + word) + " ")
    }

    private func keysLine(count: Int) -> String {
        "\(Style.bold("1"))–\(Style.bold("\(count)")) commit that one · \(Style.bold("r")) new set · \(Style.bold("s")) save all · \(Style.bold("q")) cancel "
    }

    /// Draws the title, the grid and the keys; a new set (`round` > 0) replaces the screen.
    private func draw(_ candidates: [Candidates.Candidate], round: Int, graphics: TerminalGraphics, on terminal: RawTerminal) async throws {
        let size = terminal.size
        // A cell's pixels: as the terminal says, else the usual 10×20.
        var cell = (width: 10, height: 20)
        if size.pixelWidth > 0, size.pixelHeight > 0 {
            cell = (max(1, size.pixelWidth / size.columns), max(1, size.pixelHeight / size.rows))
        }
        // Symbol art stands for a few pixels a cell: below 20 cells a badge is a smudge, so the tiles
        // are fewer to a row and larger, and no caption can be read in them: each is printed as text.
        let symbols = graphics.mode == .symbols
        let aspect = Double(cell.height) / Double(cell.width)
        var grid = CandidateGrid.fit(count: candidates.count, columns: size.columns, rows: size.rows, cellAspect: aspect,
                                     minimumWidth: symbols ? CandidateGrid.minimumSymbolWidth : CandidateGrid.minimumWidth,
                                     textRows: symbols ? 1 : 0)
        if !symbols, grid.width * cell.width < CandidateGrid.readableCaptionPixels {
            grid = CandidateGrid.fit(count: candidates.count, columns: size.columns, rows: size.rows, cellAspect: aspect, textRows: 1)
        }
        var pictures: [CandidateGrid.Picture] = []
        for candidate in candidates {
            if let made = candidate.made {
                let drawn = try? await graphics.render(png: made.png, columns: grid.width, rows: grid.height, cell: cell)
                pictures.append(drawn.map { graphics.mode == .symbols ? .lines($0.components(separatedBy: "\n")) : .image($0) }
                                ?? .lines(CandidateGrid.box(["cannot show it"], width: grid.width, height: grid.height)))
            } else {
                let message = OutsideText.printable(candidate.failure?.message ?? "failed")
                pictures.append(.lines(CandidateGrid.box(["✗ failed"] + CandidateGrid.wrap(message, width: grid.width - 4),
                                                         width: grid.width, height: grid.height)))
            }
        }
        var text = ""
        if round > 0 {
            if graphics.mode == .kitty { text += "\u{1B}_Ga=d\u{1B}\\" }
            text += "\u{1B}[H\u{1B}[2J"
        }
        let prompt = OutsideText.printable(maker.request.prompt)
        text += Style.bold("Choose your badge") + "  “" + CandidateGrid.clip(prompt, to: max(8, size.columns - 40)) + "”  · "
            + "\(candidates.count) candidates, \(maker.backend.name)" + (round > 0 ? " · set \(round + 1)" : "") + "\r\n\r\n"
        terminal.write(text)
        for start in stride(from: 0, to: candidates.count, by: grid.across) {
            let row = start..<min(candidates.count, start + grid.across)
            terminal.write(grid.drawRow(Array(pictures[row])))
            terminal.write(grid.captions(row.map { candidates[$0] }) + "\r\n")
            if grid.textRows > 0 { terminal.write(grid.captionTexts(row.map { candidates[$0] }) + "\r\n") }
            terminal.write("\r\n")
        }
        terminal.write(keysLine(count: candidates.count))
    }

    /// Writes every candidate made into the working directory, next to each
    /// other, without committing any; says which files.
    private func save(_ candidates: [Candidates.Candidate]) -> String {
        var written: [String] = []
        for candidate in candidates {
            guard let made = candidate.made else { continue }
            let name = "badge-candidate-\(candidate.number)-seed\(candidate.request.seed).png"
            let url = environment.workingDirectory.appendingPathComponent(name)
            do {
                try OutputWriter().write(made.png, to: .path(url), what: "the candidate")
                written.append(name)
            } catch {
                return "Could not save \(name): \(error); nothing is committed."
            }
        }
        if written.isEmpty { return "No candidate was made, so nothing was saved." }
        return "Saved \(written.count) (not committed): " + written.joined(separator: ", ")
    }
}

/// Bold and dim text for the picker (no colours: NO_COLOR and plain terminals read it the same).
enum Style {
    static func bold(_ text: String) -> String { "\u{1B}[1m\(text)\u{1B}[22m" }
    static func dim(_ text: String) -> String { "\u{1B}[2m\(text)\u{1B}[22m" }
    static func inverse(_ text: String) -> String { "\u{1B}[7m\(text)\u{1B}[27m" }
}

/// How the candidates are laid out: `across` to a row, each picture `width`
/// cells wide and `height` rows tall, with their numbers under them. It fits
/// the terminal's width and, when it can, its height; a terminal too narrow
/// for more has one to a row and scrolls.
struct CandidateGrid: Equatable {
    var across: Int
    var width: Int
    var height: Int
    var gap = 2
    /// Lines under each number for the badge's caption as text (0: the pictures show it).
    var textRows = 0

    /// What one candidate shows: a picture's escape sequences (kitty, iTerm2,
    /// sixels), or lines of text (symbol art, a failure's box).
    enum Picture {
        case image(String)
        case lines([String])
    }

    static let minimumWidth = 12
    /// The narrowest tile of symbol art that still reads as a badge.
    static let minimumSymbolWidth = 20
    static let maximumWidth = 48
    /// Narrower than this many pixels, a picture's caption cannot be read: it is printed as text.
    static let readableCaptionPixels = 240
    /// The rows that are not pictures: the title and a blank line, the keys' line, a status line.
    static let chromeRows = 4

    /// The grid for `count` pictures in `columns`×`rows` cells, each cell
    /// `cellAspect` times as tall as it is wide.
    static func fit(count: Int, columns: Int, rows: Int, cellAspect: Double, gap: Int = 2, minimumWidth: Int = minimumWidth,
                    textRows: Int = 0) -> CandidateGrid {
        let aspect = max(0.25, cellAspect)
        func height(_ width: Int) -> Int { max(1, Int((Double(width) / aspect).rounded())) }
        var best: CandidateGrid?
        for across in 1...max(1, count) {
            let gridRows = (count + across - 1) / across
            let byWidth = (columns - gap * (across - 1)) / across
            // Each grid row: the pictures, their numbers, the captions as text, a blank line.
            let pictureRows = (rows - chromeRows) / gridRows - 2 - textRows
            let byHeight = Int(Double(pictureRows) * aspect)
            let width = min(byWidth, byHeight, maximumWidth)
            if width >= minimumWidth, width > (best?.width ?? 0) {
                best = CandidateGrid(across: across, width: width, height: height(width), gap: gap, textRows: textRows)
            }
        }
        if let best { return best }
        // Too small to show them all at once: as many to a row as fit, and the screen scrolls.
        let across = max(1, min(count, (columns + gap) / (minimumWidth + gap)))
        let width = max(1, min(maximumWidth, (columns - gap * (across - 1)) / across))
        return CandidateGrid(across: across, width: width, height: height(width), gap: gap, textRows: textRows)
    }

    /// Draws one row of the grid from the start of the current line and leaves
    /// the cursor at the start of the line under the pictures. Space is made
    /// first (the terminal scrolls if it must), then each picture is drawn at
    /// its place with the cursor saved and restored around it.
    func drawRow(_ pictures: [Picture]) -> String {
        var text = "\r" + String(repeating: "\n", count: height) + "\u{1B}[\(height)A"
        for (index, picture) in pictures.enumerated() {
            let column = index * (width + gap) + 1
            switch picture {
            case let .image(escapes):
                text += "\u{1B}7\u{1B}[\(column)G" + escapes + "\u{1B}8"
            case let .lines(lines):
                for (row, line) in lines.prefix(height).enumerated() {
                    text += "\u{1B}7" + (row > 0 ? "\u{1B}[\(row)B" : "") + "\u{1B}[\(column)G" + line + "\u{1B}[0m\u{1B}8"
                }
            }
        }
        return text + "\u{1B}[\(height)B\r"
    }

    /// The line of numbers under a row: each candidate's number, and its style or "failed".
    func captions(_ candidates: [Candidates.Candidate]) -> String {
        var line = ""
        for (index, candidate) in candidates.enumerated() {
            // A style comes from the configuration or a plugin's backend: shown without control characters.
            let label = candidate.made == nil ? "failed" : OutsideText.printable(candidate.request.style ?? "", keepingNewlines: false)
            let plain = " \(candidate.number) " + (label.isEmpty ? "" : " " + label)
            let shown = Style.inverse(Style.bold(" \(candidate.number) ")) + (label.isEmpty ? "" : " " + Self.clip(label, to: max(0, width - 4)))
            let padding = max(0, width - plain.count)
            let left = padding / 2
            line += "\u{1B}[\(index * (width + gap) + 1 + left)G" + shown
        }
        return line
    }

    /// The line under the numbers: each badge's caption as text, centred under its picture.
    func captionTexts(_ candidates: [Candidates.Candidate]) -> String {
        var line = ""
        for (index, candidate) in candidates.enumerated() {
            guard let made = candidate.made else { continue }
            let caption = made.metadata.captionDrawn ?? made.metadata.promise
            let text = Self.clip(OutsideText.printable(caption, keepingNewlines: false), to: width)
            guard !text.isEmpty else { continue }
            line += "\u{1B}[\(index * (width + gap) + 1 + max(0, width - text.count) / 2)G" + text
        }
        return line
    }

    /// A box `width`×`height` with `lines` centred in it.
    static func box(_ lines: [String], width: Int, height: Int) -> [String] {
        guard width >= 4, height >= 3 else { return Array(lines.prefix(height)).map { clip($0, to: width) } }
        let inner = width - 2
        var rows = ["╭" + String(repeating: "─", count: inner) + "╮"]
        let content = Array(lines.prefix(height - 2))
        let top = (height - 2 - content.count) / 2
        for i in 0..<(height - 2) {
            let index = i - top
            let text = index >= 0 && index < content.count ? clip(content[index], to: inner) : ""
            let left = (inner - text.count) / 2
            rows.append("│" + String(repeating: " ", count: left) + text + String(repeating: " ", count: inner - left - text.count) + "│")
        }
        rows.append("╰" + String(repeating: "─", count: inner) + "╯")
        return rows
    }

    /// `text` in lines of at most `width` characters, broken at spaces where it can.
    static func wrap(_ text: String, width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            var word = String(word)
            while word.count > width {
                if !line.isEmpty { lines.append(line); line = "" }
                lines.append(String(word.prefix(width)))
                word = String(word.dropFirst(width))
            }
            if line.isEmpty { line = word } else if line.count + 1 + word.count <= width { line += " " + word } else {
                lines.append(line)
                line = word
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    static func clip(_ text: String, to width: Int) -> String {
        text.count <= width ? text : String(text.prefix(max(0, width - 1))) + "…"
    }
}
