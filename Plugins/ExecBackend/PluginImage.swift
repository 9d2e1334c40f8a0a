#if canImport(Glibc)
import Glibc
#endif
import BadgeKit
import Foundation

/// The image a plugin wrote, read back with suspicion: only the output path
/// badge gave it, opened once (O_NOFOLLOW|O_NONBLOCK: never through a
/// symbolic link, never waiting on a FIFO), checked by its descriptor (a
/// regular file, no larger than the intake's limit), read from that
/// descriptor, and a PNG by its signature, as the exec protocol asks. The bytes
/// are handed on, so nothing reads the path a second time; the pipeline's intake
/// checks them.
enum PluginImage {
    static func read(_ output: URL, limits: ImageLimits, backend: String) async throws -> Data {
        let data = try await BlockingExecutor.run { try readRegularFile(output, limit: limits.maxFileBytes, backend: backend) }
        let what: String
        switch ImageIntake.sniff(data) {
        case .accepted(.png): return data
        case let .accepted(format): what = "a \(format.rawValue.uppercased()) image"
        case let .refused(name): what = name
        case .unknown:
            let start = data.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")
            what = data.isEmpty ? "an empty file" : "not an image (\(data.count) bytes starting \(start))"
        }
        throw BadgeError(.unsupportedFormat, "the plugin's image was refused: it is \(what), not a PNG", backend: backend,
                         path: output.lastPathComponent, hint: "the plugin must write a PNG image to the request's output path")
    }

    static func readRegularFile(_ url: URL, limit: Int, backend: String) throws -> Data {
        func refuse(_ message: String, _ code: BadgeError.Code = .generationFailed, hint: String? = nil) -> BadgeError {
            BadgeError(code, message, backend: backend, path: url.path,
                       hint: hint ?? "write the PNG to the path in the request's \"output\" field (also $BADGE_OUTPUT), and nowhere else")
        }
        do {
            return try RegularFile.contents(of: url.path, followSymlinks: false, limit: limit)
        } catch .system(_, ENOENT) {
            throw refuse("the plugin reported success but wrote no image at its output path")
        } catch .system(_, ELOOP) {
            throw refuse("the plugin's output is a symbolic link; badge reads only a file written there")
        } catch .notRegular(let kind) {
            throw refuse("the plugin's output is \(kind), not a regular file")
        } catch let .tooLarge(size, limit) {
            throw refuse("the plugin's image is \(size) bytes; the limit is \(limit)", .imageTooLarge,
                         hint: "raise intake.maxFileBytes in the configuration, or make the plugin write a smaller image")
        } catch {
            throw refuse("cannot read the plugin's image: \(error)")
        }
    }
}
