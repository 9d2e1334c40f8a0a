import BadgeKit
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

// MARK: - 2. An unreadable store is an error, not an empty store

extension FirstTenMinutesTests {
    /// Mode 000 stops everyone but root: as root, the child drops to nobody (65534).
    static var asNonRoot: [String] {
        getuid() == 0 ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
    }

    @Test func anUnreadableStoreIsAPermissionErrorNotAnEmptyOne() async throws {
        let s = try Sandbox()
        #expect(try await s.run(["generate", "--size", "64", "--seed", "1", "Run a 5k"]).status == 0)
        #expect(try await s.run(["generate", "--size", "64", "--seed", "2", "Run a 10k"]).status == 0)
        let history = try await s.run(["history", "--json"])
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]])
        let earlier = try #require(entries.first?["id"] as? String)
        // The sandbox's directories are root's 0755: nobody can reach the binary and the store's parent.
        #expect(chmod(s.store.path, 0) == 0)
        defer { chmod(s.store.path, 0o755) }
        for arguments in [["show"], ["show", "--json"], ["history"], ["history", "--json"], ["verify"], ["restore", earlier]] {
            let result = try await s.run(arguments, prefix: Self.asNonRoot)
            #expect(result.status == 1, "badge \(arguments.joined(separator: " ")): \(result.status) \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains(s.store.path) && result.stderr.contains("Permission denied"),
                    "badge \(arguments.joined(separator: " ")) must name the path and the permission error: \(result.stderr)")
            #expect(!result.stderr.contains("no badge yet") && !result.stderr.contains("No earlier badges")
                    && !result.stderr.contains("no such file"), "\(result.stderr)")
            #expect(result.stdout.isEmpty, "badge \(arguments.joined(separator: " ")) printed a result: \(result.stdout)")
        }
        // Only a store that is not there is empty.
        #expect(chmod(s.store.path, 0o755) == 0)
        let missing = try Sandbox()
        let show = try await missing.run(["show"], prefix: Self.asNonRoot)
        #expect(show.status == 1 && show.stderr.contains("there is no badge yet"), "\(show.stderr)")
        let none = try await missing.run(["history", "--json"], prefix: Self.asNonRoot)
        #expect(none.status == 0, "\(none.stderr)")
        #expect((try JSONSerialization.jsonObject(with: Data(none.stdout.utf8)) as? [Any])?.isEmpty == true, "\(none.stdout)")
    }
}
