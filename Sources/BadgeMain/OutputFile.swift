import BadgeKit
import Foundation

/// Writes a command's output file only once the work is done and not
/// cancelled: Ctrl-C during a render leaves any earlier file as it was.
/// Every file a command writes goes through `OutputTarget`'s one policy:
/// `-` is standard output, a FIFO or a device is written into, a symbolic
/// link is followed, a regular file is replaced whole or not at all, and a
/// directory is an error. A PNG (an animated one too) is inflated by zlib
/// first (`PNGDataCheck`), as every badge is before it is stored: a damaged
/// one is never written.
enum OutputFile {
    static func write(_ data: Data, to target: OutputTarget, what: String = "the file") async throws {
        try Task.checkCancellation()
        try await BlockingExecutor.run {
            if data.starts(with: PNG.signature) { try PNGDataCheck.verify(data) }
            try OutputWriter().write(data, to: target, what: what)
        }
    }

    static func target(_ argument: String, _ context: CommandContext) -> OutputTarget {
        OutputTarget(argument, relativeTo: context.environment.workingDirectory)
    }

    static func url(_ path: String, _ context: CommandContext) -> URL {
        URL.file(path, relativeTo: context.environment.workingDirectory)
    }

    /// Says what was written: on standard output, unless the file went there.
    static func report(_ text: String, for target: OutputTarget) {
        if target == .standardOutput { Terminal.note(text) } else { Terminal.out(text) }
    }
}
