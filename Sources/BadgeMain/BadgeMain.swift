import ArgumentParser
import BadgeKit
import ExecBackend
import Foundation

/// badge's command line, for a `main` function: badge's own or that of a
/// package that builds its own `badge` with backends of its own. It returns
/// the exit status and does not end the process itself (but for a second
/// Ctrl-C or SIGTERM while a command runs, which ends it as that signal does
/// by default); the executable does:
///
/// ```swift
/// import BadgeMain
/// import Foundation
///
/// exit(await BadgeMain.run(registering: [SolidGenerator.self]))
/// ```
public enum BadgeMain {
    /// Runs the command in `arguments` (by default the process's own) with
    /// badge's backends and `backends`, printing what it prints, and returns
    /// its exit status: 0 success, 1 failure (the current badge is unchanged;
    /// or standard output failed for a command whose work is what it prints,
    /// such as `show`), 64 usage error, 130 a command stopped with Ctrl-C (a
    /// `--choose` cancelled with Esc too; 1 with `q`), 143 one stopped by SIGTERM. Global options may come before the command
    /// (`GlobalArguments`).
    public static func run(
        registering backends: [any RegisteringGenerator.Type] = [],
        arguments given: [String] = Array(CommandLine.arguments.dropFirst())
    ) async -> Int32 {
        Backends.extra.withLock { $0 = backends }
        // A file-size limit (ulimit -f) must fail the write with EFBIG, which the
        // store reports and survives, rather than kill the process.
        signal(SIGXFSZ, SIG_IGN)
        // A reader that goes away (`badge history | head -1`) makes writes fail with
        // EPIPE, which Terminal.write handles, rather than kill a batch half-way or a
        // commit's report. Children are spawned with every signal at its default.
        signal(SIGPIPE, SIG_IGN)
        // An exec plugin's descendant that left its process group with setsid comes to
        // badge when its parent exits, and is killed once no plugin runs.
        OrphanReaper.enable()
        Prewarm.start(for: given)
        if given == Array(CommandLine.arguments.dropFirst()), let mistake = notUTF8Argument() {
            Terminal.printError(mistake)
            return mistake.exitCode
        }
        let arguments: [String]
        do {
            arguments = try GlobalArguments.hoisted(given)
        } catch let error as BadgeError {
            Terminal.printError(error)
            return error.exitCode
        } catch {
            return report(error)
        }
        // The completion scripts are written from a root that declares the global options.
        if let first = arguments.first, first == "--generate-completion-script" || first.hasPrefix("--generate-completion-script=") {
            do {
                _ = try CompletionRoot.parseAsRoot(arguments)
            } catch {
                return report(error, of: CompletionRoot.self)
            }
        }
        let command: ParsableCommand
        do {
            command = try Badge.parseAsRoot(arguments)
        } catch {
            // argument-parser's own messages, where it errs, are replaced by one with the right suggestion.
            // Only for a usage error: help, versions and shell completions (---completion) are argument-parser's.
            if Badge.exitCode(for: error) == .validationFailure, let mistake = Badge.usageMistake(in: arguments) {
                Terminal.printError(mistake)
                return mistake.exitCode
            }
            return report(error)
        }
        let workStands = type(of: command) is any WorkStandsCommand.Type
        do {
            var command = command
            if var asyncCommand = command as? AsyncParsableCommand {
                try await Interrupts.runCancellable { try await asyncCommand.run() }
            } else {
                try command.run()
            }
        } catch let error as BadgeError {
            Terminal.printError(error)
            return error.exitCode
        } catch let cancelled as ChoiceCancelled {
            Terminal.note(ChoiceCancelled.message)
            return cancelled.exitStatus
        } catch let stopped as StoppedBySignal {
            if Terminal.jsonMode {
                Terminal.printError(BadgeError(.cancelled, String(stopped.message.dropFirst("badge: ".count).prefix { $0 != "\n" }),
                                               hint: stopped.kept?.hint))
            } else {
                Terminal.note(stopped.message)
            }
            return stopped.exitStatus
        } catch {
            return report(error)
        }
        return exitStatus(workStands: workStands)
    }

    /// The process's first argument that is not UTF-8 (a file name written in
    /// Latin-1), refused: read as a String it would have U+FFFD in place of
    /// its bytes and name another file.
    static func notUTF8Argument() -> BadgeError? {
        for index in 1..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeBufferPointer(start: pointer, count: strlen(pointer)).map { UInt8(bitPattern: $0) }
            guard String(validating: bytes, as: UTF8.self) == nil else { continue }
            let shown = bytes.map { (0x20..<0x7F).contains($0) ? String(UnicodeScalar($0)) : String(format: "\\x%02x", $0) }.joined()
            return BadgeError(.usage, "argument \(index) is not UTF-8: \(shown)",
                              hint: "badge reads promises and file names as UTF-8: rename the file (convmv -f latin1 -t utf8 does), or give a name that is")
        }
        return nil
    }

    /// 0, or 1 when standard output failed (a full disk, a closed pipe) and
    /// the command's only work was what it printed (`show`, `history`,
    /// `verify`, help): as `cat` does. A command whose work stands (a badge
    /// committed, a file written) still succeeds; the failure was said.
    static func exitStatus(workStands: Bool) -> Int32 {
        guard Terminal.standardOutputFailed, !workStands else { return 0 }
        return 1
    }

    /// What argument-parser's `exit(withError:)` prints (help and versions on
    /// standard output, errors on standard error), without exiting; in
    /// `--json` mode an error (a validation, a missing argument) is JSON on
    /// standard error. Returns the exit status.
    static func report(_ error: any Error, of root: any ParsableCommand.Type = Badge.self) -> Int32 {
        let code = root.exitCode(for: error)
        if Terminal.jsonMode, code != .success {
            let message = lowercasingFirstWord(root.message(for: error))
            if !message.isEmpty {
                Terminal.printError(BadgeError(code == .validationFailure ? .usage : .generationFailed, message,
                                               hint: code == .validationFailure ? "'badge COMMAND --help' lists a command's options" : nil))
                return code.rawValue
            }
        }
        var text = root.fullMessage(for: error)
        if !text.isEmpty {
            if code == .success {
                let output = GlobalArguments.dumpWithGlobalOptions(CompletionScripts.adjusted(withGlobalOptions(text)))
                Terminal.write(to: STDOUT_FILENO, Data((output + "\n").utf8))
                return exitStatus(workStands: false)
            } else {
                text = Terminal.clean(text)
                // Every error starts "error:" and a lower-case word, as badge's own do; argument-parser
                // writes "Error: Unknown option", and its "Help:" and "Usage:" lines are badge's "hint:" kind.
                if text.hasPrefix("Error: ") { text = "error: " + text.dropFirst("Error: ".count) }
                if text.hasPrefix("error: ") { text = "error: " + lowercasingFirstWord(String(text.dropFirst("error: ".count))) }
                text = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                    line.hasPrefix("Help: ") || line.hasPrefix("Usage: ") ? lowercasingFirstWord(String(line)) : String(line)
                }.joined(separator: "\n")
                if Terminal.stderrIsTerminal && ProcessInfo.processInfo.environment["NO_COLOR"] == nil, text.hasPrefix("error: ") {
                    text = "\u{1B}[1;31merror:\u{1B}[0m " + text.dropFirst("error: ".count)
                }
                Terminal.write(to: STDERR_FILENO, Data((text + "\n").utf8))
            }
        }
        return code.rawValue
    }

    /// `text` with its first word in lower case ("Unknown option" is "unknown option"),
    /// unless the word is all capitals (an acronym: "PNG") or a name in quotes.
    static func lowercasingFirstWord(_ text: String) -> String {
        let word = text.prefix { $0.isLetter }
        guard let first = word.first, first.isUppercase, word.dropFirst().allSatisfy(\.isLowercase) else { return text }
        return first.lowercased() + text.dropFirst()
    }

    /// The top-level help with the global options listed, before the subcommands;
    /// any other text as it is. (Declared on the top-level command they would be
    /// read there, wherever they stand, and never reach the subcommand.)
    static func withGlobalOptions(_ help: String) -> String {
        guard help.hasPrefix("OVERVIEW: "), help.contains("\nUSAGE: badge <subcommand>\n"),
              let subcommands = help.range(of: "\nSUBCOMMANDS:\n") else {
            return help
        }
        let columns = Terminal.stdoutIsTerminal ? nil : 80
        return String(help[..<subcommands.lowerBound]) + "\n" + GlobalArguments.helpSection(columns: columns) + String(help[subcommands.lowerBound...])
    }
}

/// Suggestions for the mistakes argument-parser words poorly.
///
/// argument-parser 1.8.2 answers a mistyped subcommand (`badge genrate`) with
/// "Unexpected argument 'genrate'", no suggestion; and it suggests for a mistyped
/// option the first name within plain Levenshtein distance 3 of the nearest, so
/// `--stlye` (2 edits from both `--style` and `--store`) gets `--store`, the global
/// option declared first. Here a swap of neighbours is one edit
/// (`ConfigObject.editDistance`), and the candidates are the command's own long
/// options, read from its help. Only run when parsing has failed: a correct command
/// line costs nothing.
extension Badge {
    static func usageMistake(in arguments: [String]) -> BadgeError? {
        var command: ParsableCommand.Type = Badge.self
        var index = 0
        // The subcommand path: `config validate`, `generate`, ...
        while index < arguments.count, !arguments[index].hasPrefix("-") {
            let token = arguments[index]
            let subcommands = command.configuration.subcommands
            if subcommands.isEmpty { break }
            guard let next = subcommands.first(where: { $0._commandName == token }) else {
                if token == "help" { return nil }
                let names = subcommands.map { $0._commandName }
                let path = ([Badge._commandName] + (isRoot(command) ? [] : [command._commandName])).joined(separator: " ")
                var hint = "the commands are: " + names.joined(separator: ", ")
                let near = ConfigObject.closest(to: token, in: names)
                if let near { hint = "did you mean '\(near)'? " + hint }
                // Words with no command near them (`badge Run a marathon`) are most likely a promise.
                if isRoot(command), near == nil {
                    hint += "; to make a badge of these words: " + (["badge", "generate"] + arguments.map(shellQuoted)).joined(separator: " ")
                }
                return BadgeError(.usage, "'\(token)' is not a \(path) command", hint: hint)
            }
            command = next
            index += 1
        }
        var known: Set<String>?
        let rest = Array(arguments[index...])
        for (position, token) in rest.enumerated() {
            if token == "--" { break }
            if let mistake = promiseLikeOption(token, at: position, in: rest, path: Array(arguments[..<index]), command: command) {
                return mistake
            }
            let name = String(token.split(separator: "=", maxSplits: 1).first ?? "")
            guard name.hasPrefix("--"), name.count > 2,
                  name.dropFirst(2).allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else { continue }
            if known == nil { known = longOptions(of: command).union(isRoot(command) ? GlobalArguments.spec.longNames : []) }
            guard let known, !known.contains(name) else { continue }
            var hint = "'badge \(isRoot(command) ? "" : command._commandName + " ")--help' lists the options"
            if let near = ConfigObject.closest(to: name, in: known.sorted()) { hint = "did you mean '\(near)'? " + hint }
            return BadgeError(.usage, "unknown option '\(name)'", hint: hint)
        }
        return nil
    }

    /// A promise that argument-parser took for an option: `"-5 kg by summer"` (a
    /// dash and a digit) or any "option" with a space in it. The fix is `--`
    /// before the promise, shown with the user's own command line.
    static func promiseLikeOption(_ token: String, at position: Int, in rest: [String], path: [String],
                                  command: ParsableCommand.Type) -> BadgeError? {
        guard token.hasPrefix("-"), token.count > 1, token != "--" else { return nil }
        let second = token.dropFirst().first!
        guard token.contains(" ") || second.isNumber else { return nil }
        let message = "unknown option '\(OutsideText.printable(token, keepingNewlines: false))'"
        // The value of an option before it (`--caption "-5 kg"`): written with "=", it is read as one.
        if position > 0, rest[position - 1].hasPrefix("-"), !rest[position - 1].contains("="),
           valuedOptions(of: command).contains(rest[position - 1]) {
            let option = rest[position - 1]
            return BadgeError(.usage, message, hint: "a value that starts with \"-\" is written with =: \(option)=\(shellQuoted(token))")
        }
        let (options, arguments) = optionsAndArguments(rest, known: optionNames(of: command), valued: valuedOptions(of: command))
        // `badge "-5 kg"` names no command: the promise is generate's.
        let path = isRoot(command) ? ["generate"] : path
        let line = (["badge"] + path + options.map(shellQuoted) + ["--"] + arguments.map(shellQuoted)).joined(separator: " ")
        return BadgeError(.usage, message, hint: "a promise or a file name that starts with \"-\" goes after --, which ends the options: \(line)")
    }

    /// `words` split into the command's options (with the values of those
    /// that take one, a value that starts with "-" joined with "=") and the
    /// positional arguments in their order, anything after a `--` included:
    /// `import "-a.png" "-Walk" --size 64` is `--size 64` and `-a.png -Walk`,
    /// so `--` goes before the file and keeps it first.
    static func optionsAndArguments(_ words: [String], known: Set<String>, valued: Set<String>) -> (options: [String], arguments: [String]) {
        var options: [String] = [], arguments: [String] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            if word == "--" {
                arguments += words[(index + 1)...]
                break
            }
            let name = String(word.split(separator: "=", maxSplits: 1).first ?? "")
            if word.hasPrefix("-"), known.contains(name) {
                if name == word, valued.contains(word), index + 1 < words.count {
                    let value = words[index + 1]
                    options += value.hasPrefix("-") && word.hasPrefix("--") ? [word + "=" + value] : [word, value]
                    index += 1
                } else {
                    options.append(word)
                }
            } else {
                arguments.append(word)
            }
            index += 1
        }
        return (options, arguments)
    }

    /// Every option name `command` takes, long and short, as its help lists them.
    static func optionNames(of command: ParsableCommand.Type) -> Set<String> {
        let help = isRoot(command) ? Badge.helpMessage(includeHidden: true, columns: 10_000)
            : Badge.helpMessage(for: command, includeHidden: true, columns: 10_000)
        var names = longOptions(of: command)
        for line in help.split(separator: "\n") {
            let words = line.drop { $0 == " " }.split(separator: " ").prefix(4).map(String.init)
            names.formUnion(words.prefix { $0.hasPrefix("-") }.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) })
        }
        return names
    }

    /// The options of `command` that take a value (`--caption <text>`, `-o <file>`), as its help lists them.
    static func valuedOptions(of command: ParsableCommand.Type) -> Set<String> {
        let help = isRoot(command) ? Badge.helpMessage(includeHidden: true, columns: 10_000)
            : Badge.helpMessage(for: command, includeHidden: true, columns: 10_000)
        var names: Set<String> = []
        for line in help.split(separator: "\n") {
            let words = line.drop { $0 == " " }.split(separator: " ").prefix(4).map(String.init)
            let optionNames = words.prefix { $0.hasPrefix("-") }.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) }
            guard !optionNames.isEmpty, words.dropFirst(optionNames.count).first?.hasPrefix("<") == true else { continue }
            names.formUnion(optionNames)
        }
        return names
    }

    /// `word` as a shell reads it back: bare when it is plain, else in quotes.
    static func shellQuoted(_ word: String) -> String {
        if !word.isEmpty, word.allSatisfy({ $0.isLetter || $0.isNumber || "-_./=:@%+,".contains($0) }) { return word }
        if !word.contains(where: { "\"$`\\!".contains($0) }) { return "\"" + word + "\"" }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    static func isRoot(_ command: ParsableCommand.Type) -> Bool {
        ObjectIdentifier(command) == ObjectIdentifier(Badge.self)
    }

    /// Every long option `command` takes, as its help lists them (hidden ones too).
    static func longOptions(of command: ParsableCommand.Type) -> Set<String> {
        let help = isRoot(command) ? Badge.helpMessage(includeHidden: true, columns: 10_000)
            : Badge.helpMessage(for: command, includeHidden: true, columns: 10_000)
        var names: Set<String> = ["--help", "--version", "--generate-completion-script", "--experimental-dump-help"]
        for line in help.split(separator: "\n") {
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("-") else { continue }
            for word in trimmed.split(separator: " ").prefix(4) {
                let name = word.trimmingCharacters(in: CharacterSet(charactersIn: ",<>[]"))
                if name.hasPrefix("--"), name.count > 2 { names.insert(name) }
            }
        }
        return names
    }
}

/// The `badge` command as the shell completion scripts describe it: the same
/// subcommands, and the global options where they may also stand, before the
/// subcommand (`badge --store <Tab>` completes a directory). Only the scripts are
/// made from it; every command line is parsed by `Badge`.
struct CompletionRoot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "badge", abstract: Badge.configuration.abstract, version: BadgeMetadata.version,
        subcommands: Badge.configuration.subcommands)

    @OptionGroup var global: GlobalOptions
}

/// The `badge` command: turns a promise into one image and remembers the day
/// you committed to it.
struct Badge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "badge",
        abstract: "Turn a promise into a Promise Badge and remember the day you committed.",
        discussion: """
            Generate a badge from a promise with a backend (procedural drawing, an \
            imported picture, ...). The store keeps the one current badge, with its \
            commitment date inside the PNG, and the badges it replaced.

            Exit codes: 0 success, 1 failure (the current badge is unchanged), 64 usage error, \
            130 stopped with Ctrl-C (or a --choose cancelled with Esc), 143 stopped by SIGTERM.
            """,
        version: BadgeMetadata.version,
        subcommands: [
            GenerateCommand.self, ImportCommand.self, ShowCommand.self, HistoryCommand.self,
            RestoreCommand.self, BatchCommand.self, CardCommand.self, BackendsCommand.self, ConfigCommand.self, VerifyCommand.self, ExportCommand.self,
            PromptCommand.self, ServeCommand.self,
        ]
    )
}
