import BadgeKit
import BadgeTestSupport
import Foundation
import Testing

/// Reading a file whole through its checked descriptor: what fstat said,
/// within the limit, in memory of the file's size.
@Suite(.threadsOfTheirOwn)
final class RegularFileTests: @unchecked Sendable {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-regular-\(UUID().uuidString)")

    init() throws { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false) }
    deinit { try? FileManager.default.removeItem(at: directory) }

    private func file(_ name: String, _ bytes: Data) throws -> String {
        let url = directory.appendingPathComponent(name)
        try bytes.write(to: url)
        return url.path
    }

    /// The process's virtual size, from /proc/self/statm.
    private static func virtualBytes() throws -> Int {
        let fields = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8).split(separator: " ")
        return try #require(Int(fields[0])) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test func aSmallFileUnderAHugeLimitTakesItsOwnSizeInMemory() throws {
        // Past the 14 bytes a Data holds inline, so the buffer read into is the one kept.
        let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let path = try file("small.png", bytes)
        let before = try Self.virtualBytes()
        let data = try RegularFile.contents(of: path, limit: 8 << 30)
        let during = try Self.virtualBytes()
        #expect(data == bytes)
        // A buffer of the limit's size would add 8 GiB of address space; other
        // tests running beside this one add far less than 4.
        #expect(during - before < 4 << 30, "reading 100 KB took \((during - before) >> 20) MiB of address space")
    }

    @Test func aFileOfExactlyTheLimitIsReadAndOneByteMoreIsRefused() throws {
        let exact = try file("exact", Data(repeating: 7, count: 4096))
        #expect(try RegularFile.contents(of: exact, limit: 4096).count == 4096)
        let over = try file("over", Data(repeating: 7, count: 4097))
        #expect(throws: RegularFile.Failure.tooLarge(size: 4097, limit: 4096)) { try RegularFile.contents(of: over, limit: 4096) }
    }

    @Test func aFileThatGrowsAfterTheOpenIsReadToItsEnd() throws {
        let path = try file("growing", Data(repeating: 1, count: 1000))
        let opened = try RegularFile(path)
        #expect(opened.size == 1000)
        // 3 MB more than fstat said: read on, a megabyte at a time, to the end.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(repeating: 2, count: 3 << 20))
        try handle.close()
        let data = try opened.readAll(limit: 8 << 20)
        #expect(data.count == 1000 + 3 << 20)
        #expect(data.prefix(1000).allSatisfy { $0 == 1 } && data.suffix(3 << 20).allSatisfy { $0 == 2 })
    }

    @Test func aFileThatGrowsPastTheLimitAfterTheOpenIsRefused() throws {
        let path = try file("growing-past", Data(repeating: 1, count: 1000))
        let opened = try RegularFile(path)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(repeating: 2, count: 5000))
        try handle.close()
        #expect(throws: RegularFile.Failure.tooLarge(size: 4097, limit: 4096)) { try opened.readAll(limit: 4096) }
    }

    @Test func aFileWhoseSizeSaysNothingIsReadWhole() throws {
        // The kernel's files say 0 bytes to fstat and hold more.
        let opened = try RegularFile("/proc/self/status")
        #expect(opened.size == 0)
        let text = String(decoding: try opened.readAll(limit: 1 << 20), as: UTF8.self)
        #expect(text.hasPrefix("Name:") && text.contains("\nPid:"), "\(text.prefix(200))")
    }

    /// A picture over `intake.maxFileBytes` is refused with its size and the limit, and what to do.
    @Test func aPictureOverTheLimitIsRefusedWithItsSize() throws {
        let path = try file("big.png", Data(repeating: 7, count: 2000))
        do {
            _ = try RegularFile.picture(at: path, limit: 1000)
            Issue.record("a picture over the limit must be refused")
        } catch let error as BadgeError {
            #expect(error.code == .imageTooLarge)
            #expect(error.message == "the file is 2000 bytes, more than the 1000 allowed", "\(error.message)")
            #expect(error.path == path)
            #expect(error.hint == "raise intake.maxFileBytes in the configuration, or use a smaller file")
        }
    }
}
