import Foundation

/// A single HTML file that shows the badge as the app's card: it turns with
/// the finger, commits past 35% of its width with the snap and wiggle, and
/// springs back short of it. Everything is inline (both faces as data: URIs,
/// the style, the script), so the page works offline, from a file or any
/// static host.
package struct CardPage: Sendable {
    package var front: Data
    /// `image/png`, or `image/svg+xml` for a front drawn as vectors.
    package var frontType: String
    package var back: Data
    package var promise: String
    package var date: String

    /// `front` (a PNG, or an SVG with `frontType` "image/svg+xml") and `back`
    /// (a PNG) are the faces; `promise` and `date` become the faces'
    /// alternative text and the page's title.
    package init(front: Data, frontType: String = "image/png", back: Data, promise: String, date: String) {
        self.front = front
        self.frontType = frontType
        self.back = back
        self.promise = promise
        self.date = date
    }

    package static let fileName = "index.html"

    package var html: String {
        Self.fill(Self.template, [
            "title": Self.escape("Promise Badge: \(promise)"),
            "promise": Self.escape(promise),
            "frontAlt": Self.escape("Promise Badge: \(promise)"),
            "backAlt": Self.escape("\(BackFace.label) \(date)"),
            "style": CardScript.style,
            "script": CardScript.script,
            "front": "data:\(frontType);base64," + front.base64EncodedString(),
            "back": "data:image/png;base64," + back.base64EncodedString(),
        ])
    }

    /// Replaces each `{{name}}` in one pass, so text a user wrote (the
    /// promise) can never be taken for a placeholder.
    static func fill(_ template: String, _ values: [String: String]) -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            out += rest[..<open.lowerBound]
            let name = String(rest[open.upperBound..<close.lowerBound])
            out += values[name] ?? String(rest[open.lowerBound..<close.upperBound])
            rest = rest[close.upperBound...]
        }
        return out + rest
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static let template = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
        <title>{{title}}</title>
        <style>{{style}}</style>
        </head>
        <body>
        <main>
          <div class="card" id="card" role="button" tabindex="0" aria-label="Promise Badge. Drag, tap, or press Space or the arrow keys to turn it over." aria-pressed="false">
            <img class="face front" src="{{front}}" alt="{{frontAlt}}" draggable="false">
            <img class="face back" src="{{back}}" alt="{{backAlt}}" draggable="false" hidden>
          </div>
          <p class="promise">{{promise}}</p>
          <p class="hint">Drag it, tap it, or press Space or an arrow key to turn it over.</p>
        </main>
        <script>{{script}}</script>
        </body>
        </html>

        """
}
