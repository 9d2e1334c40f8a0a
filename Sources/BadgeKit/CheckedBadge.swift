import Foundation

/// A badge ready to be kept: an image the intake admitted, with its metadata
/// stamped into it, whose stamped bytes an independent decoder inflated in
/// full (`PNGDataCheck`). The last stage before the store: ``BadgeStore/commit(_:)``
/// takes nothing else, and the pipeline writes nothing else to a file.
///
/// `png` and `metadata` are read-only, and `png` is `metadata` stamped into
/// the admitted image's bytes: reading its text chunks back gives `metadata`.
///
/// Only ``init(stamping:into:)`` makes one, and it is in this file with the
/// check it runs. Swift has no friend access, so the rule is held by access
/// control: it is the type's only initialiser (declaring it suppresses the
/// memberwise one), and the properties' setters are `private`, so no
/// initialiser written in another file, even an extension inside BadgeKit,
/// can assign them. Its input is an `AdmittedImage`, which only the intake
/// makes. So the road from a request to the store is
/// ``GeneratedImage`` → `AdmittedImage` → `CheckedBadge` → the store.
public struct CheckedBadge: Sendable {
    /// The stamped PNG, as the store or the file receives it.
    public private(set) var png: Data
    /// What the PNG's text chunks say.
    public private(set) var metadata: BadgeMetadata

    /// Stamps `metadata` into `image` and checks the result with
    /// `PNGDataCheck`; throws `.invalidImage` when the image data does not
    /// inflate to what the header promises. An image libdeflate inflated while
    /// this process encoded it (`AdmittedImage.inflated`) is compared with
    /// what was inflated instead, and inflated again only if it differs.
    /// Blocking (one inflate of the image data, or a comparison of it): call
    /// it through ``BlockingExecutor`` from async code.
    package init(stamping metadata: BadgeMetadata, into image: AdmittedImage) throws {
        let stamped = try metadata.stamp(into: image.png)
        if image.inflated?.vouches(for: stamped) != true {
            try PNGDataCheck.verify(stamped)
        }
        self.png = stamped
        self.metadata = metadata
    }
}
