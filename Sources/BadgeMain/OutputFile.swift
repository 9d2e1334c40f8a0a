import BadgeKit
import Foundation

/// Writes a command's output file whole or not at all (a temporary file
/// beside it, fsynced and renamed), only once the work is done and not
/// cancelled: Ctrl-C during a render leaves any earlier file as it was.
/// A PNG (an animated one too) is inflated by zlib first (`PNGDataCheck`),
/// as every badge is before it is stored: a damaged one is never written.
enum OutputFile {
    static func write(_ data: Data, to url: URL) async throws {
        try Task.checkCancellation()
        try await BlockingExecutor.run {
            if data.starts(with: PNG.signature) { try PNGDataCheck.verify(data) }
            try writeNow(data, to: url)
        }
    }

    private static func writeNow(_ data: Data, to url: URL) throws {
        do {
            try AtomicFileWriter().write(data, to: url)
        } catch {
            throw BadgeError(.io, "cannot write the file", path: url.path, cause: error.description,
                             hint: "check that the directory exists and is writable")
        }
    }

    static func url(_ path: String, _ context: CommandContext) -> URL {
        URL(fileURLWithPath: path, relativeTo: context.environment.workingDirectory).standardizedFileURL
    }
}
