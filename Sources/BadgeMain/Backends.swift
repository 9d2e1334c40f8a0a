import BadgeKit
import Canvas
import CurlTransport
import ExecBackend
import ImportBackend
import ProceduralBackend
import RemoteBackend
import Synchronization

/// The one place where backends are registered: badge's own, then those
/// given to `BadgeMain.run(registering:)` (see docs/EXTENDING.md).
enum Backends {
    /// Set once, by `BadgeMain.run(registering:)`, before the command is parsed.
    static let extra = Mutex<[any RegisteringGenerator.Type]>([])

    static func registry(limits: ImageLimits) -> BackendRegistry {
        var registry = BackendRegistry()
        ProceduralGenerator.register(in: &registry)
        ImportGenerator.register(in: &registry, limits: limits)
        RemoteGenerator.register(in: &registry, limits: limits)
        ExecGenerator.register(in: &registry, limits: limits)
        for backend in extra.withLock({ $0 }) { backend.register(in: &registry) }
        return registry
    }

    /// HTTP for remote backends; libcurl starts only when a request is made.
    static let http: any HTTPTransport = CurlTransport()

    /// Full decoding of untrusted images, after the intake's header checks.
    static let decoder: any ImageDecoding = GDImageDecoder()
}
