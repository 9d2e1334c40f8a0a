import BadgeKit
import Foundation

/// The user's picture (`--source`) as it may leave the machine: read once from
/// a checked descriptor, passed through the intake (size, format, pixel
/// limits), decoded with its EXIF orientation applied, and re-encoded as a
/// square PNG no larger than the model's size. Only those pixels travel: no
/// EXIF (GPS included), no other metadata, no oversized upload. The badge
/// records the original file's sha256, never its path.
struct SourcePicture: Sendable {
    /// The PNG that is uploaded.
    var png: Data
    /// Its side in pixels.
    var side: Int
    /// The sha256 of the file as the user gave it, in hex.
    var sha256: String

    /// Reads and prepares `source` ("-" is standard input). Everything that can
    /// be refused is refused here, before any request is made.
    static func prepare(
        _ source: String, side: Int, limits: ImageLimits, decoder: (any ImageDecoding)?, workingDirectory: URL,
        backend: String, readStandardInput: @escaping @Sendable (Int) throws -> Data
    ) async throws -> SourcePicture {
        guard let decoder else {
            throw BadgeError(.unsupportedFormat, "nothing in this build of badge can decode the source picture", backend: backend,
                             hint: "use the badge command line, which decodes PNG, JPEG, GIF and WebP")
        }
        // Reading, the intake's inspection and the hash (all of a file that may
        // be tens of megabytes) run on a thread of badge's, never on Swift's
        // cooperative pool.
        let origin = source == "-" ? "standard input" : BadgeConfig.resolvePath(source, relativeTo: workingDirectory).path
        let data: Data
        let header: ImageIntake.Header
        let sha256: String
        do {
            (data, header, sha256) = try await BlockingExecutor.run {
                let data: Data
                if source == "-" {
                    data = try readStandardInput(limits.maxFileBytes + 1)
                    if data.count > limits.maxFileBytes {
                        throw BadgeError(.imageTooLarge, "the source picture on standard input is larger than \(limits.maxFileBytes) bytes",
                                         hint: "use a smaller picture, or raise intake.maxFileBytes in the configuration")
                    }
                } else {
                    data = try RegularFile.picture(at: origin, limit: limits.maxFileBytes)
                }
                let header = try ImageIntake(limits: limits).inspect(data, accepting: Set(ImageFormat.allCases), source: origin)
                return (data, header, try BatchHash.sha256(data))
            }
        } catch let error as BadgeError {
            throw error.attributed(to: backend)
        }
        let png: Data
        // Ctrl-C ends a long decode (a large photo) at once.
        let stop = DecodeStop()
        do {
            png = try await withTaskCancellationHandler {
                try await decoder.normalized(data, header: header, side: side, stop: stop)
            } onCancel: { stop.stop() }
        } catch let error as BadgeError {
            var error = error.attributed(to: backend)
            if error.path == nil { error.path = origin }
            throw error
        }
        return SourcePicture(png: png, side: side, sha256: sha256)
    }

    /// Standard input, at most `limit` bytes.
    @Sendable static func readStandardInput(_ limit: Int) throws -> Data {
        (try FileHandle.standardInput.read(upToCount: limit)) ?? Data()
    }
}
