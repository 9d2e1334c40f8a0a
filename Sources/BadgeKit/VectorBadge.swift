import Foundation

/// A backend that can make its badge as vectors too: an SVG document of the
/// very picture its PNG holds, sharp at any size. Backends that make rasters
/// only (a model's image, an imported photo, a plugin's PNG) are not one, and
/// an SVG asked of them is refused.
public protocol VectorGenerator: BadgeGenerator {
    /// The badge `request` makes, as a document to be written with the
    /// metadata the pipeline stamps. Honours task cancellation.
    func generateVector(_ request: BadgeRequest) async throws -> VectorImage
}

/// An SVG badge before its metadata is stamped in.
public struct VectorImage: Sendable {
    /// Who drew it, as `GeneratedImage.model` ("art-engine 6").
    public var model: String?
    public var seed: UInt64?
    /// What the backend reports, as `GeneratedImage.extra`.
    public var extra: [String: String]
    /// The document, with the badge's metadata entries (keyword, text) in its `<metadata>`.
    public var document: @Sendable (_ metadata: [(keyword: String, text: String)]) -> Data

    public init(model: String?, seed: UInt64?, extra: [String: String],
                document: @escaping @Sendable (_ metadata: [(keyword: String, text: String)]) -> Data) {
        self.model = model
        self.seed = seed
        self.extra = extra
        self.document = document
    }
}

/// The output formats of a badge written to a file.
public enum BadgeFormat: String, Sendable, CaseIterable {
    case png
    case svg

    /// The format a file name asks for by its extension; nil for any other.
    public init?(extensionOf path: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        self.init(rawValue: name[name.index(after: dot)...].lowercased())
    }

    public var mediaType: String { self == .png ? "image/png" : "image/svg+xml" }
}

/// Checks an SVG badge before it is written: one `<svg>` element, in UTF-8,
/// of the elements a badge is drawn with (shapes, paths, gradients, filters,
/// text-free groups, and the metadata's own), where every reference is to
/// one of its own definitions: no script, no style sheet, no event
/// attribute, no declaration, nothing from outside. A backend's SVG is
/// checked like any backend's PNG: a plugin's is hostile until it passes.
package enum SVGCheck {
    package static let maxBytes = 8 << 20

    static let elements: Set<String> = [
        "svg", "title", "desc", "metadata", "defs", "g", "use", "path", "circle", "ellipse", "rect", "line", "polyline", "polygon",
        "lineargradient", "radialgradient", "stop", "filter", "fegaussianblur", "fecolormatrix", "femorphology", "fecomposite",
        "feflood", "feoffset", "femerge", "femergenode", "clippath", "mask",
    ]

    /// Throws what is wrong and at which byte.
    package static func verify(_ data: Data, backend: String) throws {
        func refuse(_ what: String, at offset: Int?) -> BadgeError {
            BadgeError(.invalidImage, "the backend's SVG " + what + (offset.map { " (at byte offset \($0))" } ?? ""), backend: backend,
                       hint: "an SVG badge holds shapes, gradients and outlines only")
        }
        guard data.count <= maxBytes else { throw refuse("is \(data.count) bytes, more than \(maxBytes)", at: nil) }
        guard String(data: data, encoding: .utf8) != nil else { throw refuse("is not UTF-8", at: nil) }
        let b = Array(data)
        guard b.starts(with: Array("<svg ".utf8)) else { throw refuse("does not begin with its <svg> element", at: 0) }
        func lower(_ c: UInt8) -> UInt8 { (0x41...0x5A).contains(c) ? c | 0x20 : c }
        func isNameByte(_ c: UInt8) -> Bool {
            (0x61...0x7A).contains(lower(c)) || (0x30...0x39).contains(c) || c == 0x2D || c == 0x3A || c == 0x5F
        }
        func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }
        var i = 0, depth = 0, metadataDepth = 0, roots = 0
        while i < b.count {
            guard b[i] == 0x3C else {
                if depth == 0 && !isSpace(b[i]) { throw refuse("has text outside its <svg> element", at: i) }
                i += 1
                continue
            }
            let tagStart = i
            i += 1
            let closing = i < b.count && b[i] == 0x2F
            if closing { i += 1 }
            let nameStart = i
            while i < b.count, isNameByte(b[i]) { i += 1 }
            guard i > nameStart else { throw refuse("holds markup that is not an element (a declaration, a comment or an instruction)", at: tagStart) }
            let name = String(decoding: b[nameStart..<i].map(lower), as: UTF8.self)
            if !(elements.contains(name) || metadataDepth > 0) { throw refuse("holds a <\(name)> element", at: tagStart) }
            if closing {
                while i < b.count, isSpace(b[i]) { i += 1 }
                guard i < b.count, b[i] == 0x3E else { throw refuse("has a malformed closing tag", at: tagStart) }
                i += 1
                depth -= 1
                if metadataDepth > 0 { metadataDepth -= 1 }
                guard depth >= 0 else { throw refuse("closes more elements than it opens", at: tagStart) }
                continue
            }
            if depth == 0 { roots += 1 }
            guard roots == 1 else { throw refuse("holds more than one root element", at: tagStart) }
            // Attributes, up to the tag's end.
            var selfClosing = false
            while true {
                while i < b.count, isSpace(b[i]) { i += 1 }
                guard i < b.count else { throw refuse("ends inside a tag", at: tagStart) }
                if b[i] == 0x3E { i += 1; break }
                if b[i] == 0x2F, i + 1 < b.count, b[i + 1] == 0x3E { selfClosing = true; i += 2; break }
                let attributeStart = i
                while i < b.count, isNameByte(b[i]) { i += 1 }
                guard i > attributeStart else { throw refuse("has a malformed attribute", at: attributeStart) }
                let attribute = String(decoding: b[attributeStart..<i].map(lower), as: UTF8.self)
                while i < b.count, isSpace(b[i]) { i += 1 }
                guard i < b.count, b[i] == 0x3D else { throw refuse("has an attribute with no value", at: attributeStart) }
                i += 1
                while i < b.count, isSpace(b[i]) { i += 1 }
                guard i < b.count, b[i] == 0x22 || b[i] == 0x27 else { throw refuse("has an unquoted attribute", at: attributeStart) }
                let quote = b[i]
                i += 1
                let valueStart = i
                while i < b.count, b[i] != quote {
                    guard b[i] != 0x3C else { throw refuse("has a \"<\" in an attribute", at: i) }
                    i += 1
                }
                guard i < b.count else { throw refuse("ends inside an attribute", at: attributeStart) }
                let value = String(decoding: b[valueStart..<i].map(lower), as: UTF8.self)
                i += 1
                if attribute.hasPrefix("on") { throw refuse("has an event attribute (\(attribute))", at: attributeStart) }
                if attribute == "style" { throw refuse("has a style attribute", at: attributeStart) }
                if attribute == "href" || attribute.hasSuffix(":href") {
                    guard value.hasPrefix("#") else { throw refuse("refers to something outside it", at: attributeStart) }
                }
                var rest = Substring(value)
                while let range = rest.range(of: "url(") {
                    guard rest[range.upperBound...].hasPrefix("#") else { throw refuse("refers to something outside it", at: attributeStart) }
                    rest = rest[range.upperBound...]
                }
            }
            if !selfClosing {
                depth += 1
                if metadataDepth > 0 || name == "metadata" { metadataDepth += 1 }
            }
        }
        guard depth == 0, roots == 1 else { throw refuse("is not one whole <svg> element", at: nil) }
    }
}
