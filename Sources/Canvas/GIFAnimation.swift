import BadgeKit
import CGD
import Foundation

/// An animated GIF through libgd's `gdImageGifAnim*`. Every frame gets its
/// own 256-colour palette (a local colour map), chosen by gd's quantiser, so
/// a frame that is mostly the pale back face is not stuck with the front's
/// colours.
public enum GIFAnimation {
    /// `delays` are in hundredths of a second, one per frame. `loops` 0 repeats forever.
    public static func encode(_ frames: [Canvas], delays: [Int], loops: Int = 0) throws -> Data {
        guard let first = frames.first, frames.count == delays.count else {
            throw BadgeError(.generationFailed, "an animated GIF needs at least one frame and one delay per frame")
        }
        var output = Data()
        func append(_ bytes: UnsafeMutableRawPointer?, _ size: Int32, _ step: String) throws {
            guard let bytes, size > 0 else {
                throw LibGD.failure(BadgeError(.generationFailed, "libgd could not encode the animated GIF (\(step))"))
            }
            defer { badge_gdFree(bytes) }
            output.append(Data(bytes: bytes, count: Int(size)))
        }
        let head = try palette(first)
        var size: Int32 = 0
        try append(badge_gdImageGifAnimBeginPtr(head, &size, 0, Int32(loops)), size, "header")
        badge_gdImageDestroy(head)
        // With the previous frame at hand gd stores only the rectangle that
        // changed, with unchanged pixels transparent: a much smaller file.
        var previous: gdImagePtr?
        defer { if let previous { badge_gdImageDestroy(previous) } }
        for (frame, delay) in zip(frames, delays) {
            let image = try palette(frame)
            let added = badge_gdImageGifAnimAddPtr(image, &size, 1, 0, 0, Int32(max(2, delay)), Int32(gdDisposalNone), previous)
            if let previous { badge_gdImageDestroy(previous) }
            previous = image
            try append(added, size, "frame")
        }
        try append(badge_gdImageGifAnimEndPtr(&size), size, "trailer")
        return output
    }

    /// A palette copy of an opaque frame. Without dithering: a dither pattern
    /// that changes from frame to frame shimmers.
    private static func palette(_ canvas: Canvas) throws -> gdImagePtr {
        let truecolor = try GDImage(canvas)
        guard let image = badge_gdImageCreatePaletteFromTrueColor(truecolor.pointer, 0, 256) else {
            throw LibGD.failure(BadgeError(.generationFailed, "libgd could not reduce a frame to 256 colours", hint: "is memory short?"))
        }
        return image
    }
}
