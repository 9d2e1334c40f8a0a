import Foundation

/// The hashes a batch relies on.
package enum BatchHash {
    /// SHA-256 of `data`, lowercase hex: the manifest's file digests and request hashes.
    /// Throws `.missingLibrary` when libcrypto cannot be opened.
    package static func sha256(_ data: Data) throws -> String { try SHA256.hex(of: data) }

    package static func sha256(_ text: String) throws -> String { try sha256(Data(text.utf8)) }

    /// FNV-1a, 64-bit: a stable, platform-independent hash for seeds and shards
    /// (Swift's `Hasher` is seeded per process, so it cannot be used for either).
    package static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
