import BadgeKit
import Canvas

/// What the command on the command line will need from slow libraries,
/// loaded on spare threads while the arguments are parsed and the
/// configuration read (~6 ms of one core while the other would idle): the
/// caption font and the core count (Foundation reads it from the cgroup's
/// files) for the commands that draw, and the time zone and long-date
/// formatter for those that stamp and report a badge. A guess from the words
/// alone; when it is wrong, a core did some work for nothing.
enum Prewarm {
    static func start(for arguments: [String]) {
        let drawing: Set = ["generate", "import", "batch", "card"]
        guard let command = arguments.dropFirst().first(where: { drawing.contains($0) }) else { return }
        _ = BackgroundValue {
            _ = try? Font.caption()
            _ = Canvas.defaultDrawingThreads
        }
        if command == "generate" || command == "import" {
            _ = BackgroundValue { BadgeMetadata.warmUpReport(locale: UserLocale.current) }
        }
    }
}
