// badge-bench: in-process measurements for scripts/bench.py, which starts the
// servers and prints the figures beside the peers'. Not installed; not for users.
//
//   badge-bench http URL COUNT CONCURRENCY
//     sends COUNT GET requests through CurlTransport, at most CONCURRENCY at a
//     time, and prints {"totalMs": ..., "perRequestMs": ..., "failures": ...}.
//
//   badge-bench draw SIZE RUNS [PROMPT]
//     draws the procedural medal for PROMPT ("A pair of dumbbells"; seed 1,
//     caption on, as `badge generate` does) RUNS times, then encodes it; then
//     RUNS times draws and encodes it together, as `generate` does (the
//     drawing threads compress the bands already drawn); and prints
//     {"drawMs": median, "encodeMs": median, "renderMs": median, "bytes": N}.
//
//   badge-bench icon SIZE
//     in a fresh process, chooses, finds and renders the icon of a promise
//     (the font opened to see it is there, then to render the glyph) as a
//     SIZE px badge does, then another promise's, and prints
//     {"firstMs": ..., "secondMs": ..., "width": N}.
//
//   badge-bench svg SIZE RUNS
//     for each procedural style, records the badge of "A pair of dumbbells"
//     (seed 1) as a scene RUNS times and writes the scene as SVG RUNS times,
//     and prints {"STYLE": {"recordMs": median, "writeMs": median, "bytes": N}, ...}.
//
//   badge-bench comfyui URL WORKFLOW COUNT
//     runs the comfyui backend (WORKFLOW in API format, its prompt at
//     6.inputs.text) COUNT times one after another against the server at URL,
//     64 px each, after one warm-up run, and prints {"totalMs": ..., "perImageMs": ...}.
//
//   badge-bench hummingbird PNG
//     serves the file PNG at http://127.0.0.1:PORT/badge.png from a bare
//     Hummingbird router (one route; the ETag, 304 and headers `badge serve`
//     sends for a cached badge, and nothing else), prints the URL's line
//     and serves until stopped: the floor under `badge serve`'s rate.
import BadgeKit
import Canvas
import CurlTransport
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ProceduralBackend
import RemoteBackend

let arguments = CommandLine.arguments
let clock = ContinuousClock()

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func usage() -> Never {
    FileHandle.standardError.write(Data("usage: badge-bench http URL COUNT CONCURRENCY\n       badge-bench draw SIZE RUNS [PROMPT]\n       badge-bench svg SIZE RUNS\n       badge-bench comfyui URL WORKFLOW COUNT\n       badge-bench hummingbird PNG\n".utf8))
    exit(64)
}

if arguments.count >= 4, arguments.count <= 5, arguments[1] == "draw", let size = Int(arguments[2]), let runs = Int(arguments[3]), runs > 0 {
    let generator = ProceduralGenerator()
    let request = BadgeRequest(prompt: arguments.count == 5 ? arguments[4] : "A pair of dumbbells", size: size, seed: 1)
    var drawMs: [Double] = [], encodeMs: [Double] = []
    var encoded = Data()
    for _ in 0..<runs {
        let started = clock.now
        let canvas = try generator.draw(request)
        let drawn = clock.now
        let png = try generator.encode(canvas)
        encodeMs.append(milliseconds(clock.now - drawn))
        drawMs.append(milliseconds(drawn - started))
        encoded = png
    }
    var renderMs: [Double] = []
    for _ in 0..<runs {
        let started = clock.now
        let png = try generator.render(request)
        renderMs.append(milliseconds(clock.now - started))
        guard png == encoded else {
            FileHandle.standardError.write(Data("badge-bench: the PNG drawn and encoded together differs from the one encoded after the drawing\n".utf8))
            exit(1)
        }
    }
    print("{\"drawMs\": \(median(drawMs)), \"encodeMs\": \(median(encodeMs)), \"renderMs\": \(median(renderMs)), \"bytes\": \(encoded.count)}")
    exit(0)
}

if arguments.count == 3, arguments[1] == "icon", let size = Int(arguments[2]) {
    // A fresh process, as each `badge generate` is: the first icon's cost, then a second's.
    guard let first = ProceduralGenerator.iconCost(of: "Play tennis every weekend", size: size),
          let second = ProceduralGenerator.iconCost(of: "Learn to play the piano", size: size) else {
        FileHandle.standardError.write(Data("badge-bench: no icon was drawn; install fonts-material-design-icons-iconfont\n".utf8))
        exit(1)
    }
    print("{\"firstMs\": \(first.milliseconds), \"secondMs\": \(second.milliseconds), \"width\": \(first.width)}")
    exit(0)
}

if arguments.count == 4, arguments[1] == "svg", let size = Int(arguments[2]), let runs = Int(arguments[3]), runs > 0 {
    let generator = ProceduralGenerator()
    var figures: [String] = []
    for style in ProceduralGenerator.styles {
        let request = BadgeRequest(prompt: "A pair of dumbbells", style: style, size: size, seed: 1)
        var recordMs: [Double] = [], writeMs: [Double] = []
        var bytes = 0
        for _ in 0..<runs {
            let started = clock.now
            let image = try await generator.generateVector(request)
            let recorded = clock.now
            let svg = image.document([("badge:prompt", request.prompt)])
            writeMs.append(milliseconds(clock.now - recorded))
            recordMs.append(milliseconds(recorded - started))
            bytes = svg.count
        }
        figures.append("\"\(style)\": {\"recordMs\": \(median(recordMs)), \"writeMs\": \(median(writeMs)), \"bytes\": \(bytes)}")
    }
    print("{" + figures.joined(separator: ", ") + "}")
    exit(0)
}

if arguments.count == 3, arguments[1] == "hummingbird" {
    let png = ByteBuffer(bytes: try Data(contentsOf: URL(fileURLWithPath: arguments[2])))
    let etag = "\"\(png.readableBytes)\""
    let headers: HTTPFields = [
        .cacheControl: "public, max-age=31536000, immutable", .eTag: etag,
        HTTPField.Name("Cross-Origin-Resource-Policy")!: "cross-origin", .accessControlAllowOrigin: "*",
        .xContentTypeOptions: "nosniff", HTTPField.Name("Referrer-Policy")!: "no-referrer",
    ]
    let router = Router()
    router.get("/badge.png") { request, _ -> Response in
        if request.headers[.ifNoneMatch] == etag { return Response(status: .notModified, headers: headers) }
        var fields = headers
        fields[.contentType] = "image/png"
        fields[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
        fields[.contentLength] = String(png.readableBytes)
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: png))
    }
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil, backlog: 1024),
        onServerRunning: { channel in
            FileHandle.standardOutput.write(Data("http://127.0.0.1:\(channel.localAddress?.port ?? 0)/badge.png\n".utf8))
        })
    try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    exit(0)
}

if arguments.count == 5, arguments[1] == "comfyui", let count = Int(arguments[4]), count > 0 {
    let text = #"{"backends": {"comfy": {"type": "http", "api": "comfyui", "url": \#(JSONWriter.quote(arguments[2])), "retries": 0, "#
        + #""workflow": \#(JSONWriter.quote(arguments[3])), "inputs": {"prompt": "6.inputs.text", "seed": "3.inputs.seed", "#
        + #""width": "5.inputs.width", "height": "5.inputs.height"}}}}"#
    let config = try BadgeConfig.parse(Data(text.utf8), file: nil)
    var registry = BackendRegistry()
    RemoteGenerator.register(in: &registry)
    let environment = BadgeEnvironment(http: CurlTransport(), decoder: GDImageDecoder())
    let generator = try registry.makeBackend(named: "comfy", in: config, environment: environment).generator
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-bench-comfyui-\(getpid())")
    defer { try? FileManager.default.removeItem(at: directory) }
    func once(_ i: Int) async throws {
        let workspace = Workspace(directory: directory.appendingPathComponent("\(i)"))
        try FileManager.default.createDirectory(at: workspace.directory, withIntermediateDirectories: true)
        _ = try await generator.generate(BadgeRequest(prompt: "Promise number \(i)", size: 64, seed: UInt64(i)), in: workspace)
    }
    // One warm-up run: connection set-up and libcurl's initialisation are not per-image costs.
    try await once(0)
    let started = clock.now
    for i in 1...count { try await once(i) }
    let ms = milliseconds(clock.now - started)
    print("{\"totalMs\": \(ms), \"perImageMs\": \(ms / Double(count))}")
    exit(0)
}

guard arguments.count == 5, arguments[1] == "http", let url = URL(string: arguments[2]),
      let count = Int(arguments[3]), let concurrency = Int(arguments[4]), count > 0, concurrency > 0
else { usage() }

let transport = CurlTransport()
// One warm-up request: connection set-up and libcurl's initialisation are not per-request costs.
_ = try? await transport.send(BadgeKit.HTTPRequest(url: url))

let started = clock.now
let failures = await withTaskGroup(of: Bool.self) { group -> Int in
    var next = 0, failed = 0
    func add() {
        group.addTask { ((try? await transport.send(BadgeKit.HTTPRequest(url: url)))?.status ?? 0) == 200 }
        next += 1
    }
    while next < min(concurrency, count) { add() }
    for await ok in group {
        if !ok { failed += 1 }
        if next < count { add() }
    }
    return failed
}
let ms = milliseconds(clock.now - started)
print("{\"totalMs\": \(ms), \"perRequestMs\": \(ms / Double(count)), \"failures\": \(failures)}")
