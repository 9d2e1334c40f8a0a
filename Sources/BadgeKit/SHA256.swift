internal import CLibcrypto
import Foundation

/// SHA-256 by OpenSSL's libcrypto, which is opened the first time a hash is
/// made: the batch manifest's digests and request hashes, and the ids of
/// reproducible runs.
package final class SHA256 {
    private let context: OpaquePointer
    private var finished = false

    /// Throws `.missingLibrary` when libcrypto cannot be opened.
    package init() throws {
        try Self.loadLibrary()
        guard let context = badge_EVP_MD_CTX_new() else {
            throw BadgeError(.generationFailed, "libcrypto could not make a SHA-256 context (out of memory?)")
        }
        guard badge_EVP_DigestInit_ex(context, badge_EVP_sha256(), nil) == 1 else {
            badge_EVP_MD_CTX_free(context)
            throw BadgeError(.generationFailed, "libcrypto could not start a SHA-256 hash")
        }
        self.context = context
    }

    deinit { badge_EVP_MD_CTX_free(context) }

    package func update(_ bytes: some DataProtocol) {
        precondition(!finished, "SHA256.update after finalize")
        for region in bytes.regions {
            region.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress, buffer.count > 0 else { return }
                // EVP_DigestUpdate fails only on a context that was never initialised.
                _ = badge_EVP_DigestUpdate(context, base, buffer.count)
            }
        }
    }

    package func update(_ text: String) { update(Data(text.utf8)) }

    /// The 32-byte digest; the hash takes no more input after it.
    package func finalize() -> [UInt8] {
        precondition(!finished, "SHA256.finalize twice")
        finished = true
        var digest = [UInt8](repeating: 0, count: 32)
        var size: UInt32 = 0
        _ = badge_EVP_DigestFinal_ex(context, &digest, &size)
        return digest
    }

    /// The digest of `bytes` as 64 lowercase hex digits.
    package static func hex(of bytes: some DataProtocol) throws -> String {
        let hash = try SHA256()
        hash.update(bytes)
        return hash.finalize().map { hexDigits(UInt64($0), count: 2) }.joined()
    }

    private static func loadLibrary() throws {
        guard badge_libcrypto_load(nil, 0) != 0 else { return }
        var message = [CChar](repeating: 0, count: 512)
        _ = badge_libcrypto_load(&message, message.count)
        let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw BadgeError(.missingLibrary, "badge cannot compute SHA-256: \(reason)", hint: "install it: apt-get install libssl3")
    }
}
