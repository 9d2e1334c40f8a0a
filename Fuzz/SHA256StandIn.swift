import Foundation

// Stands in for BadgeKit's `SHA256` (libcrypto, opened at run time) in the
// intake fuzzer, which scripts/fuzz.sh compiles with this file in place of
// Sources/BadgeKit/SHA256.swift: of the BadgeKit sources the fuzzer builds, only
// `BadgeMetadata.contentID` hashes, and the fuzzer never makes an id. Were it
// ever to, this stops the run instead of hashing wrongly.
final class SHA256 {
    init() throws {
        fatalError("the intake fuzzer has no SHA-256: Fuzz/SHA256StandIn.swift stands in for BadgeKit's")
    }

    func update(_ bytes: some DataProtocol) {}
    func update(_ text: String) {}
    func finalize() -> [UInt8] { [] }
}
