@testable import BadgeServer
import BadgeTestSupport
import Foundation
import Testing

/// `TokenStrength`: random tokens of 128 bits and more pass; words, dates,
/// short tokens, runs and repeats do not.
@Suite(.threadsOfTheirOwn) struct TokenStrengthTests {
    @Test func randomTokensOfEnoughBitsPass() {
        var generator = SystemRandomNumberGenerator()
        let base64 = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let hex = Array("0123456789abcdef")
        for _ in 0..<2000 {
            #expect(TokenStrength.weakness(of: ServeSettings.newToken()) == nil)
            // The shortest that pass: 32 hex digits (openssl rand -hex 16), 22 of base64url.
            let shortHex = String((0..<32).map { _ in hex[Int(generator.next() % 16)] })
            #expect(TokenStrength.weakness(of: shortHex) == nil, "\(shortHex)")
            let shortBase64 = String((0..<22).map { _ in base64[Int(generator.next() % 64)] })
            #expect(TokenStrength.weakness(of: shortBase64) == nil, "\(shortBase64)")
        }
    }

    @Test(arguments: [
        ("0123456789abcdef", "16 characters of 16 kinds hold at most 64 bits of randomness, and 128 are needed"),
        ("correcthorsebatterystaple", "25 characters of 26 kinds hold at most 117 bits of randomness, and 128 are needed"),
        ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "it is made of only 1 different character, and 8 are needed"),
        ("acacacacacacacacacacacacacacacacacac", "it is made of only 2 different characters, and 8 are needed"),
        ("abcdefghijklmnopqrstuvwxyzABCDEFGH", "steps go to the same or the next character (like abcd or 1111)"),
    ])
    func weakTokensAreRefusedWithTheReason(token: String, reason: String) {
        let weakness = TokenStrength.weakness(of: token)
        #expect(weakness?.contains(reason) == true, "\(weakness ?? "passed")")
        #expect(weakness.map { !$0.contains(token) } ?? true, "the reason shows the token")
    }
}
