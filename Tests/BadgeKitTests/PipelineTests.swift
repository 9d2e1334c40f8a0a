import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

@Suite(.threadsOfTheirOwn)
struct PipelineTests {
    static let png = TestPNG.solid(width: 32, height: 32, rgb: (9, 9, 9))
    let fixture = StoreFixture()

    private func run(_ generator: FakeGenerator, destination: BadgeDestination? = nil, date: Date? = nil) async throws -> PipelineOutcome {
        let environment = BadgeEnvironment(now: { Date(timeIntervalSince1970: 1_790_000_000) }, variables: [:])
        return try await Pipeline(environment: environment).run(
            BadgeRequest(prompt: "Drink more water", size: 64, seed: 5),
            backend: BackendInstance(name: "fake-one", type: "fake", generator: generator),
            commitment: .init(date: date, timeZone: TimeZone(identifier: "Asia/Tokyo")!),
            to: destination ?? .store(fixture.store()))
    }

    @Test func aGeneratedImageIsStampedAndCommitted() async throws {
        let outcome = try await run(FakeGenerator(.writes(Self.png)))
        let metadata = try #require(try fixture.store().current()?.metadata)
        #expect(metadata == outcome.metadata)
        #expect(metadata.backend == "fake-one" && metadata.backendType == "fake")
        #expect(metadata.prompt == "Drink more water" && metadata.seed == 5)
        #expect(metadata.timeZone == "Asia/Tokyo")
        #expect(metadata.commitmentDateString == "2026-09-21T23:13:20+09:00")
    }

    /// Says what it likes about the image it writes: words a server or plugin chose.
    struct Talkative: BadgeGenerator {
        var model: String
        var revisedPrompt: String
        var extra: [String: String]
        func availability() async -> Availability { .available }
        func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
            let file = workspace.file("talk.png")
            try PipelineTests.png.write(to: file)
            return GeneratedImage(file: file, model: model, revisedPrompt: revisedPrompt, extra: extra)
        }
    }

    /// A backend's words are stored without control characters (other tools
    /// read the PNG's text as it is) and no longer than a badge needs them.
    @Test func aBackendsWordsAreKeptWithoutControlsAndCutToLength() async throws {
        let generator = Talkative(model: "m\u{1B}]0;owned\u{07}" + String(repeating: "m", count: 1_000_000),
                                  revisedPrompt: "a\u{0}b\u{202E}c\nd",
                                  extra: ["note": "x\u{9B}2J" + String(repeating: "y", count: 5000),
                                          // One character of three million scalars (6 MB): cut as scalars, it fits a badge.
                                          "marks": "a" + String(repeating: "\u{301}", count: 3_000_000)])
        let environment = BadgeEnvironment(variables: [:])
        _ = try await Pipeline(environment: environment).run(
            BadgeRequest(prompt: "Drink more water", size: 64, seed: 5),
            backend: BackendInstance(name: "talk", type: "talk", generator: generator),
            commitment: .init(date: nil, timeZone: .gmt), to: .store(fixture.store()))
        let metadata = try #require(try fixture.store().current()?.metadata)
        let model = try #require(metadata.model)
        #expect(model.hasPrefix("m]0;ownedmmm") && model.hasSuffix("m…") && model.unicodeScalars.count == 256, "\(model.prefix(40)) \(model.count)")
        #expect(metadata.revisedPrompt == "abc\nd")
        let note = try #require(metadata.extra["note"])
        #expect(note.hasPrefix("x2Jyyy") && note.unicodeScalars.count == 2000)
        #expect(try #require(metadata.extra["marks"]).unicodeScalars.count == 2000)
        #expect(try fixture.store().current().map { $0.byteCount < 20_000 } == true, "the badge holds the whole megabyte")
    }

    @Test func theChosenDayIsStamped() async throws {
        let day = try BadgeMetadata.parseCommitmentDate("2027-01-01", in: TimeZone(identifier: "Asia/Tokyo")!)
        let outcome = try await run(FakeGenerator(.writes(Self.png)), date: day)
        #expect(outcome.metadata.commitmentDateString == "2027-01-01T00:00:00+09:00")
        #expect(outcome.metadata.longCommitmentDate(locale: Locale(identifier: "en_US")) == "January 1, 2027")
    }

    /// The intake's file-size limit is for other programs' images; what this
    /// process drew is bounded by the size asked for (a 4096 px tile of grain
    /// is ~27 MB, past the default 20 MiB).
    @Test func aDrawingLargerThanTheFileLimitIsKeptWhereAnotherImageIsRefused() async throws {
        let png = TestPNG.solid(width: 64, height: 64, rgb: (1, 2, 3))
        let limits = ImageLimits(maxFileBytes: 4096, maxSide: 8192, maxPixels: 40_000_000)
        #expect(png.count > limits.maxFileBytes)
        let pipeline = Pipeline(environment: BadgeEnvironment(variables: [:]), limits: limits)
        let request = BadgeRequest(prompt: "Drink more water", size: 64, seed: 5)
        let drawn = try await pipeline.run(
            request, backend: BackendInstance(name: "drawn", type: "fake", generator: FakeGenerator(.writes(png), encodedInProcess: true)),
            commitment: .init(timeZone: .gmt), to: .store(fixture.store()))
        #expect(drawn.byteCount > limits.maxFileBytes)
        let before = try Data(contentsOf: fixture.store().badgeURL)
        let refusal = await #expect(throws: BadgeError.self) {
            _ = try await pipeline.run(
                request, backend: BackendInstance(name: "other", type: "fake", generator: FakeGenerator(.writes(png))),
                commitment: .init(timeZone: .gmt), to: .store(fixture.store()))
        }
        #expect(refusal?.code == .imageTooLarge, "\(String(describing: refusal))")
        #expect(refusal?.message == "the image is \(png.count) bytes; the limit is \(limits.maxFileBytes)", "\(String(describing: refusal))")
        #expect(try Data(contentsOf: fixture.store().badgeURL) == before)
    }

    @Test func theLargestBadgeIsAdmittedWhateverItsPixels() {
        let largest = ImageLimits.default.admittingDrawing(side: BadgeRequest.sizeRange.upperBound)
        #expect(largest.maxFileBytes >= 4096 * (1 + 4 * 4096))
        #expect(largest.maxSide == ImageLimits.default.maxSide && largest.maxPixels == ImageLimits.default.maxPixels)
        // A small badge keeps the limit as it is; a file's claim past maxSide counts as maxSide.
        #expect(ImageLimits.default.admittingDrawing(side: 64) == .default)
        #expect(ImageLimits.default.admittingDrawing(side: .max) == ImageLimits.default.admittingDrawing(side: 8192))
    }

    @Test func aFailingBackendChangesNothing() async throws {
        let before = try fixture.commit(1)
        do {
            _ = try await run(FakeGenerator(.fails(BadgeError(.generationFailed, "the model fell over"))))
            Issue.record("must fail")
        } catch let error as BadgeError {
            #expect(error.backend == "fake-one")
            #expect(error.message == "the model fell over")
        }
        #expect(try Data(contentsOf: fixture.store().badgeURL) == before)
    }

    @Test func anUnavailableBackendSaysWhy() async throws {
        do {
            _ = try await run(FakeGenerator(.unavailable("no key")))
            Issue.record("must fail")
        } catch let error as BadgeError {
            #expect(error.code == .backendUnavailable)
            #expect(error.message == "no key")
        }
    }

    @Test func cancellingLeavesTheStoreAndNoWorkspace() async throws {
        let before = try fixture.commit(1)
        let generator = WaitingGenerator()
        let task = Task {
            try await Pipeline(environment: BadgeEnvironment(variables: [:])).run(
                BadgeRequest(prompt: "p", size: 64), backend: BackendInstance(name: "waiting", type: "fake", generator: generator),
                commitment: .init(timeZone: .gmt), to: .store(fixture.store()))
        }
        do {
            try await waitUntil("the generator to be called with its workspace") { generator.workspace != nil }
        } catch {
            task.cancel()
            throw error
        }
        let workspace = try #require(generator.workspace)
        #expect(FileManager.default.fileExists(atPath: workspace.path))
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("must be cancelled")
        } catch let error as BadgeError {
            #expect(error.code == .cancelled)
        } catch is CancellationError {}
        #expect(try Data(contentsOf: fixture.store().badgeURL) == before)
        #expect(!FileManager.default.fileExists(atPath: workspace.path), "the workspace was left behind")
    }

    /// Notes its workspace, then waits to be cancelled.
    final class WaitingGenerator: BadgeGenerator, @unchecked Sendable {
        private let lock = NSLock()
        private var seen: URL?
        var workspace: URL? { lock.withLock { seen } }

        func availability() async -> Availability { .available }
        func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
            lock.withLock { seen = workspace.directory }
            while true { try await Task.sleep(for: .milliseconds(10)) }
        }
    }

    @Test func somethingThatIsNotAPNGIsRefused() async throws {
        do {
            _ = try await run(FakeGenerator(.writes(Data("BM not really".utf8))))
            Issue.record("must fail")
        } catch let error as BadgeError {
            #expect(error.code == .unsupportedFormat, "\(error)")
            #expect(error.message.hasPrefix("the file is a BMP image; accepted: "), "\(error)")
            #expect(error.hint == "convert it to PNG first", "\(error)")
        }
    }

    @Test func aPreviewGoesToItsFileAndNotTheStore() async throws {
        let target = fixture.directory.appendingPathComponent("preview.png")
        try FileManager.default.createDirectory(at: fixture.directory, withIntermediateDirectories: true)
        _ = try await run(FakeGenerator(.writes(Self.png)), destination: .file(target))
        #expect(try BadgeMetadata.read(from: target)?.prompt == "Drink more water")
        #expect(try fixture.store().current() == nil)
    }

    @Test func theConformanceSuiteCanFail() async throws {
        try await GeneratorConformance.check(FakeGenerator(.writes(Self.png)), request: BadgeRequest(prompt: "x"))
        let failure = await #expect(throws: ConformanceFailure.self) {
            try await GeneratorConformance.check(StrayWriter(), request: BadgeRequest(prompt: "x"))
        }
        #expect(failure?.requirement == "workspace", "\(String(describing: failure))")
        #expect(failure?.detail.hasPrefix("wrote files beside its image") == true, "\(String(describing: failure))")
        #expect(failure?.detail.contains("stray.txt") == true, "the stray write is named: \(String(describing: failure))")
    }

    @Test func theConformanceSuiteChecksAModelThatMakesSeveral() async throws {
        try await GeneratorConformance.check(Several(sharesOneFile: false), request: BadgeRequest(prompt: "x"))
        do {
            try await GeneratorConformance.check(Several(sharesOneFile: true), request: BadgeRequest(prompt: "x"))
            Issue.record("two images in one file must fail the suite")
        } catch let failure as ConformanceFailure {
            #expect(failure.requirement == "several images", "\(failure)")
        }
    }

    /// Candidates go to a model that makes several in one call in runs of as many
    /// as a call makes; requests that differ in more than their seeds, one by one.
    @Test func candidatesAreGroupedIntoCallsOnlyWhenOnlyTheSeedDiffers() {
        let backend = BackendInstance(name: "several", type: "fake", generator: Several(sharesOneFile: false, perCall: 2))
        let request = BadgeRequest(prompt: "Run", size: 64, seed: 10)
        #expect(Candidates.calls(for: Candidates.requests(for: request, count: 5), backend: backend) == [[0, 1], [2, 3], [4]])
        #expect(Candidates.calls(for: Candidates.requests(for: request, count: 3, styles: ["a", "b"]), backend: backend) == [[0], [1], [2]])
        let plain = BackendInstance(name: "one", type: "fake", generator: FakeGenerator(.writes(Self.png)))
        #expect(Candidates.calls(for: Candidates.requests(for: request, count: 3), backend: plain) == [[0], [1], [2]])
    }

    @Test func severalImagesFromOneCallEachPassTheIntake() async throws {
        let backend = BackendInstance(name: "several", type: "fake", generator: Several(sharesOneFile: false, perCall: 3, secondIsText: true))
        let results = try await Pipeline(environment: BadgeEnvironment(variables: [:])).renderTogether(
            Candidates.requests(for: BadgeRequest(prompt: "Run", size: 64, seed: 10), count: 3), backend: backend,
            commitment: .init(timeZone: .gmt))
        #expect(results.count == 3)
        #expect(try results[0].get().metadata.seed == 10 && results[2].get().metadata.seed == 12)
        guard case let .failure(error) = results[1] else { Issue.record("the text file must be refused"); return }
        #expect(error.code == .unsupportedFormat && error.backend == "several", "\(error)")
        #expect(error.message.hasPrefix("the file is not an image badge can read"), "\(error)")
    }

    /// A model that makes up to `perCall` images a call; `sharesOneFile` breaks the
    /// contract (both images in one file), `secondIsText` makes the second no image.
    struct Several: MultiImageGenerator {
        var sharesOneFile: Bool
        var perCall = 4
        var secondIsText = false
        func availability() async -> Availability { .available }
        func imagesPerCall(for request: BadgeRequest) -> Int { perCall }
        func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
            try await generate(request, count: 1, in: workspace)[0]
        }
        func generate(_ request: BadgeRequest, count: Int, in workspace: Workspace) async throws -> [GeneratedImage] {
            try Task.checkCancellation()
            return try (0..<count).map { index in
                let name = sharesOneFile ? "image.png" : "image-\(index).png"
                let file = workspace.file(name)
                try (secondIsText && index == 1 ? Data("not a picture".utf8) : PipelineTests.png).write(to: file)
                return GeneratedImage(file: file, seed: request.seed + UInt64(index))
            }
        }
    }

    /// Writes its image and a stray file beside it: not allowed.
    struct StrayWriter: BadgeGenerator {
        func availability() async -> Availability { .available }
        func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
            _ = try workspace.write(Data("junk".utf8), to: "stray.txt")
            let file = try workspace.write(PipelineTests.png, to: "image.png")
            return GeneratedImage(file: file)
        }
    }
}

@Suite(.threadsOfTheirOwn)
struct MetadataTests {
    @Test func stampingRoundTripsEveryField() throws {
        let metadata = BadgeMetadata(
            commitmentDate: Date(timeIntervalSince1970: 1_798_761_600), timeZone: "America/New_York",
            createdAt: Date(timeIntervalSince1970: 1_790_000_000.25), prompt: "Läuft: 早起 🎉", backend: "remote",
            backendType: "http", style: "tile", size: 32, seed: 42, model: "gpt-image-1", revisedPrompt: "a revised one",
            extra: ["motif": "sun <- sunrise"])
        let original = TestPNG.solid(width: 32, height: 32, rgb: (1, 2, 3))
        let stamped = try metadata.stamp(into: original)
        let entries = try PNG.chunks(in: stamped).compactMap(PNG.textEntry)
        let read = try #require(BadgeMetadata(entries: entries))
        #expect(read == BadgeMetadata(
            id: metadata.id, commitmentDate: metadata.commitmentDate, timeZone: metadata.timeZone,
            createdAt: Date(timeIntervalSince1970: 1_790_000_000.25), prompt: metadata.prompt, backend: "remote",
            backendType: "http", style: "tile", size: 32, seed: 42, model: "gpt-image-1", revisedPrompt: "a revised one",
            extra: ["motif": "sun <- sunrise"]))
        #expect(metadata.commitmentDateString == "2026-12-31T19:00:00-05:00")
        // The image data is untouched, passed on byte for byte (its CRC too), and the result is a valid PNG.
        let idat = { (d: Data) in try PNG.chunks(in: d).filter { $0.type == "IDAT" }.map { PNG.rawBytes(of: $0, in: d) } }
        #expect(try idat(stamped) == idat(original))
        #expect(try ImageIntake().inspect(stamped).width == 32)
    }

    @Test func restampingReplacesOldMetadataAndDropsExif() throws {
        var chunks = try PNG.chunks(in: TestPNG.solid(width: 8, height: 8, rgb: (0, 0, 0)))
        chunks.insert(PNGChunk(type: "eXIf", data: Data("GPS here".utf8)), at: 1)
        let first = BadgeMetadata(commitmentDate: Date(), timeZone: "UTC", createdAt: Date(), prompt: "one", backend: "a", backendType: "a", size: 8)
        let second = BadgeMetadata(commitmentDate: Date(), timeZone: "UTC", createdAt: Date(), prompt: "two", backend: "b", backendType: "b", size: 8)
        let twice = try second.stamp(into: try first.stamp(into: PNG.assemble(chunks)))
        let all = try PNG.chunks(in: twice)
        #expect(!all.contains { $0.type == "eXIf" })
        #expect(all.compactMap(PNG.textEntry).filter { $0.keyword == "badge:prompt" }.map(\.text) == ["two"])
    }

    @Test func theLongDateIsTheDayWhereThePromiseWasMade() throws {
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        let day = try BadgeMetadata.parseCommitmentDate("2027-01-01", in: tokyo)
        let metadata = BadgeMetadata(commitmentDate: day, timeZone: "Asia/Tokyo", createdAt: day, prompt: "p", backend: "b", backendType: "b", size: 8)
        // Midnight in Tokyo is still December 31 in UTC, but the badge says January 1.
        #expect(metadata.longCommitmentDate(locale: Locale(identifier: "en_US")) == "January 1, 2027")
        #expect(metadata.longCommitmentDate(locale: Locale(identifier: "de_DE")) == "1. Januar 2027")
    }

    @Test func commitmentDatesAreCheckedAgainstTheCalendar() {
        let impossible = #expect(throws: BadgeError.self) { try BadgeMetadata.parseCommitmentDate("2027-02-30", in: .gmt) }
        #expect(impossible?.code == .usage)
        #expect(impossible?.message == "2027-02-30 is not a date on the calendar")
        #expect(impossible?.hint == "check the month and the day")
        let unreadable = #expect(throws: BadgeError.self) { try BadgeMetadata.parseCommitmentDate("tomorrow", in: .gmt) }
        #expect(unreadable?.code == .usage)
        #expect(unreadable?.message == #"cannot read the date "tomorrow""#)
        #expect(unreadable?.hint?.contains("YYYY-MM-DD") == true, "\(String(describing: unreadable))")
        #expect((try? BadgeMetadata.parseCommitmentDate("2028-02-29", in: .gmt)) != nil)
    }

    /// RFC 3339 as the metadata carries it: "Z" for UTC, the zone's own offset
    /// with a colon otherwise, milliseconds only when asked; and it reads back.
    @Test func datesAreWrittenInRFC3339() throws {
        let date = Date(timeIntervalSince1970: 1_790_000_000.25)
        let zones = [("GMT", "2026-09-21T14:13:20Z"), ("Asia/Kolkata", "2026-09-21T19:43:20+05:30"),
                     ("America/Los_Angeles", "2026-09-21T07:13:20-07:00")]
        for (identifier, expected) in zones {
            let zone = try #require(TimeZone(identifier: identifier))
            #expect(BadgeMetadata.rfc3339(date, in: zone) == expected)
            #expect(BadgeMetadata.parseRFC3339(expected) == Date(timeIntervalSince1970: 1_790_000_000))
        }
        let precise = BadgeMetadata.rfc3339(date, in: .gmt, fractionalSeconds: true)
        #expect(precise == "2026-09-21T14:13:20.250Z")
        #expect(BadgeMetadata.parseRFC3339(precise) == date)
        // Only full timestamps: a day alone is parseCommitmentDate's other form.
        for malformed in ["2026-09-21", "2026-09-21 14:13:20Z", "2026-09-21T14:13Z", "21/09/2026", ""] {
            #expect(BadgeMetadata.parseRFC3339(malformed) == nil, "\(malformed)")
        }
    }

    @Test func crcMatchesTheStandardVector() {
        #expect(CRC32.checksum(Data("123456789".utf8)) == 0xCBF4_3926)
        // A chunk's type and data are checked as one run of bytes.
        #expect(CRC32.checksum(Data("1234".utf8), Data("56789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum(Data(), Data()) == 0)
    }

    @Test func aCorruptChunkIsFoundWithItsOffset() throws {
        var bytes = [UInt8](TestPNG.solid(width: 8, height: 8, rgb: (5, 5, 5)))
        bytes[45] ^= 0xFF  // inside the IDAT chunk that starts at byte 33
        do {
            _ = try PNG.chunks(in: Data(bytes))
            Issue.record("must fail")
        } catch let error as BadgeError {
            #expect(error.message.contains("bad CRC") && error.message.contains("at byte 33"), "\(error)")
        }
    }
}

@Suite(.threadsOfTheirOwn)
struct BackgroundValueTests {
    @Test func theValueIsTheWorksResultAndAFailureIsRethrown() throws {
        let sum = BackgroundValue { (1...1000).reduce(0, +) }
        #expect(try sum.value == 500500)
        // Read again, it does not wait for a second signal.
        #expect(try sum.value == 500500)
        let failing = BackgroundValue { () throws -> Int in throw BadgeError(.io, "the disk is gone") }
        // The very error the work threw, each time the value is read.
        #expect(#expect(throws: BadgeError.self) { try failing.value } == BadgeError(.io, "the disk is gone"))
        #expect(#expect(throws: BadgeError.self) { try failing.value } == BadgeError(.io, "the disk is gone"))
    }
}
