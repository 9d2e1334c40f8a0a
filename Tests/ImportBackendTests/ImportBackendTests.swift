import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Synchronization
import Testing
@testable import ImportBackend

@Suite(.threadsOfTheirOwn)
struct ImportBackendTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Data").standardizedFileURL

    static func files(_ folder: String) -> [String] {
        let dir = corpus.appendingPathComponent(folder)
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [])
            .filter { $0.hasSuffix(".png") }.sorted().map { dir.appendingPathComponent($0).path }
    }

    let generator = ImportGenerator()

    private func importing(_ path: String, size: Int = 64, fit: ImportGenerator.Fit = .cover) async throws -> (GeneratedImage, Data) {
        var generator = self.generator
        generator.fit = fit
        let (image, data, _) = try await GeneratorConformance.generateOnce(
            generator, BadgeRequest(prompt: "imported", size: size, source: path))
        return (image, data)
    }

    @Test func theCorpusIsThere() {
        #expect(Self.files("pngsuite").count >= 20)
        #expect(Self.files("png-crashers").count >= 20)
    }

    /// The first corpus file; a clear failure (not a crash) when the corpus is missing.
    static func firstPNG() throws -> String {
        try #require(files("pngsuite").first, "no PNG in \(corpus.path)/pngsuite: Tests/Data is part of the repository")
    }

    @Test func passesTheSharedConformanceSuite() async throws {
        try await GeneratorConformance.check(
            generator, request: BadgeRequest(prompt: "p", size: 64, source: try Self.firstPNG()), expectDeterministic: true)
    }

    @Test(arguments: ImportBackendTests.files("pngsuite"))
    func everyValidPNGImports(path: String) async throws {
        let (_, data) = try await importing(path)
        #expect(try ImageIntake().inspect(data) == ImageIntake.Header(format: .png, width: 64, height: 64))
    }

    /// What each of libpng's crasher images must give: nil, imported (its
    /// broken parts are ancillary); otherwise the refusal's words.
    static func crasherOutcome(_ name: String) -> String? {
        switch name {
        case "empty_ancillary_chunks.png": nil
        case "bad_iCCP.png": "the PNG chunk IHDR at byte 8 has a bad CRC"
        case "badcrc.png": "the PNG chunk IDAT at byte 33 has a bad CRC"
        case "badadler.png": "the PNG's image data is not a valid zlib stream (incorrect data check, in IDAT 1)"
        default:
            // huge_IDAT.png, huge_bKGD_chunk.png, huge_juNk_safe_to_copy.png, ...: the chunk's type
            // is the name's second word, and its length is refused before anything is read.
            "the PNG chunk \(name.split(separator: "_")[1].prefix(4)) at byte 33 claims 1073741823 bytes but the file ends first"
        }
    }

    @Test(arguments: ImportBackendTests.files("png-crashers"))
    func everyCrasherIsImportedOrRefusedAsExpected(path: String) async throws {
        let name = URL(fileURLWithPath: path).lastPathComponent
        let expected = Self.crasherOutcome(name)
        do {
            let (_, data) = try await importing(path)
            #expect(expected == nil, "\(name) was imported; it must be refused: \(expected ?? "")")
            #expect(try ImageIntake().inspect(data).width == 64)
        } catch let error as BadgeError {
            #expect(expected != nil, "\(name) must import: \(error)")
            #expect(error.code == .invalidImage, "\(name): \(error)")
            #expect(error.message == expected, "\(name): \(error)")
            #expect(error.path == path, "the error names the file: \(error)")
        }
    }

    @Test func otherFormatsAreRefusedByWhatTheyAreNotByTheirName() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("badge-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let bmp = dir.appendingPathComponent("photo.png")
        try Data("BM\u{0}\u{0}\u{0}\u{0}........".utf8).write(to: bmp)
        do {
            _ = try await importing(bmp.path)
            Issue.record("a BMP must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .unsupportedFormat)
            #expect(error.message.contains("BMP"))
        }
        // A PNG whose name says JPEG imports all the same.
        let lying = dir.appendingPathComponent("really-a-png.jpg")
        try FileManager.default.copyItem(atPath: try Self.firstPNG(), toPath: lying.path)
        let (_, data) = try await importing(lying.path)
        #expect(try ImageIntake().inspect(data).width == 64)
    }

    @Test func aMissingFileOrSourceSaysWhatToDo() async throws {
        do {
            _ = try await importing("/nonexistent/picture.png")
            Issue.record("must fail")
        } catch let error as BadgeError {
            #expect(error.path == "/nonexistent/picture.png")
            #expect(error.message == "no such file")
        }
        do {
            _ = try await GeneratorConformance.generateOnce(generator, BadgeRequest(prompt: "p", size: 64))
            Issue.record("must fail")
        } catch let error as BadgeError {
            #expect(error.code == .usage)
            #expect(error.hint?.contains("--source") == true)
        }
    }

    /// A path that names no regular file is refused by what it is, from the
    /// descriptor it opened: a FIFO with no writer is not waited on, and a
    /// device is not read until the size limit.
    @Test func aFIFOADeviceOrAFolderIsRefusedWithoutWaitingOrReading() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("badge-import-fifo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("picture.png").path
        #expect(mkfifo(fifo, 0o600) == 0)
        for (path, kind) in [(fifo, "a FIFO (named pipe)"), ("/dev/zero", "a character device"), (dir.path, "a directory")] {
            do {
                _ = try await importing(path)
                Issue.record("\(path) must be refused")
            } catch let error as BadgeError {
                #expect(error.code == .io, "\(path): \(error)")
                #expect(error.message == "this is \(kind), not a picture", "\(path): \(error)")
                #expect(error.path == path)
            }
        }
    }

    /// The picture is decoded once, in the backend, under the intake's limits.
    /// What the pipeline admits is this process's own encoding of those pixels,
    /// checked band by band as it was compressed (as the procedural drawing
    /// is), so the pipeline's decoder is not asked to decode it again; an
    /// outside backend's PNG of the same size is.
    @Test func theImportIsEncodedHereAndNotDecodedAgain() async throws {
        let path = try Self.firstPNG()
        let (image, direct) = try await importing(path)
        #expect(image.isEncodedInProcess && image.inflated != nil && image.bytes == direct)

        let decoder = CountingDecoder()
        let pipeline = Pipeline(environment: BadgeEnvironment(variables: [:], decoder: decoder))
        let request = BadgeRequest(prompt: "imported", size: 64, source: path)
        let badge = try await pipeline.render(
            request, backend: BackendInstance(name: "import", type: "import", generator: generator), commitment: .init(timeZone: .gmt))
        #expect(decoder.calls.load(ordering: .relaxed) == 0)
        #expect(throws: Never.self) { try PNGDataCheck.verify(badge.png) }
        let committed = try GDImage.decodePNG(badge.png), imported = try GDImage.decodePNG(direct)
        #expect((0..<64).allSatisfy { y in (0..<64).allSatisfy { x in committed.pixel(x, y) == imported.pixel(x, y) } })

        _ = try await pipeline.render(
            BadgeRequest(prompt: "outside", size: 64),
            backend: BackendInstance(name: "outside", type: "fake", generator: FakeGenerator(.writes(direct))), commitment: .init(timeZone: .gmt))
        #expect(decoder.calls.load(ordering: .relaxed) == 1)
    }

    /// Issue #31: `badge:x-source holiday-GPS.jpg` told anyone with the badge the photo's name.
    @Test func theSourceIsRecordedByItsHashNeverItsName() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("badge-import-name-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let named = dir.appendingPathComponent("holiday-GPS.png")
        try FileManager.default.copyItem(atPath: try Self.firstPNG(), toPath: named.path)
        let (image, png) = try await importing(named.path)
        #expect(try image.extra["source-sha256"] == BatchHash.sha256(try Data(contentsOf: named)))
        #expect(!image.extra.values.contains { $0.contains("holiday") }, "\(image.extra)")
        #expect(!png.contains(Data("holiday".utf8)))
    }

    @Test func standardInputIsReadWithACap() async throws {
        let png = try Data(contentsOf: URL(fileURLWithPath: try Self.firstPNG()))
        var generator = ImportGenerator(readStandardInput: { _ in png })
        let (image, _, _) = try await GeneratorConformance.generateOnce(generator, BadgeRequest(prompt: "p", size: 64, source: "-"))
        #expect(try image.extra["source-sha256"] == BatchHash.sha256(png))
        // A reader that hands over as much as it may (the real one, over a pipe, is
        // CommandTests.importMakesABadgeFromAPicture's): the generator still refuses it.
        generator.limits.maxFileBytes = 10
        generator.readStandardInput = { limit in Data(count: limit) }
        do {
            _ = try await GeneratorConformance.generateOnce(generator, BadgeRequest(prompt: "p", size: 64, source: "-"))
            Issue.record("must refuse oversized input")
        } catch let error as BadgeError {
            #expect(error.code == .imageTooLarge)
            #expect(error.message == "the image is 11 bytes; the limit is 10", "\(error)")
            #expect(error.hint?.contains("intake.maxFileBytes") == true, "\(error)")
        }
    }

    @Test func containLetterboxesOnTheBackground() async throws {
        var generator = ImportGenerator(fit: .contain, background: RGBA(0, 0, 255))
        generator.fit = .contain
        let wide = try GDImage(try Canvas(width: 200, height: 100, background: RGBA(255, 0, 0))).pngData()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("badge-import-\(UUID().uuidString).png")
        try wide.write(to: dir)
        defer { try? FileManager.default.removeItem(at: dir) }
        let (_, data, _) = try await GeneratorConformance.generateOnce(generator, BadgeRequest(prompt: "p", size: 100, source: dir.path))
        let image = try GDImage.decodePNG(data)
        #expect(image.pixel(50, 5) == RGBA(0, 0, 255))
        #expect(image.pixel(50, 50) == RGBA(255, 0, 0))
    }
}

/// gd's decoder, counting the images the pipeline hands it.
final class CountingDecoder: ImageDecoding {
    let calls = Atomic<Int>(0)
    let decoder = GDImageDecoder()

    func validate(_ data: Data, header: ImageIntake.Header, stop: DecodeStop) async throws {
        calls.add(1, ordering: .relaxed)
        try await decoder.validate(data, header: header, stop: stop)
    }

    func normalized(_ data: Data, header: ImageIntake.Header, side: Int, stop: DecodeStop) async throws -> Data {
        calls.add(1, ordering: .relaxed)
        return try await decoder.normalized(data, header: header, side: side, stop: stop)
    }
}
