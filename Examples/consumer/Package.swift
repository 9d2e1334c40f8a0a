// swift-tools-version:6.0
import PackageDescription

// A package of its own that builds its own `badge` with one more backend: what
// docs/EXTENDING.md describes first. It depends on badge by version, as any
// package would; scripts/check-consumer.sh (make test) builds it against a
// tagged copy of this repository, whose URL it passes in BADGE_GIT_URL.
let badgeURL = Context.environment["BADGE_GIT_URL"] ?? "https://github.com/badge-project/badge.git"

let package = Package(
    name: "solid-badge",
    products: [
        .executable(name: "solid-badge", targets: ["solid-badge"]),
    ],
    dependencies: [
        .package(url: badgeURL, from: "0.3.0"),
    ],
    targets: [
        .target(
            name: "SolidBackend",
            dependencies: [
                .product(name: "BadgeKit", package: "badge"),
                .product(name: "Canvas", package: "badge"),
            ]
        ),
        .executableTarget(
            name: "solid-badge",
            dependencies: ["SolidBackend", .product(name: "BadgeMain", package: "badge")]
        ),
        .testTarget(
            name: "SolidBackendTests",
            dependencies: [
                "SolidBackend",
                .product(name: "BadgeKit", package: "badge"),
                .product(name: "BadgeKitTesting", package: "badge"),
                .product(name: "Canvas", package: "badge"),
                .product(name: "CurlTransport", package: "badge"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
