// swift-tools-version:6.0
import PackageDescription

// Arrows point one way: BadgeCLI -> Plugins/* -> {Canvas, CurlTransport} -> BadgeKit.
// BadgeKit imports nothing of ours; C libraries stay behind Canvas.
// FreeType's headers include one another as <freetype/...>, from here (upstream's install
// layout, Debian's too). pkg-config would find it, but a system-library target with a pkgConfig
// also links the library, and fontconfig and FreeType are opened on first use (CFontLoader).
let freeTypeIncludes = "-I/usr/include/freetype2"
let freeTypeHeaders = CSetting.unsafeFlags([freeTypeIncludes])

// The release binary starts fast (see the README's "Start-up"): lld with packed relative
// relocations, no exported symbols, and libstdc++ linked statically (linker/libstdc++.so says how).
let packageDirectory = String(#filePath.dropLast("/Package.swift".count))

let package = Package(
    name: "badge",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "badge", targets: ["BadgeCLI"]),
        .library(name: "BadgeKit", targets: ["BadgeKit"]),
        .library(name: "BadgeKitTesting", targets: ["BadgeKitTesting"]),
        .library(name: "Canvas", targets: ["Canvas"]),
        .library(name: "CurlTransport", targets: ["CurlTransport"]),
        .plugin(name: "BadgeCommandPlugin", targets: ["BadgeCommandPlugin"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // The exec backend runs plugin programs: process groups, teardown, async pipes.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        // FilePath and FileDescriptor, which swift-subprocess's API speaks (already in its graph).
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
    ],
    targets: [
        // C libraries, each behind a shim of typed wrappers. libgd and libcurl are opened on
        // first use, not linked (CLibraryLoader says why): these targets forward
        // badge's calls to them.
        .target(name: "CLibraryLoader", path: "Sources/CLibraryLoader"),
        .target(name: "CGD", dependencies: ["CLibraryLoader"], path: "Sources/CGD"),
        .target(name: "CCurl", dependencies: ["CLibraryLoader"], path: "Sources/CCurl"),

        // libjpeg-turbo, for decoding JPEG at 1/2, 1/4 or 1/8 scale; fontconfig and FreeType for
        // captions. Their headers come from these system-library targets; the libraries themselves
        // are opened on first use too (CJPEGLoader, CFontLoader), not linked.
        .systemLibrary(
            name: "CJPEG",
            path: "Sources/CJPEG",
            providers: [.apt(["libjpeg62-turbo-dev"])]
        ),
        .systemLibrary(
            name: "CFreeType",
            path: "Sources/CFreeType",
            providers: [.apt(["libfontconfig-dev", "libfreetype-dev"])]
        ),
        .target(name: "CJPEGLoader", dependencies: ["CJPEG", "CLibraryLoader"], path: "Sources/CJPEGLoader", publicHeadersPath: "."),
        .target(name: "CFontLoader", dependencies: ["CFreeType", "CLibraryLoader"], path: "Sources/CFontLoader", publicHeadersPath: ".",
                cSettings: [freeTypeHeaders]),
        // Two-lane square roots and conversions for Canvas's gradient loops.
        .target(name: "CCanvasMath", path: "Sources/CCanvasMath"),
        // deflate for compression levels 1-2: faster than zlib on badges, and bands joinable (see the file).
        .target(name: "CDeflate", path: "Sources/CDeflate"),
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),

        // The core: contract, config, store, pipeline. Swift, and zlib for CRC-32.
        .target(
            name: "BadgeKit",
            dependencies: [
                "CZlib",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/BadgeKit"
        ),
        // Test doubles and the conformance suite every backend runs (ships like swift-log's InMemoryLogging).
        .target(
            name: "BadgeKitTesting",
            dependencies: ["BadgeKit"],
            path: "Sources/BadgeKitTesting"
        ),
        // Safe Swift over libgd.
        .target(
            name: "Canvas",
            dependencies: ["CGD", "CZlib", "CDeflate", "CJPEG", "CJPEGLoader", "CFreeType", "CFontLoader", "CCanvasMath", "BadgeKit"],
            path: "Sources/Canvas",
            swiftSettings: [.unsafeFlags(["-Xcc", freeTypeIncludes])]
        ),

        // The card: the back face, the flip animation, the HTML page.
        .target(
            name: "BadgeCard",
            dependencies: ["BadgeKit", "Canvas"],
            path: "Sources/BadgeCard"
        ),

        // HTTPTransport on libcurl.
        .target(
            name: "CurlTransport",
            dependencies: ["CCurl", "BadgeKit"],
            path: "Sources/CurlTransport"
        ),

        // Backends: the project's plugins.
        .target(
            name: "ProceduralBackend",
            dependencies: ["BadgeKit", "Canvas"],
            path: "Plugins/ProceduralBackend"
        ),
        .target(
            name: "ImportBackend",
            dependencies: ["BadgeKit", "Canvas"],
            path: "Plugins/ImportBackend"
        ),

        .target(
            name: "RemoteBackend",
            dependencies: ["BadgeKit", .product(name: "Logging", package: "swift-log")],
            path: "Plugins/RemoteBackend"
        ),
        .target(
            name: "ExecBackend",
            dependencies: [
                "BadgeKit",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Plugins/ExecBackend"
        ),

        .executableTarget(
            name: "BadgeCLI",
            dependencies: [
                "BadgeKit", "Canvas", "BadgeCard", "CurlTransport", "ProceduralBackend", "ImportBackend", "RemoteBackend", "ExecBackend",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/BadgeCLI",
            linkerSettings: [
                .unsafeFlags(["-L", packageDirectory + "/linker", "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"], .when(configuration: .release)),
            ]
        ),

        // `swift package badge ...`: runs the badge tool, so other packages can stamp badges in their builds.
        .plugin(
            name: "BadgeCommandPlugin",
            capability: .command(
                intent: .custom(verb: "badge", description: "Make a Promise Badge with the badge tool"),
                permissions: [.writeToPackageDirectory(reason: "badge writes the badge image (--output) into the package")]
            ),
            path: "Plugins/BadgeCommandPlugin"
        ),

        // Measurements for scripts/bench.py (make bench); not a product.
        .executableTarget(
            name: "BadgeBench",
            dependencies: ["BadgeKit", "CurlTransport", "Canvas", "ProceduralBackend"],
            path: "Sources/BadgeBench"
        ),

        .testTarget(name: "BadgeKitTests", dependencies: ["BadgeKit", "BadgeKitTesting"]),
        .testTarget(name: "CurlTransportTests", dependencies: ["CurlTransport", "BadgeKit", "BadgeKitTesting"], exclude: ["Fixtures"]),
        .testTarget(
            name: "RemoteBackendTests",
            dependencies: ["RemoteBackend", "CurlTransport", "BadgeKit", "BadgeKitTesting"],
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "CanvasTests", dependencies: ["Canvas", "CDeflate", "CZlib", "BadgeKit", "BadgeKitTesting"]),
        .testTarget(name: "BadgeCardTests", dependencies: ["BadgeCard", "Canvas", "BadgeKit", "ProceduralBackend", "BadgeKitTesting"], exclude: ["Fixtures"]),
        .testTarget(name: "ProceduralBackendTests", dependencies: ["ProceduralBackend", "BadgeKitTesting", "Canvas"], exclude: ["Fixtures"]),
        .testTarget(name: "ImportBackendTests", dependencies: ["ImportBackend", "BadgeKitTesting", "Canvas"]),
        .testTarget(
            name: "ExecBackendTests",
            dependencies: ["ExecBackend", "BadgeKit", "BadgeKitTesting"],
            exclude: ["Fixtures"]
        ),
        // Follows docs/EXTENDING.md to the letter: a compiled backend and the shared conformance suite.
        .testTarget(name: "SampleBackendTests", dependencies: ["BadgeKit", "BadgeKitTesting", "Canvas"]),
        .testTarget(
            name: "BadgeCLITests",
            dependencies: ["BadgeCLI", "BadgeKit", "BadgeKitTesting", "ProceduralBackend", "Canvas"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
