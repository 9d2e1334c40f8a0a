import BadgeKit
import BadgeTestSupport
import Foundation
import Testing

/// BadgeKit's SHA-256 (OpenSSL's libcrypto, opened on first use): FIPS 180-2's
/// examples, input in pieces, and coreutils' sha256sum on badge's own files.
@Suite(.threadsOfTheirOwn)
struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func theStandardsExamples(text: String, digest: String) throws {
        let hex = try BatchHash.sha256(text)
        #expect(hex == digest)
    }

    /// A million "a"s, fed in pieces of different lengths and kinds: the digest of the whole.
    @Test func inputInPiecesHashesAsOne() throws {
        let hash = try SHA256()
        var fed = 0
        var length = 1
        while fed < 1_000_000 {
            let count = min(length, 1_000_000 - fed)
            if length % 2 == 0 {
                hash.update(Data(repeating: 0x61, count: count))
            } else {
                hash.update(String(repeating: "a", count: count))
            }
            fed += count
            length = length * 3 + 1
        }
        let hex = hash.finalize().map { String(format: "%02x", $0) }.joined()
        #expect(hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Every file in Tests/Data, as sha256sum hashes it.
    @Test func agreesWithSha256sumOnTheTestData() throws {
        let data = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Data")
        let files = try #require(FileManager.default.enumerator(at: data, includingPropertiesForKeys: [.isRegularFileKey]))
            .compactMap { $0 as? URL }
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
            .sorted { $0.path < $1.path }
            .prefix(40)
        #expect(files.count >= 10)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = files.map(\.path)
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        try? output.fileHandleForWriting.close()
        // Forty lines fit in the pipe: sha256sum ends before they are read.
        let ended = process.waitUntilExit(orKillAfter: .seconds(60))
        #expect(ended, "sha256sum did not finish within 60 s")
        let text = String(decoding: PipeReading.readAll(output.fileHandleForReading), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        let expected = text.split(separator: "\n").map { String($0.prefix(64)) }
        let computed = try files.map { try BatchHash.sha256(Data(contentsOf: $0)) }
        #expect(computed == expected)
    }
}
