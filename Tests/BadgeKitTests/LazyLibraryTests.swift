import BadgeTestSupport
import CLazyLibraryProbe
import Foundation
import Subprocess
import SystemPackage
import Testing

/// CLazyLibrary, the loader behind libgd, libcurl, libcrypto and libraqm: a
/// function the library lacks fails only its own calls when it is optional,
/// the whole load when it is required; and a forwarder whose prototype is not
/// the one in the library's header does not compile. The probes are two
/// libraries over zlib (Tests/CLazyLibraryProbe).
@Suite(.threadsOfTheirOwn)
struct LazyLibraryTests {
    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test func aMissingOptionalFunctionFailsOnlyItsOwnCalls() throws {
        var message = [CChar](repeating: 0, count: 512)
        #expect(badge_probe_optional_load(&message, message.count) == 0, "\(Self.text(message))")
        // The function zlib has works...
        let version = String(cString: try #require(badge_zlibVersion()))
        #expect(version == String(cString: zlibVersion()))
        // ...and the one it lacks answers nothing, and says why, on this thread.
        #expect(badge_probe_function_zlib_lacks(7) == nil)
        #expect(badge_probe_optional_missing(&message, message.count) == 1)
        #expect(Self.text(message) == "libz.so.1 has no function probe_function_zlib_lacks (an older version?)")
        // Asking again finds nothing: the answer was taken.
        #expect(badge_probe_optional_missing(&message, message.count) == 0)
    }

    @Test func aMissingRequiredFunctionFailsTheLoadNamingIt() {
        var message = [CChar](repeating: 0, count: 512)
        #expect(badge_probe_required_load(&message, message.count) == -1)
        #expect(Self.text(message) == "libz.so.1 has no function probe_function_zlib_lacks (an older version?)")
        // Later loads answer the first one's result.
        var again = [CChar](repeating: 0, count: 512)
        #expect(badge_probe_required_load(&again, again.count) == -1)
        #expect(Self.text(again) == Self.text(message))
    }

    /// One C file a list of one entry, zlib's crc32: written as zlib.h
    /// declares it, it compiles; with one parameter's type wrong, the compiler
    /// refuses it, naming the function.
    @Test func aForwarderWithTheWrongPrototypeDoesNotCompile() async throws {
        let include = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/CLazyLibrary/include").standardizedFileURL.path
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lazy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func compile(_ parameters: String) async throws -> (succeeded: Bool, errors: String) {
            let file = directory.appendingPathComponent("probe-\(UUID().uuidString).c")
            try """
                #include <zlib.h>
                #include "badge_lazy_library.h"
                #define PROBE(RETURNING, VOID, OPTIONAL) RETURNING(uLong, crc32, \(parameters), (crc, buf, len))
                PROBE(BADGE_LAZY_DECLARE, BADGE_LAZY_DECLARE_VOID, BADGE_LAZY_DECLARE)
                BADGE_LAZY_LIBRARY_DEFINE(probe, "libz.so.1", PROBE)
                """.write(to: file, atomically: true, encoding: .utf8)
            let result = try await Subprocess.run(
                .name("clang"), arguments: ["-fsyntax-only", "-I", include, file.path],
                output: .discarded, error: .string(limit: 1 << 16))
            return (result.terminationStatus.isSuccess, result.standardError)
        }
        async let right = compile("(uLong crc, const Bytef *buf, uInt len)")
        async let wrong = compile("(uLong crc, const Bytef *buf, size_t len)")
        let (good, bad) = try await (right, wrong)
        #expect(good.succeeded, "\(good.errors)")
        #expect(!bad.succeeded)
        #expect(bad.errors.contains("badge_crc32's prototype differs from crc32's in the library's header"), "\(bad.errors)")
    }
}
