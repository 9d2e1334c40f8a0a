import BadgeCard
import NIOCore

/// The studio page: plain HTML, CSS and JavaScript (the files in Studio/),
/// served from the binary, loading nothing from another origin. The card
/// (its springs, snap and wiggle) is `badge card html`'s own script and style, served beside it.
enum StudioAssets {
    /// A file of the studio's as it is served: its bytes, type and tag.
    struct File: Sendable {
        let name: String
        let type: String
        let body: ByteBuffer
        /// A strong tag of the bytes (64-bit FNV-1a): it changes whenever they do.
        let etag: String

        init(_ name: String, type: String, _ text: String) {
            self.name = name
            self.type = type
            body = ByteBuffer(string: text)
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            let hex = String(hash, radix: 16)
            etag = "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
        }
    }

    static let pageFile = File("index.html", type: "text/html; charset=utf-8", page)
    /// What `/studio/NAME` serves; the card's are `badge card html`'s own.
    static let files = [
        File("studio.js", type: "text/javascript; charset=utf-8", script),
        File("studio.css", type: "text/css; charset=utf-8", style),
        File("card.js", type: "text/javascript; charset=utf-8", CardScript.script),
        File("card.css", type: "text/css; charset=utf-8", CardScript.style),
        File("icon.svg", type: "image/svg+xml", icon),
    ]

    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
        + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// The answer to `/?token=...`: a token in the query is sent to the
    /// server, logged by proxies and kept in the browser's history.
    static let tokenInQuery = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Promise Badge studio</title></head>
        <body><main><h1>The token goes after #, not ?</h1>
        <p>Open the address <code>badge serve</code> printed when it started: it ends in <code>#token=</code> and a long key,
        which the browser keeps to itself rather than send it anywhere.</p></main></body></html>

        """

    /// The files in Studio/, embedded in the binary at build time (Package.swift).
    static let page = String(decoding: PackageResources.index_html, as: UTF8.self)
    /// A medal: a gold disc in a darker rim, with a star.
    static let icon = String(decoding: PackageResources.icon_svg, as: UTF8.self)
    static let style = String(decoding: PackageResources.studio_css, as: UTF8.self)
    static let script = String(decoding: PackageResources.studio_js, as: UTF8.self)
}
