import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Testing

/// Every style at the largest size, 4096 px, through the binary that ships:
/// the size and the corners a user gets (transparent when round, opaque for
/// a tile), a whole badge in the store's format. The largest tile with its
/// grain is also drawn in process by ProceduralBackendTests.
@Suite(.threadsOfTheirOwn, .needsTheReleaseBinary)
struct LargestBadgeTests {
    @Test(arguments: ["medal", "tile", "flat", "sketch"])
    func everyStyleAtTheLargestSize(style: String) async throws {
        let s = try Sandbox()
        let output = s.root.appendingPathComponent("\(style).png")
        let result = try await s.run(["generate", "--size", "4096", "--style", style, "--seed", "3", "--output", output.path,
                                      style == "tile" ? "Drink more water, grainy, bright" : "Drink more water"], timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        let data = try Data(contentsOf: output)
        #expect(try BadgeMetadata.read(from: output)?.size == 4096)
        if style == "tile" { #expect(data.count > ImageLimits.default.maxFileBytes, "the grain is incompressible: \(data.count) bytes") }
        let decoded = try GDImage.decodePNG(data, limits: ImageLimits.default.admittingDrawing(side: 4096))
        #expect(decoded.width == 4096 && decoded.height == 4096)
        if style == "tile" { #expect(decoded.pixel(1, 1).a == 255) } else { #expect(decoded.pixel(1, 1).a == 0) }
        #expect(decoded.pixel(2048, 2048).a == 255)
    }
}
