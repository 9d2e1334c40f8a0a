#if canImport(Glibc)
import Glibc
#endif
import BadgeKit
import Foundation

/// The image a plugin wrote, read back with suspicion: only the output path
/// badge gave it, only a regular file (never through a symbolic link), no
/// larger than the intake's limit, and a PNG by its bytes.
enum PluginImage {
    static func read(_ output: URL, limits: ImageLimits, backend: String) async throws -> ImageIntake.Header {
        let data = try await BlockingExecutor.run { try readRegularFile(output, limit: limits.maxFileBytes, backend: backend) }
        do {
            return try ImageIntake(limits: limits).inspect(data, accepting: [.png], source: output.lastPathComponent)
        } catch let error as BadgeError {
            var error = error.attributed(to: backend)
            error.message = "the plugin's image was refused: " + error.message
            if error.hint == nil { error.hint = "the plugin must write a PNG image to the request's output path" }
            throw error
        }
    }

    static func readRegularFile(_ url: URL, limit: Int, backend: String) throws -> Data {
        func refuse(_ message: String, _ code: BadgeError.Code = .generationFailed, hint: String? = nil) -> BadgeError {
            BadgeError(code, message, backend: backend, path: url.path,
                       hint: hint ?? "write the PNG to the path in the request's \"output\" field (also $BADGE_OUTPUT), and nowhere else")
        }
        var info = stat()
        guard lstat(url.path, &info) == 0 else {
            throw refuse("the plugin reported success but wrote no image at its output path")
        }
        if info.st_mode & S_IFMT == S_IFLNK { throw refuse("the plugin's output is a symbolic link; badge reads only a file written there") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw refuse("the plugin's output is not a regular file") }
        guard Int(info.st_size) <= limit else {
            throw refuse("the plugin's image is \(info.st_size) bytes; the limit is \(limit)", .imageTooLarge,
                         hint: "raise intake.maxFileBytes in the configuration, or make the plugin write a smaller image")
        }
        // O_NOFOLLOW: a link swapped in after the lstat is refused too.
        let fd = open(url.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw refuse("cannot open the plugin's image: \(BadgeError.errnoDescription(errno))") }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        let data = (try? handle.read(upToCount: limit + 1)) ?? Data()
        guard data.count <= limit else {
            throw refuse("the plugin's image grew past the limit of \(limit) bytes while badge read it", .imageTooLarge)
        }
        return data
    }
}
