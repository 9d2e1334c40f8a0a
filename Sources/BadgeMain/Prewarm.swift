import BadgeKit
import Canvas
import ProceduralBackend

/// What the command on the command line will need from slow libraries,
/// loaded on a spare thread while the arguments are parsed and the
/// configuration read (~6 ms of one core while the other would idle): the
/// caption font and the core count (Foundation reads it from the cgroup's
/// files) for the commands that draw, the procedural backend's word tables
/// for those that read promises, and the time zone and long-date formatter
/// for those that stamp and report a badge. A guess from the words alone;
/// when it is wrong, a core did some work for nothing.
enum Prewarm {
    struct Plan: Equatable {
        /// The caption font and the core count.
        var drawing = false
        /// The procedural backend's word tables.
        var reading = false
        /// The time zone and the long-date formatter of the user's locale.
        var report = false
    }

    /// The plan for `arguments` (without the program's name): the command is
    /// the first word that names one, after any global options.
    static func plan(for arguments: [String]) -> Plan {
        // An array, not a set literal: the first Set<String> costs ~0.4 ms of metadata.
        guard let command = arguments.first(where: { ["generate", "import", "batch", "card"].contains($0) }) else { return Plan() }
        return Plan(drawing: true, reading: command == "generate" || command == "batch", report: command == "generate" || command == "import")
    }

    /// One thread, the drawing's needs first: with two, three threads would
    /// share two cores, and the parsing they are meant to run beside waited
    /// up to 4 ms for a core. For `generate` (1024 px, 2 cores): the font
    /// ~1.7 ms, the word tables ~1.7 ms (the real promise is then read in
    /// 0.5 ms of CPU rather than 3.7, under perf), the report ~2 ms; done
    /// about when the parsing is.
    static func start(for arguments: [String]) {
        let plan = plan(for: arguments)
        guard plan.drawing || plan.report else { return }
        _ = BackgroundValue {
            if plan.drawing {
                _ = try? Font.caption()
                _ = ImageThreads.processorCount
            }
            if plan.reading {
                ProceduralGenerator.prepareReading()
            }
            if plan.report {
                BadgeMetadata.warmUpReport(locale: UserLocale.current)
            }
        }
    }
}
