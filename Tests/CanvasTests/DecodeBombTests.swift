import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Testing

/// Issue #24: small files built to take minutes or gigabytes to decode are
/// refused before or while decoding, and a decode honours cancellation and
/// the backend's time limit.
@Suite(.threadsOfTheirOwn)
struct DecodeBombTests {
    /// A progressive JPEG of a picture with detail in every block.
    static func progressiveJPEG(side: Int = 96) throws -> Data {
        let canvas = try Canvas(width: side, height: side, background: RGBA(30, 90, 200))
        for k in 0..<12 {
            canvas.fill(.circle(center: Point(Double(k * 8), Double((k * 37) % side)), radius: Double(4 + k)),
                        with: .solid(RGBA(UInt8(20 * k), UInt8(255 - 15 * k), 40)))
        }
        let jpeg = try GDImage(canvas).jpegData(quality: 90, progressive: true)
        #expect(ImageIntake.jpegScanCount(jpeg) > 1, "gd wrote a progressive JPEG")
        return jpeg
    }

    /// `jpeg` with its last scan repeated `times` more times before EOI: the
    /// reviewed bomb (1,000 repeats of an 8000×5000 image decoded for 27.8 s).
    static func repeatingLastScan(_ jpeg: Data, times: Int) -> Data {
        let bytes = [UInt8](jpeg)
        // In entropy-coded data 0xFF is followed only by 0x00 or a restart
        // marker, so the last FF DA is the last scan's header.
        let lastScan = (0..<(bytes.count - 1)).last { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA }!
        let end = bytes.count - 2
        #expect(bytes[end] == 0xFF && bytes[end + 1] == 0xD9)
        let scan = bytes[lastScan..<end]
        var out = Array(bytes[..<end])
        for _ in 0..<times { out += scan }
        return Data(out + [0xFF, 0xD9])
    }

    @Test func aJPEGOfAThousandScansIsRefusedBeforeDecoding() throws {
        let bomb = Self.repeatingLastScan(try Self.progressiveJPEG(), times: 1000)
        #expect(ImageIntake.jpegScanCount(bomb) > 1000)
        for attempt in [{ _ = try ImageIntake().inspect(bomb, accepting: [.jpeg]) },
                        { _ = try GDImage.decode(bomb, fitting: .init(side: 64, cover: true)) }] {
            #expect {
                try attempt()
            } throws: { error in
                let error = error as? BadgeError
                return error?.code == .invalidImage && error?.message == "the JPEG has more than 100 scans"
            }
        }
    }

    /// A scan repeated a few times (within the scan limit) makes libjpeg warn
    /// once per coefficient; the first warning ends the decode and is the
    /// one reported, where before every warning was counted through a full decode.
    /// A PNG whose image data inflates far past what its header promises
    /// (64×64 RGB, 12,352 bytes; its IDAT 256 MB of zeros in 1.6 MB) is
    /// refused at the first byte too many, before libpng, which would inflate
    /// all of it (a 20 MB file of this kind took a minute), sees it.
    @Test func aPNGWhoseImageDataRunsPastItsHeaderIsRefusedAtOnce() throws {
        var chunks = try PNG.chunks(in: TestPNG.solid(width: 64, height: 64, rgb: (1, 2, 3)))
        let index = try #require(chunks.firstIndex { $0.type == "IDAT" })
        chunks[index] = PNGChunk(type: "IDAT", data: zeroBomb(count: 256 << 20))
        let bomb = PNG.assemble(chunks)
        #expect(bomb.count < 2 << 20)
        do {
            _ = try GDImage.decode(bomb, source: "bomb.png")
            Issue.record("a PNG whose data runs past its header must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .invalidImage)
            #expect(error.message == "the PNG's image data holds more than the 12352 bytes its header promises", "\(error.message)")
            #expect(error.path == "bomb.png")
            #expect(error.hint == "the PNG's image data is damaged, or built to keep a decoder busy; export the picture again")
        }
    }

    @Test func theFirstCorruptDataWarningEndsTheDecode() throws {
        let damaged = Self.repeatingLastScan(try Self.progressiveJPEG(), times: 5)
        #expect(throws: Never.self) { try ImageIntake().inspect(damaged, accepting: [.jpeg]) }
        do {
            _ = try GDImage.decode(damaged)
            Issue.record("a JPEG whose scans contradict each other must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .invalidImage)
            #expect(error.message == "the JPEG is corrupt or truncated", "\(error)")
            #expect(error.cause?.contains("progression") == true, "\(error)")
        }
    }

    @Test func aDecodeEndsWhenCancelledOrPastItsDeadline() throws {
        let jpeg = try Self.progressiveJPEG()
        #expect(throws: Never.self) { _ = try GDImage.decode(jpeg, stop: DecodeStop()) }
        let cancelled = DecodeStop()
        cancelled.stop()
        #expect { _ = try GDImage.decode(jpeg, stop: cancelled) } throws: { ($0 as? BadgeError)?.code == .cancelled }
        let late = DecodeStop(deadline: .now - .seconds(1))
        #expect { _ = try GDImage.decode(jpeg, stop: late) } throws: { error in
            (error as? BadgeError)?.code == .timeout && (error as? BadgeError)?.message.contains("time limit") == true
        }
    }

    /// A backend's time limit covers decoding its image: the pipeline passes
    /// the backend's deadline on to the decoder.
    @Test func thePipelineDecodesWithinTheBackendsDeadline() async throws {
        let jpeg = try Self.progressiveJPEG()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-deadline-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = BadgeStore(directory: directory)
        let environment = BadgeEnvironment(variables: [:], decoder: GDImageDecoder())
        let pipeline = Pipeline(environment: environment)
        func run(_ deadline: ContinuousClock.Instant?) async throws -> PipelineOutcome {
            try await pipeline.run(
                BadgeRequest(prompt: "Walk every day", size: 64),
                backend: BackendInstance(name: "slow-server", type: "http", generator: DeadlineGenerator(jpeg: jpeg, deadline: deadline)),
                commitment: .init(timeZone: TimeZone(identifier: "UTC")!), to: .store(store))
        }
        await #expect { _ = try await run(.now - .seconds(1)) } throws: { error in
            (error as? BadgeError)?.code == .timeout && (error as? BadgeError)?.backend == "slow-server"
        }
        #expect(try store.current() == nil, "nothing was committed")
        _ = try await run(.now + .seconds(600))
        #expect(try store.current()?.metadata.backend == "slow-server")
    }

    // MARK: - Decoding memory

    static func png(side: Int, depth: UInt8, colorType: UInt8, interlaced: Bool) -> Data {
        var ihdr = Data()
        for v in [UInt32(side), UInt32(side)] { ihdr.append(contentsOf: withUnsafeBytes(of: v.bigEndian, Array.init)) }
        ihdr.append(contentsOf: [depth, colorType, 0, 0, interlaced ? 1 : 0])
        return PNG.assemble([
            PNGChunk(type: "IHDR", data: ihdr),
            PNGChunk(type: "IDAT", data: Data([0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])),
            PNGChunk(type: "IEND", data: Data()),
        ])
    }

    static func jpegHeader(side: Int, progressive: Bool) -> Data {
        let s = [UInt8(side >> 8), UInt8(side & 0xFF)]
        let frame: [UInt8] = [0xFF, progressive ? 0xC2 : 0xC0, 0x00, 17, 8] + s + s + [3, 1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1]
        return Data([0xFF, 0xD8] + frame + [0xFF, 0xD9])
    }

    static func losslessWebP(side: Int) -> Data {
        let bits = UInt32(side - 1) | UInt32(side - 1) << 14 | 1 << 28
        var vp8l: [UInt8] = [0x2F] + withUnsafeBytes(of: bits.littleEndian, Array.init)
        vp8l += [UInt8](repeating: 0, count: 16)
        let chunk = Array("VP8L".utf8) + withUnsafeBytes(of: UInt32(vp8l.count).littleEndian, Array.init) + vp8l
        return Data(Array("RIFF".utf8) + withUnsafeBytes(of: UInt32(4 + chunk.count).littleEndian, Array.init) + Array("WEBP".utf8) + chunk)
    }

    /// Each of these is a few hundred bytes within the default limits on
    /// size and pixels (6000×6000 = 36 MP), and would take 300–600 MB to decode.
    static let bombs: [(String, Data, String)] = [
        ("interlaced 16-bit PNG", png(side: 6000, depth: 16, colorType: 6, interlaced: true), "64 bits a pixel, interlaced"),
        ("progressive JPEG", jpegHeader(side: 6000, progressive: true), "progressive JPEG"),
        ("lossless WebP", losslessWebP(side: 6000), "lossless WebP"),
    ]

    @Test(arguments: 0..<bombs.count)
    func aSmallFileThatDecodesHugeIsRefusedByItsHeader(index: Int) throws {
        let (name, data, cost) = Self.bombs[index]
        #expect(data.count < 1024, "\(name) is small")
        do {
            _ = try ImageIntake().inspect(data, accepting: Set(ImageFormat.allCases), source: name)
            Issue.record("\(name) must be refused before decoding")
        } catch let error as BadgeError {
            #expect(error.code == .imageTooLarge, "\(error)")
            #expect(error.message.hasPrefix("decoding the image would take about"), "\(error)")
            #expect(error.message.hasSuffix("the limit is 256 MB"), "\(error)")
            #expect(error.cause?.contains(cost) == true, "\(error)")
            #expect(error.hint?.contains("intake.maxDecodeBytes") == true)
        }
        // Raised in the configuration, the same file passes the intake.
        var limits = ImageLimits.default
        limits.maxDecodeBytes = 1 << 30
        #expect(throws: Never.self) { try ImageIntake(limits: limits).inspect(data, accepting: Set(ImageFormat.allCases)) }
    }

    /// The same sizes, stored plainly (8-bit, not interlaced, baseline),
    /// decode in 4 bytes a pixel and pass.
    @Test func theSameSizeStoredPlainlyPasses() throws {
        for data in [Self.png(side: 6000, depth: 8, colorType: 2, interlaced: false), Self.jpegHeader(side: 6000, progressive: false)] {
            #expect(throws: Never.self) { try ImageIntake().inspect(data, accepting: Set(ImageFormat.allCases)) }
        }
    }

    @Test func theDecodeLimitIsAConfigurationKey() throws {
        let config = try BadgeConfig.parse(Data(#"{"intake": {"maxDecodeBytes": 1073741824}}"#.utf8), file: "config.json")
        #expect(config.intake.maxDecodeBytes == 1 << 30)
        #expect(BadgeConfig.builtIn.intake.maxDecodeBytes == 256 << 20)
        // Below 1 MiB is refused, with the key, the file and the range that is allowed.
        do {
            _ = try BadgeConfig.parse(Data(#"{"intake": {"maxDecodeBytes": 5}}"#.utf8), file: "config.json")
            Issue.record("a maxDecodeBytes of 5 must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .config && error.message == "5 is out of range", "\(error)")
            #expect(error.keyPath == "intake.maxDecodeBytes" && error.path == "config.json", "\(error)")
            #expect(error.hint == "use a value from \(1 << 20) to \(64 << 30)", "\(error)")
        }
    }
}

/// A backend that hands over a JPEG with a deadline, as the remote and exec backends do.
private struct DeadlineGenerator: BadgeGenerator {
    var jpeg: Data
    var deadline: ContinuousClock.Instant?

    func availability() async -> Availability { .available }

    func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
        let file = try workspace.write(jpeg, to: "remote.jpeg")
        return GeneratedImage(file: file, deadline: deadline)
    }
}
