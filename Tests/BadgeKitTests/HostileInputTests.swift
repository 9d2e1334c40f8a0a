import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue #24: configurations and manifests are files a user names but did
/// not necessarily write; reading them is bounded in time and memory.
@Suite(.threadsOfTheirOwn)
struct HostileInputTests {
    private let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("badge-input-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// One line of `count` backends' worth of values: before, every value
    /// recounted its column from the line's start (a 320 KB line took 36 s).
    /// This 1.7 MB line took about 20 minutes; linear, it parses in seconds,
    /// well within the generous bound on a hang, counted from when the parse
    /// starts (`onThreadOfItsOwn`: Swift Testing's `.timeLimit` also counts the
    /// wait for a cooperative thread, which passed a minute on a loaded machine).
    @Test func aLongOneLineConfigParsesInLinearTime() async throws {
        let count = 40_000
        var text = #"{"historyLimit": 5, "batch": {"jobs": ["#
        text += (0..<count).map { #"{"prompt": "promise \#($0)", "seed": \#($0)}"# }.joined(separator: ", ")
        text += "]}}"
        #expect(text.utf8.count > 1_500_000 && !text.contains("\n"))
        let input = text
        let config = try await onThreadOfItsOwn("parsing a 1.7 MB one-line configuration", limit: .seconds(300)) {
            try BadgeConfig.parse(Data(input.utf8), file: "one-line.json")
        }
        #expect(config.historyLimit == 5)
        // A mistake at the far end of the line (the ']' after a trailing comma) is still placed exactly.
        let broken = String(text.dropLast(2)) + ",]}"
        let error = try await onThreadOfItsOwn("parsing a broken 1.7 MB one-line configuration", limit: .seconds(300)) { () -> BadgeError? in
            do {
                _ = try JSONParser.parse(broken, file: "one-line.json")
                return nil
            } catch let error as BadgeError {
                return error
            }
        }
        #expect(error?.location == SourceLocation(line: 1, column: broken.count - 1, offset: broken.utf8.count - 2),
                "a trailing comma must be refused at its place: \(String(describing: error))")
    }

    /// Columns count characters: a line of multi-byte text before the
    /// mistake, with values before and after it, still gives its column.
    @Test func columnsCountCharactersAcrossManyValuesOnALine() throws {
        let text = #"{"a": "ééé", "b": [1, 2, "日本"], "c": tru}"#
        do {
            _ = try JSONParser.parse(text)
            Issue.record("tru is not JSON")
        } catch let error as BadgeError {
            let column = text.distance(from: text.startIndex, to: text.range(of: "tru}")!.lowerBound) + 1
            #expect(error.location?.line == 1 && error.location?.column == column, "\(error)")
        }
    }

    /// Opening a FIFO for reading would wait for a writer for ever: bounded
    /// from when the load starts (see `onThreadOfItsOwn`).
    @Test func aFIFOAsTheConfigIsRefusedNotWaitedOn() async throws {
        let fifo = directory.appendingPathComponent("config.json")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let error = try await onThreadOfItsOwn("loading a FIFO as the configuration", limit: .seconds(300)) { () -> BadgeError? in
            do {
                _ = try BadgeConfig.load(from: fifo)
                return nil
            } catch let error as BadgeError {
                return error
            }
        }
        let refusal = try #require(error, "a FIFO is not a configuration file")
        #expect(refusal.code == .config)
        #expect(refusal.cause == "it is a FIFO (named pipe), not a regular file", "\(refusal)")
        #expect(refusal.path == fifo.path)
    }

    /// Refused by its type, not read: before, the message said "permission denied".
    @Test func aDeviceAsTheConfigIsNamedForWhatItIs() throws {
        do {
            _ = try BadgeConfig.load(from: URL(fileURLWithPath: "/dev/zero"))
            Issue.record("/dev/zero is not a configuration file")
        } catch let error as BadgeError {
            #expect(error.code == .config)
            #expect(error.cause == "it is a character device, not a regular file", "\(error)")
        }
    }

    /// A 2 GB (sparse) configuration is refused by its size before any of
    /// it is read (before, all of it was read, 2.1 GB of memory, and then refused).
    @Test func anEnormousConfigIsRefusedBeforeItIsRead() throws {
        let huge = directory.appendingPathComponent("huge.json")
        #expect(FileManager.default.createFile(atPath: huge.path, contents: Data("{".utf8)))
        #expect(truncate(huge.path, 2 << 30) == 0)
        do {
            _ = try BadgeConfig.load(from: huge)
            Issue.record("a 2 GB configuration must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .config)
            #expect(error.message == "the configuration file is \(2 << 30) bytes; at most \(8 << 20) bytes (8 MiB) are read", "\(error)")
        }
    }

    /// A backend that read its image from a descriptor it checked hands the
    /// bytes on; the pipeline never opens the path again (where another
    /// file may stand by then).
    @Test func thePipelineUsesTheBytesABackendChecked() async throws {
        let checked = TestPNG.solid(width: 64, height: 64, rgb: (200, 10, 10))
        let swapped = TestPNG.solid(width: 64, height: 64, rgb: (10, 10, 200))
        let store = BadgeStore(directory: directory.appendingPathComponent("store"))
        _ = try await Pipeline(environment: BadgeEnvironment(variables: [:])).run(
            BadgeRequest(prompt: "Drink more water", size: 64),
            backend: BackendInstance(name: "checked", type: "exec", generator: CheckedBytesGenerator(checked: checked, onDisk: swapped)),
            commitment: .init(timeZone: TimeZone(identifier: "UTC")!), to: .store(store))
        let stored = try Data(contentsOf: store.badgeURL)
        func idat(_ png: Data) throws -> Data? { try PNG.chunks(in: png).first { $0.type == "IDAT" }?.data }
        #expect(try idat(stored) == idat(checked))
    }
}

/// Reports `checked` as the bytes it read, while the file holds `onDisk`.
private struct CheckedBytesGenerator: BadgeGenerator {
    var checked: Data
    var onDisk: Data

    func availability() async -> Availability { .available }

    func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
        let file = try workspace.write(onDisk, to: "image.png")
        return GeneratedImage(file: file, bytes: checked)
    }
}
