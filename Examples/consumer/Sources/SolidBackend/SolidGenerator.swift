import BadgeKit
import Canvas
import Foundation

/// A badge of one colour: a disc on a white ground. The smallest backend that
/// does everything a backend must (docs/EXTENDING.md shows this file).
public struct SolidGenerator: RegisteringGenerator {
    public static let type = "solid"

    public var color: RGBA

    public init(color: RGBA) { self.color = color }

    /// Adds the `solid` type to a registry. The factory reads its options
    /// strictly, so a typo in the config is an error with file:line:column.
    public static func register(in registry: inout BackendRegistry) {
        registry.register(type, summary: "a disc of one colour") { config, _ in
            let options = config.options
            try options.allowOnly(["type", "color"])
            var color = RGBA(0x2E, 0x86, 0xDE)
            if let value = options.value("color") {
                guard let parsed = RGBA(hex: try value.string()) else {
                    throw value.error("expected a colour as \"#RRGGBB\"", hint: "e.g. \"#2E86DE\"")
                }
                color = parsed
            }
            return SolidGenerator(color: color)
        }
    }

    /// Nothing to install, no key, no server: always available.
    public func availability() async -> Availability { .available }

    public func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
        try request.validate()
        let color = self.color
        // Drawing and encoding block a thread: keep them off Swift's cooperative pool.
        let png = try await BlockingExecutor.run {
            let side = Double(request.size)
            let canvas = try Canvas(width: request.size, height: request.size, background: .white)
            canvas.fill(.circle(center: Point(side / 2, side / 2), radius: side * 0.42), with: .solid(color))
            return try PNGEncoder.encode(canvas)
        }
        let file = try workspace.write(png, to: "solid.png")
        return GeneratedImage(file: file, model: "solid 1")
    }
}
