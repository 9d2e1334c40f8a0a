import ArgumentParser
import BadgeKit
import Foundation

struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show the current badge and the day you committed to it.",
        discussion: """
            On a terminal the badge itself is drawn above its details: with the kitty \
            graphics protocol, iTerm2's inline images or sixels where the terminal has \
            them, in Unicode symbols otherwise. Nothing is drawn when standard output is \
            not a terminal, with --json, or with --no-image.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print the details only; do not draw the badge.")
    var noImage = false

    @Flag(help: "Print the result as JSON.")
    var json = false

    func run() async throws {
        let context = try global.makeContext()
        // Drawn, the details and the picture are one file's, read through one descriptor;
        // otherwise only the metadata at the file's start is read.
        let drawing = !json && !noImage && Terminal.stdoutIsTerminal
        let found: (badge: StoredBadge, png: Data?)? = drawing
            ? try context.store.currentWithBytes().map { ($0.badge, $0.png) }
            : try context.store.current().map { ($0, nil) }
        guard let (badge, png) = found else {
            throw BadgeError(.notFound, "there is no badge yet", path: context.store.badgeURL.path,
                             hint: "make one with: badge generate \"A pair of dumbbells\"")
        }
        let info = BadgeInfo(badge)
        if json {
            try Terminal.json(info)
            return
        }
        if let png {
            await BadgePicture.draw(png, environment: context.environment)
        }
        Terminal.out(info.text)
    }
}

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List the badges the current one replaced, the most recently replaced first."
    )

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print the result as JSON.")
    var json = false

    func run() async throws {
        let context = try global.makeContext()
        let stored = try context.store.history()
        if json {
            try Terminal.json(stored.map(BadgeInfo.init))
            return
        }
        if stored.isEmpty {
            Terminal.note("No earlier badges. Each new badge keeps the one it replaces here (up to \(context.store.historyLimit)).")
            return
        }
        // id, replaced, committed (each with its zone), backend, promise: each column padded to its widest cell,
        // whatever the ids and backend names.
        var rows: [[String]] = []
        for entry in stored {
            let m = entry.metadata
            let zone = TimeZone(identifier: m.timeZone) ?? .current
            // Each time says its zone: the replacement is in this machine's, the commitment in the zone it was made in.
            rows.append([m.id, "replaced " + (entry.replacedAt.map { BadgeInfo.dayTimeAndZone($0, in: .current) } ?? "-"),
                         "committed " + BadgeInfo.dayTimeAndZone(m.commitmentDate, in: zone), m.backend,
                         m.promise + (m.captionDrawn.map { " (\($0))" } ?? "")])
        }
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        // On a terminal a row longer than its width goes on under the id, broken at spaces.
        let columns = Terminal.columns(of: STDOUT_FILENO)
        for row in rows {
            let padded = (0..<4).map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
            Terminal.out(Terminal.wrapped(Terminal.clean((padded + [row[4]]).joined(separator: "  ")), width: columns, indent: widths[0] + 2))
        }
    }
}

struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Make a badge from the history current again, with its commitment date."
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The badge's id, or a unique prefix of at least 4 characters (see 'badge history').",
              completion: .custom(Completions.historyIDs))
    var id: String

    @Flag(help: "Print the result as JSON.")
    var json = false

    func run() async throws {
        let context = try global.makeContext()
        let store = context.store
        let id = self.id
        let restored = try await BlockingExecutor.run { try store.restore(id: id) }
        if !restored.tightened.isEmpty { Terminal.note("badge: warning: " + BadgeStore.tightenedMessage(restored.tightened)) }
        let info = BadgeInfo(restored)
        if json { try Terminal.json(info) } else { Terminal.out("Restored your Promise Badge.\n" + info.text) }
    }
}

struct BackendsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backends",
        abstract: "List the configured backends, whether each can run now, and why not."
    )

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Also check that each remote endpoint answers and accepts its key (uses the network).")
    var probe = false

    @Flag(help: "Print the result as JSON.")
    var json = false

    struct Row: Encodable {
        var name: String
        var type: String
        var available: Bool
        var reason: String?
        var hint: String?
        var builtIn: Bool
        var isDefault: Bool
    }

    func run() async throws {
        let context = try global.makeContext()
        var rows: [Row] = []
        for config in context.config.backends {
            var row = Row(name: config.name, type: config.type, available: false, builtIn: config.isBuiltIn,
                          isDefault: config.name == context.config.defaults.backend)
            do {
                let instance = try context.registry.makeBackend(config, environment: context.environment)
                let availability: Availability
                if probe, let probing = instance.generator as? any ProbingGenerator {
                    availability = await probing.probe()
                } else {
                    availability = await instance.generator.availability()
                }
                switch availability {
                case .available: row.available = true
                case let .unavailable(reason, hint):
                    row.reason = reason
                    row.hint = hint
                }
            } catch let error as BadgeError {
                row.reason = error.message
                row.hint = error.hint
            }
            rows.append(row)
        }
        if json {
            try Terminal.json(rows)
            return
        }
        let nameWidth = rows.map(\.name.count).max() ?? 4
        let typeWidth = rows.map(\.type.count).max() ?? 4
        for row in rows {
            let mark = row.available ? "available" : "unavailable: \(row.reason ?? "unknown reason")"
            var line = row.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + "  "
                + row.type.padding(toLength: typeWidth, withPad: " ", startingAt: 0) + "  " + mark
            if row.isDefault { line += "  (default)" }
            if let hint = row.hint, !row.available { line += "\n" + String(repeating: " ", count: nameWidth + typeWidth + 4) + "hint: " + hint }
            Terminal.out(line)
        }
    }
}
