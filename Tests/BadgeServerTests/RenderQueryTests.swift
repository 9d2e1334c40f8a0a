@testable import BadgeServer
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Hummingbird
import Testing

/// The render API's query, read strictly: each bad parameter is named, with
/// what it may be, in the words the CLI uses.
@Suite(.threadsOfTheirOwn) struct RenderQueryTests {
    @Test func aFullQueryIsRead() throws {
        let query = try RenderQuery.parse("promise=Run+a+marathon&style=Tile&seed=7&size=512&caption=RUN&date=2027-01-01", maxSize: 1024)
        #expect(query.promise == "Run a marathon")
        #expect(query.style == "tile")
        #expect(query.seed == 7)
        #expect(query.size == 512)
        #expect(query.caption == "RUN")
        #expect(query.date == "2027-01-01")
    }

    @Test func percentEncodingAndPlusAreSpaces() throws {
        let query = try RenderQuery.parse("promise=%E5%AD%A6%E4%B9%A0%20%E4%B8%AD%E6%96%87+daily", maxSize: 1024)
        #expect(query.promise == "学习 中文 daily")
        // Blank is whitespace scalars only: a space carrying a combining accent shows, and is a promise.
        #expect(try RenderQuery.parse("promise=%20%CC%81", maxSize: 1024).promise == " \u{301}")
        let blank = #expect(throws: RenderQuery.Problem.self) { try RenderQuery.parse("promise=+%E3%80%80%C2%A0", maxSize: 1024) }
        #expect(blank?.parameter == "promise" && blank?.message.hasPrefix("the promise is missing") == true, "\(String(describing: blank))")
    }

    /// badge's query decoder against Foundation's (`+` replaced, then
    /// `removingPercentEncoding`): the same string, or nil, for random
    /// queries built from what makes decoding hard: lone and short `%`, hex
    /// digits of either case, bytes that make no UTF-8, NUL, `+`, and
    /// characters of one to four bytes written as they are. Where
    /// Foundation turns bytes that are not UTF-8 into U+FFFD (it does for
    /// `%A9`, not for `%80` or `%FF`), badge refuses them.
    @Test func queryValuesDecodeAsFoundationDecodesThem() throws {
        let pieces = ["%", "+", "%2", "%20", "%2B", "%2b", "%25", "%00", "%C3", "%A9", "%c3%a9", "%E5%AD%A6", "%F0%9F%8F%83", "%FF",
                      "%80", "%ED%A0%80", "%C0%AF", "%g1", "%1g", "a", "F", "0", " ", "=", "é", "学", "🏃", "~", "%%", "\u{0}"]
        var random = SeededRandom.forTest("query decoding")
        var refused = 0
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...8, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            var expected = text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            if expected?.contains("\u{FFFD}") == true { expected = nil }
            let decoded = RenderQuery.decode(text[...])
            #expect(decoded == expected, "\(text.debugDescription): \(String(describing: decoded)) against \(String(describing: expected))")
            if decoded == nil { refused += 1 }
            if decoded != expected { break }
        }
        // Both ways are taken often: what is refused and what is read.
        #expect(refused > 2_000 && refused < 18_000, "\(refused) of 20,000 refused")
        #expect(RenderQuery.decode("%A9") == nil && RenderQuery.decode("%C3%A9+%F0%9F%8F%83") == "é 🏃")
    }

    @Test func withoutASeedTheSeedComesFromThePromise() throws {
        let a = try RenderQuery.parse("promise=Read+more", maxSize: 1024)
        let b = try RenderQuery.parse("promise=Read+more", maxSize: 1024)
        let c = try RenderQuery.parse("promise=Read+less", maxSize: 1024)
        #expect(a.seed == nil)
        #expect(a.effectiveSeed == b.effectiveSeed)
        #expect(a.effectiveSeed != c.effectiveSeed)
        #expect(a.canonical == b.canonical)
        #expect(a.size == RenderQuery.defaultSize)
    }

    /// Two queries that differ name two cache entries, whatever characters
    /// their texts hold: a promise cannot carry another query's fields.
    @Test func noPromiseOrCaptionReadsAsAnotherQuerysFields() throws {
        let a = try RenderQuery.parse("promise=p&seed=1&caption=c%00style%3D%00seed%3D1%00size%3D256", maxSize: 1024)
        let b = try RenderQuery.parse("promise=p%00style%3D%00seed%3D1%00size%3D256%00caption%3Dc&seed=1", maxSize: 1024)
        #expect(a != b)
        #expect(a.canonical != b.canonical)
        let c = try RenderQuery.parse("promise=p&caption=1%3Ax", maxSize: 1024)
        let d = try RenderQuery.parse("promise=p&caption=1:x", maxSize: 1024)
        #expect(c.canonical == d.canonical, "one query, two spellings")
    }

    @Test(arguments: [
        ("style=medal", "promise", "the promise is missing"),
        ("promise=x&style=glitter", "style", "the procedural backend has no style \"glitter\""),
        ("promise=x&size=5000", "size", "size must be from 64 to 1024 pixels, not \"5000\""),
        ("promise=x&size=63", "size", "size must be from 64 to 1024 pixels, not \"63\""),
        ("promise=x&size=big", "size", "size must be from 64 to 1024 pixels, not \"big\""),
        ("promise=x&seed=abc", "seed", "seed must be a whole number, not \"abc\""),
        ("promise=x&seed=-1", "seed", "seed must be a whole number, not \"-1\""),
        ("promise=x&seed=18446744073709551616", "seed", "seed must be a whole number, not \"18446744073709551616\""),
        ("promise=x&date=2027-13-01", "date", "date must be a day written YYYY-MM-DD"),
        ("promise=x&colour=red", "colour", "unknown parameter \"colour\""),
        ("promise=x&promise=y", "promise", "promise is given twice"),
        ("promise=%FF", "promise", "promise is not valid percent-encoded UTF-8"),
    ])
    func eachBadParameterIsNamed(query: String, parameter: String, message: String) {
        #expect {
            try RenderQuery.parse(query, maxSize: 1024)
        } throws: { error in
            guard let problem = error as? RenderQuery.Problem else { return false }
            return problem.parameter == parameter && problem.message.hasPrefix(message) && !problem.allowed.isEmpty
        }
    }

    @Test func aPromiseOverItsLimitIsRefusedWithTheLimit() {
        let long = String(repeating: "a", count: RenderQuery.maxPromiseBytes + 1)
        #expect {
            try RenderQuery.parse("promise=\(long)", maxSize: 1024)
        } throws: { error in
            guard let problem = error as? RenderQuery.Problem else { return false }
            return problem.parameter == "promise" && problem.message == "the promise is 4001 bytes long" && problem.allowed == "1 to 4000 bytes of text"
        }
    }

    @Test func aMistypedParameterGetsASuggestion() {
        #expect {
            try RenderQuery.parse("promise=x&sized=10", maxSize: 1024)
        } throws: { error in
            (error as? RenderQuery.Problem)?.allowed.hasPrefix("did you mean \"size\"?") == true
        }
    }
}

@Suite(.threadsOfTheirOwn) struct ServeSettingsTests {
    @Test func listenAddressesAreRead() throws {
        #expect(try ServeSettings.parseListen("127.0.0.1:8080") == ("127.0.0.1", 8080))
        #expect(try ServeSettings.parseListen("[::1]:0") == ("::1", 0))
        #expect(try ServeSettings.parseListen(":9000") == ("127.0.0.1", 9000))
        #expect(try ServeSettings.parseListen("0.0.0.0:80") == ("0.0.0.0", 80))
    }

    @Test(arguments: ["127.0.0.1", "127.0.0.1:99999", "::1:80", "host:port", "a/b:80", "[::1]80"])
    func badListenAddressesNameTheOption(_ text: String) {
        #expect {
            try ServeSettings.parseListen(text)
        } throws: { error in
            "\(error)".contains("--listen") && "\(error)".contains("HOST:PORT")
        }
    }

    @Test func loopbackIsRecognised() {
        for host in ["127.0.0.1", "127.3.2.1", "localhost", "::1", "app.localhost"] { #expect(ServeSettings.isLoopback(host), "\(host)") }
        for host in ["0.0.0.0", "::", "192.168.1.2", "example.org", "127.0.0.1.evil.org"] { #expect(!ServeSettings.isLoopback(host), "\(host)") }
    }

    @Test func hostNamesAreReadFromTheAuthority() {
        #expect(AccessPolicy.hostName("LocalHost:8080") == "localhost")
        #expect(AccessPolicy.hostName("[::1]:8080") == "::1")
        #expect(AccessPolicy.hostName("evil.org") == "evil.org")
        #expect(AccessPolicy.hostName("a b:80") == nil)
        #expect(AccessPolicy.hostName(nil) == nil)
        #expect(AccessPolicy.hostName("host:8o") == nil)
    }

    @Test func tokensAreComparedWhole() {
        #expect(AccessPolicy.same("abc", "abc"))
        #expect(!AccessPolicy.same("abc", "abd"))
        #expect(!AccessPolicy.same("abc", "abcd"))
        #expect(ServeSettings.newToken().count == 64)
        #expect(ServeSettings.newToken() != ServeSettings.newToken())
    }
}
