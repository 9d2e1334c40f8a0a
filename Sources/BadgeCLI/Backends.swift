import BadgeKit
import Canvas
import CurlTransport
import ExecBackend
import ImportBackend
import ProceduralBackend
import RemoteBackend

/// The one place where badge's built-in backends are registered. A new
/// compiled backend adds its line here (see docs/EXTENDING.md).
enum Backends {
    static func registry(limits: ImageLimits) -> BackendRegistry {
        var registry = BackendRegistry()
        ProceduralGenerator.register(in: &registry)
        ImportGenerator.register(in: &registry, limits: limits)
        RemoteGenerator.register(in: &registry)
        ExecGenerator.register(in: &registry, limits: limits)
        return registry
    }

    /// HTTP for remote backends; libcurl starts only when a request is made.
    static let http: any HTTPTransport = CurlTransport()

    /// Full decoding of untrusted images, after the intake's header checks.
    static let decoder: any ImageDecoding = GDImageDecoder()
}
