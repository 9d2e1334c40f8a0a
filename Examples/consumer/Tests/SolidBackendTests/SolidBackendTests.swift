import BadgeKit
import BadgeKitTesting
import Canvas
import CurlTransport
import Foundation
import SolidBackend
import Testing
#if canImport(Glibc)
import Glibc
#endif

struct SolidBackendTests {
    /// The suite every backend passes, from badge's BadgeKitTesting.
    @Test func itPassesTheSharedConformanceSuite() async throws {
        try await GeneratorConformance.check(
            SolidGenerator(color: RGBA(0x2E, 0x86, 0xDE)), request: BadgeRequest(prompt: "Be kind", size: 64), expectDeterministic: true)
    }

    /// badge's HTTP transport, from outside the package: libcurl is opened on
    /// the first request, and a refused connection is a BadgeError that says so.
    @Test func curlTransportReportsARefusedConnection() async throws {
        // A port bound here and never listened on: a connection to it is refused.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        #expect(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let request = HTTPRequest(url: URL(string: "http://127.0.0.1:\(port)/")!, connectTimeout: .seconds(30))
        await #expect {
            _ = try await CurlTransport().send(request)
        } throws: { error in
            (error as? BadgeError)?.code == .network
        }
    }
}
