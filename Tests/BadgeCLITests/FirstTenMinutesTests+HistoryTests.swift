import BadgeKit
import Foundation
import Testing

// MARK: - 12. History in the order badges were replaced, with the time, in columns

extension FirstTenMinutesTests {
    @Test func historyListsTheMostRecentlyReplacedFirstInAlignedColumns() async throws {
        let s = try Sandbox()
        let config = s.root.appendingPathComponent("config.json")
        try Data(#"{"backends": {"a-rather-long-backend-name": {"type": "procedural"}}}"#.utf8).write(to: config)
        func make(_ prompt: String, backend: String = "procedural") async throws -> String {
            let result = try await s.run(["generate", "--config", config.path, "--backend", backend, "--size", "64", "--json", prompt])
            #expect(result.status == 0, "\(result.stderr)")
            return try #require(try json(result.stdout)["id"] as? String)
        }
        let a = try await make("Promise A")
        _ = try await make("Promise B", backend: "a-rather-long-backend-name")
        _ = try await make("Promise C")
        #expect(try await s.run(["restore", String(a.prefix(8))]).status == 0)
        _ = try await make("Promise D")
        // A was replaced last (by D), though it was made first; then C (by the restore), then B.
        let listed = try await s.run(["history", "--config", config.path])
        #expect(listed.status == 0, "\(listed.stderr)")
        let lines = listed.stdout.split(separator: "\n").map(String.init)
        #expect(lines.map { String($0.components(separatedBy: "  ").last?.prefix(9) ?? "") } == ["Promise A", "Promise C", "Promise B"],
                "\(listed.stdout)")
        let promiseColumn = lines.map { $0.range(of: "Promise")!.lowerBound.utf16Offset(in: $0) }
        #expect(Set(promiseColumn).count == 1, "the promises do not start in one column:\n\(listed.stdout)")
        #expect(lines.allSatisfy { $0.range(of: #"replaced .*\d{1,2}:\d{2}"#, options: .regularExpression) != nil }, "no time of day:\n\(listed.stdout)")

        let entries = try #require(try JSONSerialization.jsonObject(with: Data(try await s.run(["history", "--json"]).stdout.utf8)) as? [[String: Any]])
        #expect(entries.map { $0["prompt"] as? String } == ["Promise A", "Promise C", "Promise B"])
        #expect(entries.allSatisfy { $0["replacedAt"] is String })
    }
}
