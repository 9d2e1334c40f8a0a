import ArgumentParser
import BadgeKit
import Foundation
import ProceduralBackend
#if canImport(Glibc)
import Glibc
#endif

/// `badge prompt`: composes a prompt in a designer's four stages. On a
/// terminal it asks for each stage not given as a flag (questions on standard
/// error), otherwise it takes the flags; the line alone goes to standard
/// output, so `badge generate "$(badge prompt)"` works.
struct PromptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prompt",
        abstract: "Compose a badge prompt: purpose, vibe, metaphor, aesthetics.",
        discussion: """
            Asks for each stage on a terminal; otherwise give them as flags. Prints one line ending in --ar 1:1, \
            which the procedural backend reads stage by stage and any image model can take.

            Examples:
              badge prompt
              badge prompt --purpose "Run a marathon" --vibe joyful --color "coral, gold"
              badge prompt --purpose "Run a marathon" --metaphor runner --style flat
              badge generate "$(badge prompt --purpose 'Read 20 books' --vibe calm)"
            """
    )

    @Option(help: ArgumentHelp("What the promise is, in your words.", valueName: "text"))
    var purpose: String?

    @Option(help: ArgumentHelp("The mood: \(PromptComposer.vibes.joined(separator: ", ")) (or a word for one, such as chill: calm).", valueName: "word"),
            completion: .list(PromptComposer.vibes))
    var vibe: String?

    @Option(name: [.customLong("metaphor"), .customLong("symbol")],
            help: ArgumentHelp("The symbol to draw: \(PromptComposer.metaphors.joined(separator: ", ")) (or a word for one).", valueName: "name"),
            completion: .list(PromptComposer.metaphors))
    var metaphor: String?

    @Option(help: ArgumentHelp("The style: \(PromptComposer.styles.joined(separator: ", ")).", valueName: "name"),
            completion: .list(PromptComposer.styles))
    var style: String?

    @Option(name: .customLong("color"), help: ArgumentHelp("A colour (repeatable), or several: \"coral and teal\", \"coral, teal\"; a CSS name or a word such as coral, amber, midnight.", valueName: "name"),
            completion: .list(PromptComposer.colorWords))
    var colors: [String] = []

    @Flag(help: "Add film grain.")
    var grain = false

    @Flag(help: "Add a glow behind the symbol.")
    var glow = false

    @Flag(help: "Ask for the stages on standard input even when it is not a terminal.")
    var interactive = false

    @Flag(help: "Print the prompt and its stages as JSON.")
    var json = false

    /// `--json`: the line and each stage it was made from.
    struct Composed: Encodable {
        var prompt: String
        var purpose: String
        var vibe: String?
        var metaphor: String?
        var style: String?
        var colors: [String]
        var grain: Bool
        var glow: Bool
    }

    func run() throws {
        var composer = PromptComposer(purpose: purpose ?? "", vibe: vibe, metaphor: metaphor, style: style,
                                      colors: colors.flatMap(PromptComposer.colors(in:)),
                                      grain: grain, glow: glow)
        if purpose == nil {
            guard interactive || isatty(STDIN_FILENO) == 1 else {
                throw BadgeError(.usage, "--purpose is required when standard input is not a terminal",
                                 hint: "give the stages as flags, e.g. badge prompt --purpose \"Run a marathon\" --vibe joyful --metaphor runner --style flat --color coral")
            }
            try ask(&composer)
        }
        try composer.validate()
        // A word for a mood is written as the vibe that draws it, and said.
        if let given = composer.vibe, let drawn = PromptComposer.vibe(named: given), drawn != given.lowercased() {
            Terminal.note("badge: \"\(given)\" is drawn as the \(drawn) vibe")
            composer.vibe = drawn
        }
        if json {
            try Terminal.json(Composed(prompt: composer.line, purpose: composer.purpose, vibe: composer.vibe, metaphor: composer.metaphor,
                                       style: composer.style, colors: composer.colors, grain: composer.grain, glow: composer.glow))
        } else {
            Terminal.out(composer.line)
        }
    }

    /// Walks the stages not given as flags, asking again after an answer it cannot use.
    private func ask(_ composer: inout PromptComposer) throws {
        Terminal.note("Four stages to a badge prompt; Enter skips a stage.")
        composer.purpose = try Questions.ask("1. Purpose: what is the promise?") { answer -> String? in
            guard !answer.isEmpty else { throw BadgeError(.usage, "the purpose is the one stage that cannot be skipped") }
            try PromptComposer(purpose: answer).validate()
            return answer
        } ?? ""
        if vibe == nil {
            composer.vibe = try Questions.ask("2. Vibe: the mood (\(PromptComposer.vibes.joined(separator: ", ")))") { answer in
                guard !answer.isEmpty else { return nil }
                try PromptComposer(purpose: "-", vibe: answer).validate()
                return answer
            }
        }
        if metaphor == nil {
            let suggested = PromptComposer.suggestedMetaphor(for: composer.purpose)
            let offer = suggested.map { "Enter: \($0), from your words" } ?? "Enter: an emblem made from your words"
            composer.metaphor = try Questions.ask("3. Metaphor: the symbol (\(PromptComposer.metaphors.joined(separator: ", ")); \(offer))") { answer in
                guard !answer.isEmpty else { return suggested }
                try PromptComposer(purpose: "-", metaphor: answer).validate()
                return answer
            }
        }
        if style == nil {
            composer.style = try Questions.ask("4. Aesthetics: the style (\(PromptComposer.styles.joined(separator: ", ")); Enter: medal)") { answer in
                guard !answer.isEmpty else { return nil }
                try PromptComposer(purpose: "-", style: answer).validate()
                return answer
            }
        }
        if colors.isEmpty {
            composer.colors = try Questions.ask("   and the colours (e.g. \(PromptComposer.suggestedColors.prefix(5).joined(separator: ", ")); Enter: chosen from the seed)") { answer in
                let words = PromptComposer.colors(in: answer)
                try PromptComposer(purpose: "-", colors: words).validate()
                return words
            } ?? []
        }
    }
}

/// Reads answers from standard input, one line each; a question is asked
/// again, with the reason, until its answer is usable (or input ends).
enum Questions {
    /// The longest answer read: a few words are asked for, and standard input
    /// may be a file or a pipe that never sends a line break.
    static let maxAnswerBytes = 4096

    /// One line of standard input without its line break (LF or CR LF), read a
    /// byte at a time so nothing past it is taken from a pipe or file; nil at
    /// the end of input. A longer line than `limit` bytes is an error.
    static func line(limit: Int) throws -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = Glibc.read(STDIN_FILENO, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                throw BadgeError(.io, "cannot read standard input", cause: BadgeError.errnoDescription(errno))
            }
            if n == 0 && bytes.isEmpty { return nil }
            if n == 0 || byte == 0x0A {
                if bytes.last == 0x0D { bytes.removeLast() }
                return String(decoding: bytes, as: UTF8.self)
            }
            guard bytes.count < limit else {
                throw BadgeError(.usage, "an answer on standard input is longer than \(limit) bytes", hint: "answer each question in a few words")
            }
            bytes.append(byte)
        }
    }

    static func ask<T>(_ question: String, _ use: (String) throws -> T?) throws -> T? {
        var asked = false
        while true {
            // The question (with its list of choices) once; after an unusable answer, only the reason and the prompt.
            // Wrapped at spaces to the terminal's width: a list of choices never breaks inside a word.
            let columns = Terminal.columns(of: STDERR_FILENO)
            Terminal.write(to: STDERR_FILENO, Data(((asked ? "" : Terminal.wrapped(question, width: columns, indent: 3) + "\n") + "› ").utf8))
            asked = true
            guard let line = try line(limit: maxAnswerBytes) else {
                throw BadgeError(.usage, "standard input ended before the prompt was composed", hint: "answer each question, or give the stages as flags")
            }
            do {
                return try use(line.trimmingCharacters(in: .whitespaces))
            } catch let error as BadgeError {
                // The question lists the choices: the answer's error adds only the nearest one.
                var hint = error.hint
                if let text = hint, text.hasPrefix(PromptComposer.didYouMean), let end = text.firstIndex(of: "?") {
                    hint = String(text[...end])
                } else if let text = hint, text.hasPrefix("choose one of") {
                    hint = "choose one of those listed above"
                }
                Terminal.note(Terminal.wrapped("  \(error.message)" + (hint.map { "; \($0)" } ?? ""), width: Terminal.columns(of: STDERR_FILENO), indent: 4))
            }
        }
    }
}
