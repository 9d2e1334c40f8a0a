import Foundation
import Testing

// MARK: - 13. Seeds give visibly different variants

extension FirstTenMinutesTests {
    /// Four seeds of one promise are four designs (face pattern, rim, what stands
    /// around the motif: the "layout" the badge records), not four hues of one;
    /// each is a different file, and a seed given again gives the same bytes.
    /// ArtEngine4Tests.fourSeedsGiveFourLayouts measures the pictures' edges.
    @Test func fourSeedsAreFourDesigns() async throws {
        let s = try Sandbox()
        // A fixed "now", so the badge's metadata (and so its bytes) depend on the request alone.
        let reproducible = ["SOURCE_DATE_EPOCH": "1767225600"]
        var layouts: [String] = []
        var files: [Data] = []
        for seed in 1...4 {
            let out = s.root.appendingPathComponent("seed-\(seed).png")
            let result = try await s.run(["generate", "--json", "--size", "128", "--seed", "\(seed)", "--output", out.path, "Meditate daily"],
                                      extraEnvironment: reproducible)
            #expect(result.status == 0, "\(result.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let extra = try #require(json["extra"] as? [String: Any])
            layouts.append(try #require(extra["layout"] as? String))
            files.append(try Data(contentsOf: out))
        }
        #expect(Set(layouts).count == 4, "four seeds gave the layouts \(layouts)")
        #expect(Set(files).count == 4)
        let again = s.root.appendingPathComponent("again.png")
        let repeated = try await s.run(["generate", "--size", "128", "--seed", "3", "--output", again.path, "Meditate daily"],
                                      extraEnvironment: reproducible)
        #expect(repeated.status == 0, "\(repeated.stderr)")
        #expect(try Data(contentsOf: again) == files[2], "seed 3 again drew other bytes")
    }
}
