import BadgeKit
import Canvas
import ImportBackend
import ProceduralBackend

/// The one place where badge's built-in backends are registered. A new
/// compiled backend adds its line here (see docs/EXTENDING.md).
enum Backends {
    static func registry(limits: ImageLimits) -> BackendRegistry {
        var registry = BackendRegistry()
        ProceduralGenerator.register(in: &registry)
        ImportGenerator.register(in: &registry, limits: limits)
        return registry
    }

    /// Full decoding of untrusted images, after the intake's header checks.
    static let decoder: any ImageDecoding = GDImageDecoder()
}
