import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing

/// The stages every badge passes are types: a backend's `GeneratedImage`
/// becomes an `AdmittedImage` only in the intake, that becomes a
/// `CheckedBadge` only by the stamp and the PNG check, and the store commits
/// nothing else. The compiler holds who may make each (docs/DEVELOPING.md);
/// these tests hold what each one carries.
@Suite(.threadsOfTheirOwn)
struct StageTests {
    let fixture = StoreFixture()
    static let side = 64
    static let png = TestPNG.solid(width: side, height: side, rgb: (40, 80, 120))
    static let environment = BadgeEnvironment(now: { Date(timeIntervalSince1970: 1_790_000_000) }, variables: [:])

    static func backend(_ png: Data = png, encodedInProcess: Bool = false) -> BackendInstance {
        BackendInstance(name: "fake-one", type: "fake", generator: FakeGenerator(.writes(png), encodedInProcess: encodedInProcess))
    }

    static func request(seed: UInt64 = 5) -> BadgeRequest {
        BadgeRequest(prompt: "Drink more water", size: side, seed: seed)
    }

    /// The badge's text chunks of `png`, as "keyword=text".
    static func stampedEntries(_ png: Data) throws -> [String] {
        try PNG.chunks(in: png).compactMap(PNG.textEntry).filter { $0.keyword.hasPrefix("badge:") }.map { "\($0.keyword)=\($0.text)" }
    }

    /// What holds for every `CheckedBadge`: its PNG carries exactly its
    /// metadata, once, and passes the intake and the PNG check.
    static func expectStampedAndChecked(_ png: Data, as metadata: BadgeMetadata, _ comment: Comment) throws {
        #expect(try stampedEntries(png) == metadata.textEntries.map { "\($0.keyword)=\($0.text)" }, comment)
        #expect(try BadgeMetadata(entries: PNG.chunks(in: png).compactMap(PNG.textEntry))?.id == metadata.id, comment)
        #expect(throws: Never.self, comment) { try PNGDataCheck.verify(png) }
        #expect(try ImageIntake().inspect(png) == ImageIntake.Header(format: .png, width: side, height: side), comment)
    }

    @Test func aRenderedBadgeCarriesItsMetadataStampedAndChecked() async throws {
        for drawn in [false, true] {
            let badge = try await Pipeline(environment: Self.environment).render(
                Self.request(), backend: Self.backend(encodedInProcess: drawn), commitment: .init(timeZone: .gmt), extra: ["batch": "7"])
            try Self.expectStampedAndChecked(badge.png, as: badge.metadata, "drawn in process: \(drawn)")
            #expect(badge.metadata.size == Self.side && badge.metadata.extra["batch"] == "7")
            #expect(badge.metadata.prompt == "Drink more water" && badge.metadata.backend == "fake-one")
        }
    }

    /// The intake reads headers, limits and CRCs; only the stamp's check
    /// inflates the image data, so an admitted image whose data falls short
    /// of its header never becomes a `CheckedBadge`.
    @Test func imageDataShortOfItsHeaderIsAdmittedButNeverChecked() throws {
        let full = try PNG.chunks(in: Self.png)
        let rows = Self.side * (1 + 3 * Self.side)
        let short = PNG.assemble([
            full[0], PNGChunk(type: "IDAT", data: TestPNG.storedZlib([UInt8](repeating: 0, count: rows - (1 + 3 * Self.side)))),
            PNGChunk(type: "IEND", data: Data()),
        ])
        let metadata = BadgeMetadata(
            commitmentDate: Date(timeIntervalSince1970: 1_800_000_000), timeZone: "UTC", createdAt: Date(timeIntervalSince1970: 1_800_000_000),
            prompt: "short", backend: "fake-one", backendType: "fake", size: Self.side)
        let admitted = try ImageIntake().admit(short, madeWith: metadata)
        #expect(admitted.header == ImageIntake.Header(format: .png, width: Self.side, height: Self.side))
        let error = #expect(throws: BadgeError.self) { try CheckedBadge(stamping: metadata, into: admitted) }
        #expect(error?.code == .invalidImage)
        #expect(error?.message == "the PNG's image data holds \(rows - (1 + 3 * Self.side)) bytes where its header promises \(rows)",
                "\(String(describing: error))")
    }

    @Test func theIntakeOfABadgeMadeEarlierRefusesWhatIsNotAPNG() throws {
        let metadata = BadgeMetadata(
            commitmentDate: Date(), timeZone: "UTC", createdAt: Date(), prompt: "p", backend: "b", backendType: "t", size: Self.side)
        let error = #expect(throws: BadgeError.self) {
            try ImageIntake().admit(Data("GIF89a not a badge".utf8), madeWith: metadata, source: "out/1.png")
        }
        #expect(error?.code == .unsupportedFormat && error?.path == "out/1.png", "\(String(describing: error))")
        #expect(error?.message == "the file is a GIF image; accepted here: PNG", "\(String(describing: error))")
    }

    /// A badge stamped again (a candidate committed) carries only its new
    /// metadata: the earlier stamp's chunks are gone, none is doubled.
    @Test func stampingAgainReplacesTheEarlierMetadata() async throws {
        let pipeline = Pipeline(environment: Self.environment)
        let candidate = try await pipeline.render(Self.request(), backend: Self.backend(), commitment: .init(timeZone: .gmt))
        let day = try BadgeMetadata.parseCommitmentDate("2027-01-01", in: TimeZone(identifier: "Asia/Tokyo")!)
        let committed = try await pipeline.commit(
            candidate, commitment: .init(date: day, timeZone: TimeZone(identifier: "Asia/Tokyo")!), to: .store(fixture.store()))
        #expect(committed.metadata.id != candidate.metadata.id, "committing is the promise: a new id")
        #expect(committed.metadata.commitmentDateString == "2027-01-01T00:00:00+09:00")
        let stored = try Data(contentsOf: fixture.store().badgeURL)
        try Self.expectStampedAndChecked(stored, as: committed.metadata, "the candidate committed")
        #expect(try Self.stampedEntries(stored).filter { $0.hasPrefix("badge:id=") } == ["badge:id=\(committed.metadata.id)"])
    }

    /// Every road into the store (a run, a candidate picked, a batch's output
    /// read back, a restore) leaves a `badge.png` whose bytes zlib inflates
    /// and whose text is the metadata the store reports for it.
    @Test func everyRoadIntoTheStoreLeavesACheckedBadge() async throws {
        let store = fixture.store()
        let pipeline = Pipeline(environment: Self.environment)
        let commitment = Pipeline.Commitment(timeZone: TimeZone(identifier: "Europe/Berlin")!)
        func expectCurrent(_ road: Comment) throws -> BadgeMetadata {
            let current = try #require(try store.current(), road)
            try Self.expectStampedAndChecked(try Data(contentsOf: store.badgeURL), as: current.metadata, road)
            return current.metadata
        }

        let run = try await pipeline.run(Self.request(seed: 1), backend: Self.backend(), commitment: commitment, to: .store(store))
        #expect(try expectCurrent("run") == run.metadata)

        let candidate = try await pipeline.render(Self.request(seed: 2), backend: Self.backend(), commitment: commitment)
        let picked = try await pipeline.commit(candidate, commitment: commitment, to: .store(store))
        #expect(try expectCurrent("a candidate picked") == picked.metadata)

        let output = fixture.directory.deletingLastPathComponent().appendingPathComponent("badge-stage-out-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: output) }
        let written = try await pipeline.run(Self.request(seed: 3), backend: Self.backend(), commitment: commitment, to: .file(output))
        let readBack = try Data(contentsOf: output)
        try Self.expectStampedAndChecked(readBack, as: written.metadata, "a file written")
        let batch = try await pipeline.commit(pipeline.admit(readBack, madeWith: written.metadata), commitment: commitment, to: .store(store))
        #expect(try expectCurrent("a file read back") == batch.metadata)
        #expect(batch.metadata.seed == 3 && batch.metadata.id != written.metadata.id)

        let entry = try #require(try store.history().first { $0.metadata.id == picked.metadata.id })
        let historyBytes = try Data(contentsOf: entry.url)
        let restored = try store.restore(id: picked.metadata.id)
        #expect(try expectCurrent("a restore") == restored.metadata)
        #expect(try Data(contentsOf: store.badgeURL) == historyBytes, "a restore puts the entry's own bytes back")
    }

    /// A history entry is the file an earlier commit wrote; one damaged on
    /// disk since is refused by zlib before it is made current again.
    @Test func aDamagedHistoryEntryIsNotRestored() throws {
        let store = fixture.store()
        try fixture.commit(1)
        let current = try fixture.commit(2)
        let entry = try #require(try store.history().first)
        var chunks = try PNG.chunks(in: Data(contentsOf: entry.url))
        let idat = try #require(chunks.firstIndex { $0.type == "IDAT" })
        var data = [UInt8](chunks[idat].data)
        // The first stored block's length and its complement no longer agree; the CRC is made anew.
        data[5] ^= 0x01
        chunks[idat] = PNGChunk(type: "IDAT", data: Data(data))
        try PNG.assemble(chunks).write(to: entry.url)

        let error = #expect(throws: BadgeError.self) { try store.restore(id: entry.metadata.id) }
        #expect(error?.code == .invalidImage && error?.path == entry.url.path, "\(String(describing: error))")
        #expect(error?.message.hasPrefix("the PNG's image data is not a valid zlib stream") == true, "\(String(describing: error))")
        #expect(error?.hint == "the history entry is damaged; the current badge is unchanged")
        #expect(try Data(contentsOf: store.badgeURL) == current)
        #expect(try store.history().map(\.metadata.id) == [entry.metadata.id])
    }
}
