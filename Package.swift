// swift-tools-version:6.0
import PackageDescription

// Arrows point one way: BadgeCLI -> BadgeMain -> {BadgeServer, Plugins/*, TerminalGraphics, CurlTransport};
// BadgeServer -> {BadgeCard, ProceduralBackend}, the one backend it names; ProceduralBackend, ImportBackend,
// BadgeCard and TerminalGraphics -> Canvas; Canvas, CurlTransport, RemoteBackend, ExecBackend -> BadgeKit.
// BadgeKit imports none of our Swift targets, only three C modules (zlib, libdeflate, libcrypto), with
// `internal import`: they do not reach its clients. The other C libraries stay behind Canvas,
// CurlTransport, TerminalGraphics and ExecBackend.
// Linux only: the code calls Glibc and opens Linux sonames (see the README).
// Nothing here passes flags of its own: C libraries come through pkg-config, and the
// release build's link options live in the Makefile (`make build`).
let package = Package(
    name: "badge",
    products: [
        .executable(name: "badge", targets: ["BadgeCLI"]),
        .library(name: "BadgeKit", targets: ["BadgeKit"]),
        // badge's commands, for a package that builds its own `badge` with more backends.
        .library(name: "BadgeMain", targets: ["BadgeMain"]),
        .library(name: "BadgeKitTesting", targets: ["BadgeKitTesting"]),
        .library(name: "Canvas", targets: ["Canvas"]),
        .library(name: "CurlTransport", targets: ["CurlTransport"]),
        .plugin(name: "BadgeCommandPlugin", targets: ["BadgeCommandPlugin"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The exec backend runs plugin programs: process groups, teardown, async pipes.
        // The tests start their child processes with it too (Tests/Support/ChildProcess.swift).
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        // FilePath and FileDescriptor, which swift-subprocess's API speaks (already in its graph).
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
        // `badge serve`: HTTP/1.1 on SwiftNIO, graceful shutdown through swift-service-lifecycle.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // libgd and libcurl are opened on first use, not linked: they bring dozens of libraries
        // whose loading every run would pay (docs/PERFORMANCE.md). CLazyLibrary opens them, by the
        // sonames scripts/sonames.py reads from the libraries the build links against; CGD and CCurl
        // call them through functions of their own, prefixed badge_, each checked by the compiler
        // against the library's header.
        .target(name: "CLazyLibrary", path: "Sources/CLazyLibrary"),
        .target(name: "CGD", dependencies: ["CLazyLibrary"], path: "Sources/CGD"),
        .target(name: "CCurl", dependencies: ["CLazyLibrary"], path: "Sources/CCurl"),
        // OpenSSL's libcrypto, for SHA-256 (batch digests, reproducible ids), opened the same way.
        .target(name: "CLibcrypto", dependencies: ["CLazyLibrary"], path: "Sources/CLibcrypto"),
        // libraqm (HarfBuzz and FriBidi) shapes captions in scripts that need it, opened
        // the same way: only such a caption loads it. Its header takes FreeType's.
        .target(name: "CRaqm", dependencies: ["CLazyLibrary", "CFreeType"], path: "Sources/CRaqm"),
        // ICU's break iterators, where a Chinese, Japanese or Korean caption may be cut, opened
        // the same way: only such a caption loads it. Its headers (libicu-dev) name the version.
        .target(name: "CICU", dependencies: ["CLazyLibrary"], path: "Sources/CICU"),

        // libjpeg-turbo, for decoding JPEG at 1/2, 1/4 or 1/8 scale; FreeType and fontconfig for
        // captions. Linked as pkg-config describes them.
        .systemLibrary(
            name: "CJPEG",
            path: "Sources/CJPEG",
            pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg62-turbo-dev"])]
        ),
        .systemLibrary(
            name: "CFreeType",
            path: "Sources/CFreeType",
            pkgConfig: "freetype2",
            providers: [.apt(["libfreetype-dev"])]
        ),
        .systemLibrary(
            name: "CFontconfig",
            path: "Sources/CFontconfig",
            pkgConfig: "fontconfig",
            providers: [.apt(["libfontconfig-dev"])]
        ),
        // chafa, for showing badges in the terminal (`generate --choose`): kitty, iTerm2 and
        // sixel images, or Unicode symbol art.
        .systemLibrary(
            name: "CChafa",
            path: "Sources/CChafa",
            pkgConfig: "chafa",
            providers: [.apt(["libchafa-dev"])]
        ),
        // prctl, for the exec backend: variadic, so not callable from Swift.
        .target(name: "CProcessControl", path: "Sources/CProcessControl"),
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
        .systemLibrary(
            name: "CLibdeflate",
            path: "Sources/CLibdeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]
        ),

        // The core: contract, config, store, pipeline. Swift, zlib for CRC-32, libdeflate for the banded PNG check, libcrypto for SHA-256.
        .target(
            name: "BadgeKit",
            dependencies: [
                "CZlib",
                "CLibdeflate",
                .product(name: "Logging", package: "swift-log"),
                "CLibcrypto",
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
            dependencies: ["CGD", "CZlib", "CDeflate", "CLibdeflate", "CJPEG", "CFreeType", "CFontconfig", "CRaqm", "CICU", "CCanvasMath", "BadgeKit"],
            path: "Sources/Canvas"
        ),

        // Badges drawn in the terminal, through chafa.
        .target(
            name: "TerminalGraphics",
            dependencies: ["CChafa", "Canvas", "BadgeKit"],
            path: "Sources/TerminalGraphics"
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
                "BadgeKit", "CProcessControl",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Plugins/ExecBackend"
        ),

        // `badge serve`: the studio page and badges by URL, over the same registry, pipeline
        // and store as the commands. The only target that speaks HTTP as a server.
        .target(
            name: "BadgeServer",
            dependencies: [
                "BadgeKit", "BadgeCard", "ProceduralBackend",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/BadgeServer",
            // The studio's page, style and script, as files an editor or a linter reads, in the binary.
            resources: [
                .embedInCode("Studio/index.html"), .embedInCode("Studio/studio.css"), .embedInCode("Studio/studio.js"),
                .embedInCode("Studio/icon.svg"),
            ]
        ),

        // The commands: `BadgeMain.run(registering:)` is the whole command line.
        .target(
            name: "BadgeMain",
            dependencies: [
                "BadgeKit", "Canvas", "BadgeCard", "BadgeServer", "TerminalGraphics", "CurlTransport", "ProceduralBackend", "ImportBackend", "RemoteBackend", "ExecBackend",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // `serve --open` starts xdg-open in a session of its own, every signal at its default.
                .product(name: "Subprocess", package: "swift-subprocess"),
            ],
            path: "Sources/BadgeMain"
        ),
        .executableTarget(name: "BadgeCLI", dependencies: ["BadgeMain"], path: "Sources/BadgeCLI"),

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
            dependencies: [
                "BadgeKit", "CurlTransport", "Canvas", "ProceduralBackend", "RemoteBackend",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Sources/BadgeBench"
        ),

        // What the test targets share (Tests/Support): the threads their suites run on,
        // child processes (on swift-subprocess), fixture servers, deadlines. Not a product.
        .target(
            name: "BadgeTestSupport",
            dependencies: [
                "BadgeKit",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Tests/Support"
        ),

        // Two lazily opened libraries over zlib, for BadgeKitTests' LazyLibraryTests.
        .target(name: "CLazyLibraryProbe", dependencies: ["CLazyLibrary", "CZlib"], path: "Tests/CLazyLibraryProbe"),

        .testTarget(
            name: "BadgeKitTests",
            dependencies: [
                "BadgeTestSupport", "BadgeKit", "BadgeKitTesting", "CLazyLibraryProbe",
                .product(name: "Subprocess", package: "swift-subprocess"),
            ]
        ),
        .testTarget(name: "CurlTransportTests", dependencies: ["BadgeTestSupport", "CurlTransport", "BadgeKit", "BadgeKitTesting"], exclude: ["Fixtures"]),
        .testTarget(
            name: "RemoteBackendTests",
            dependencies: ["BadgeTestSupport", "RemoteBackend", "CurlTransport", "BadgeKit", "BadgeKitTesting", "Canvas"],
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "CanvasTests", dependencies: ["BadgeTestSupport", "Canvas", "CDeflate", "CLibdeflate", "CZlib", "BadgeKit", "BadgeKitTesting"]),
        .testTarget(name: "BadgeCardTests", dependencies: ["BadgeTestSupport", "BadgeCard", "Canvas", "BadgeKit", "ProceduralBackend", "BadgeKitTesting"]),
        .testTarget(name: "ProceduralBackendTests", dependencies: ["BadgeTestSupport", "ProceduralBackend", "BadgeKitTesting", "Canvas"], exclude: ["Fixtures"]),
        .testTarget(name: "ImportBackendTests", dependencies: ["BadgeTestSupport", "ImportBackend", "BadgeKitTesting", "Canvas"]),
        .testTarget(
            name: "ExecBackendTests",
            dependencies: ["BadgeTestSupport", "ExecBackend", "BadgeKit", "BadgeKitTesting"],
            exclude: ["Fixtures"]
        ),
        // Follows docs/EXTENDING.md to the letter: a compiled backend and the shared conformance suite.
        .testTarget(name: "SampleBackendTests", dependencies: ["BadgeTestSupport", "BadgeKit", "BadgeKitTesting", "Canvas"]),
        .testTarget(
            name: "BadgeServerTests",
            dependencies: [
                "BadgeTestSupport", "BadgeServer", "BadgeKit", "BadgeKitTesting", "ProceduralBackend", "Canvas",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "BadgeCLITests",
            dependencies: ["BadgeTestSupport", "BadgeCLI", "BadgeMain", "BadgeKit", "BadgeKitTesting", "ProceduralBackend", "Canvas"],
            exclude: ["Browser", "Witnesses"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
