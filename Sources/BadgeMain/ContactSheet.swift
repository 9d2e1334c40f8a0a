import BadgeKit
import Canvas
import Foundation

/// One picture of a batch's results, for a person to review a team's badges at a
/// glance (`badge batch --contact-sheet`): a PNG grid drawn with Canvas, each
/// badge captioned with its job's name, or an HTML page of the same.
struct ContactSheet {
    /// A job's result: its name, and how to read its badge (nil when none was made),
    /// read one at a time as the sheet is drawn.
    struct Entry: Sendable {
        var name: String
        var png: @Sendable () -> Data?
    }

    enum Format: String {
        case png, html
    }

    static let extensions = "png or html"

    /// The format `path`'s extension asks for, or nil.
    static func format(of path: String) -> Format? {
        Format(rawValue: URL(fileURLWithPath: path).pathExtension.lowercased())
    }

    /// The PNG and the HTML page draw the same thumbnails.
    static let largestThumbnail = 256
    static let smallestThumbnail = 48
    static let gap = 16
    static let captionSize = 15.0
    static let captionHeight = 30
    static let background = RGBA(246, 245, 242, 255)
    static let ink = RGBA(40, 40, 46, 255)
    static let faint = RGBA(150, 150, 156, 255)

    var entries: [Entry]
    /// The largest badge's side: no thumbnail is drawn larger.
    var largestBadge = ContactSheet.largestThumbnail

    /// The layout: `columns` across, `side`-pixel thumbnails, within Canvas's largest side.
    func layout() throws -> (columns: Int, rows: Int, side: Int) {
        let count = max(1, entries.count)
        let columns = min(count, max(1, Int(Double(count).squareRoot().rounded(.up))))
        let rows = (count + columns - 1) / columns
        let limit = Canvas.maxSide - Self.gap
        let side = min(Self.largestThumbnail, limit / columns - Self.gap, limit / rows - Self.gap - Self.captionHeight, largestBadge)
        guard side >= Self.smallestThumbnail else {
            throw BadgeError(.usage, "--contact-sheet: \(entries.count) badges do not fit one sheet of \(Canvas.maxSide) pixels a side",
                             hint: "make a sheet per shard (--shard) or per smaller manifest")
        }
        return (columns, rows, side)
    }

    /// A badge's thumbnail, `side` pixels square; nil when it cannot be read.
    static func thumbnail(_ png: Data, side: Int) -> GDImage? {
        guard let image = try? GDImage.decodePNG(png) else { return nil }
        return try? image.resized(width: side, height: side)
    }

    /// The PNG sheet. Blocking: call it off Swift's cooperative threads.
    func png() throws -> Data {
        let (columns, rows, side) = try layout()
        let width = Self.width(columns: columns, side: side)
        let height = Self.height(rows: rows, side: side)
        let canvas = try Canvas(width: width, height: height, background: Self.background)
        let face = try Font.caption().open()
        for (index, entry) in entries.enumerated() {
            let x = Self.gap + (index % columns) * (side + Self.gap)
            let y = Self.gap + (index / columns) * (side + Self.captionHeight + Self.gap)
            if let png = entry.png(), let thumbnail = Self.thumbnail(png, side: side) {
                canvas.withMutablePixels { pixels in
                    for row in 0..<side {
                        for column in 0..<side {
                            let p = thumbnail.pixel(column, row), i = ((y + row) * width + x + column) * 4
                            // Over the sheet's background, so a transparent corner shows it.
                            let a = Int(p.a), back = Self.background
                            pixels[i] = UInt8((Int(p.r) * a + Int(back.r) * (255 - a)) / 255)
                            pixels[i + 1] = UInt8((Int(p.g) * a + Int(back.g) * (255 - a)) / 255)
                            pixels[i + 2] = UInt8((Int(p.b) * a + Int(back.b) * (255 - a)) / 255)
                            pixels[i + 3] = 255
                        }
                    }
                }
            } else {
                canvas.fill(.roundedRect(x: Double(x), y: Double(y), width: Double(side), height: Double(side), radius: 12),
                            with: .solid(RGBA(226, 224, 220, 255)))
                let text = try face.render("not made", pixelSize: Self.captionSize)
                canvas.draw(text, color: Self.faint, x: x + (side - text.box.width) / 2, y: y + (side - text.box.height) / 2)
            }
            let caption = try fitted(OutsideText.printable(entry.name), face: face, width: side)
            canvas.draw(caption, color: Self.ink, x: x + (side - caption.box.width) / 2, y: y + side + 8)
        }
        return try PNGEncoder.encode(canvas)
    }

    static func width(columns: Int, side: Int) -> Int { gap + columns * (side + gap) }
    static func height(rows: Int, side: Int) -> Int { gap + rows * (side + captionHeight + gap) }

    /// `text` rendered, cut with an ellipsis until it fits `width` pixels.
    private func fitted(_ text: String, face: FontFace, width: Int) throws -> TextImage {
        var shown = text.isEmpty ? "(unnamed)" : text
        var rendered = try face.render(shown, pixelSize: Self.captionSize)
        while rendered.box.width > width, shown.count > 1 {
            shown = String(shown.dropLast(shown.hasSuffix("…") ? 2 : 1)) + "…"
            rendered = try face.render(shown, pixelSize: Self.captionSize)
        }
        return rendered
    }

    /// The HTML page: every badge as an embedded thumbnail, its job's name escaped.
    func html(title: String) throws -> Data {
        let (_, _, side) = try layout()
        var page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(Self.escaped(title))</title>
            <style>
            body { margin: 24px; background: #f6f5f2; color: #28282e; font: 15px/1.3 system-ui, sans-serif; }
            h1 { font-size: 20px; font-weight: 600; }
            main { display: grid; grid-template-columns: repeat(auto-fill, minmax(\(side)px, 1fr)); gap: 16px; }
            figure { margin: 0; text-align: center; }
            img, .missing { width: 100%; max-width: \(side)px; aspect-ratio: 1; border-radius: 12px; }
            .missing { display: flex; align-items: center; justify-content: center; background: #e2e0dc; color: #96969c; margin: auto; }
            figcaption { margin-top: 6px; overflow-wrap: anywhere; }
            </style></head>
            <body><h1>\(Self.escaped(title))</h1>
            <main>

            """
        for entry in entries {
            let name = Self.escaped(OutsideText.printable(entry.name))
            if let png = entry.png(), let thumbnail = Self.thumbnail(png, side: side), let data = try? thumbnail.pngData() {
                page += "<figure><img src=\"data:image/png;base64,\(data.base64EncodedString())\" alt=\"\(name)\"><figcaption>\(name)</figcaption></figure>\n"
            } else {
                page += "<figure><div class=\"missing\">not made</div><figcaption>\(name)</figcaption></figure>\n"
            }
        }
        page += "</main></body></html>\n"
        return Data(page.utf8)
    }

    /// `text` safe in HTML text and in a quoted attribute.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
