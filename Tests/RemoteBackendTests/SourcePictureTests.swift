import BadgeKit
import BadgeTestSupport
import Canvas
import Foundation
import Synchronization
import Testing
@testable import RemoteBackend

/// `--source -`: the picture a remote backend sends, read from standard input.
@Suite(.threadsOfTheirOwn)
struct SourcePictureTests {
    static let here = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)

    /// Read within the intake's limit (one byte more is asked for, to tell a
    /// picture at the limit from one over it) on a thread of badge's (not
    /// Swift's cooperative pool), hashed as given, and sent as a square PNG of
    /// the model's size.
    @Test func aPictureOnStandardInputIsHashedAsGivenAndSentAtTheModelsSize() async throws {
        let given = try PNGEncoder.encode(try Canvas(width: 40, height: 30, background: RGBA(200, 30, 30)))
        let asked = Mutex<(limit: Int, thread: String?)>((0, nil))
        let picture = try await SourcePicture.prepare(
            "-", side: 32, limits: .default, decoder: GDImageDecoder(), workingDirectory: Self.here, backend: "remote",
            readStandardInput: { limit in
                asked.withLock { $0 = (limit, currentThreadName()) }
                return given
            })
        #expect(asked.withLock { $0.limit } == ImageLimits.default.maxFileBytes + 1)
        #expect(asked.withLock { $0.thread } == "badge.blocking")
        #expect(picture.sha256 == (try BatchHash.sha256(given)))
        #expect(picture.png != given)
        let sent = try GDImage.decodePNG(picture.png)
        #expect(sent.width == 32 && sent.height == 32 && picture.side == 32)
        #expect(sent.pixel(16, 16) == RGBA(200, 30, 30))
    }

    /// Over the limit: refused, naming the limit and the backend, and never decoded.
    @Test func aPictureOnStandardInputOverTheLimitIsRefusedBeforeDecoding() async throws {
        var limits = ImageLimits.default
        limits.maxFileBytes = 1000
        let decoder = RefusingDecoder()
        do {
            _ = try await SourcePicture.prepare(
                "-", side: 32, limits: limits, decoder: decoder, workingDirectory: Self.here, backend: "remote",
                readStandardInput: { limit in Data(count: limit) })
            Issue.record("a picture over the limit must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .imageTooLarge)
            #expect(error.message == "the source picture on standard input is larger than 1000 bytes", "\(error.message)")
            #expect(error.backend == "remote")
            #expect(error.hint == "use a smaller picture, or raise intake.maxFileBytes in the configuration")
        }
        #expect(decoder.calls.load(ordering: .relaxed) == 0)
    }

    /// Bytes that are no picture are refused by the intake, before any decoding.
    @Test func wordsOnStandardInputAreRefusedByTheIntake() async throws {
        let decoder = RefusingDecoder()
        do {
            _ = try await SourcePicture.prepare(
                "-", side: 32, limits: .default, decoder: decoder, workingDirectory: Self.here, backend: "remote",
                readStandardInput: { _ in Data("not a picture at all, just words".utf8) })
            Issue.record("words must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .unsupportedFormat, "\(error.code): \(error.message)")
            #expect(error.backend == "remote")
            #expect(error.path == "standard input", "\(String(describing: error.path))")
        }
        #expect(decoder.calls.load(ordering: .relaxed) == 0)
    }
}

/// A decoder that counts the calls it gets and decodes nothing.
private final class RefusingDecoder: ImageDecoding {
    let calls = Atomic<Int>(0)

    func validate(_ data: Data, header: ImageIntake.Header, stop: DecodeStop) async throws {
        calls.add(1, ordering: .relaxed)
        throw BadgeError(.invalidImage, "not expected to decode")
    }

    func normalized(_ data: Data, header: ImageIntake.Header, side: Int, stop: DecodeStop) async throws -> Data {
        calls.add(1, ordering: .relaxed)
        throw BadgeError(.invalidImage, "not expected to decode")
    }
}
