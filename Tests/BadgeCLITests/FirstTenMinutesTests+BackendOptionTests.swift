import BadgeKit
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

// MARK: - 3. No option is silently ignored

extension FirstTenMinutesTests {
    static let picture = CommandTests.pngsuite.appendingPathComponent("basn6a08.png")

    @Test func importHonoursFitAndBackgroundAsOptionsAndRefusesTheRest() async throws {
        let s = try Sandbox()
        let contained = try await s.run(["import", "--json", "--size", "64", "--option", "fit=contain", "--option", "background=blur",
                                         Self.picture.path, "My picture"])
        #expect(contained.status == 0, "\(contained.stderr)")
        #expect(try json(contained.stdout)["model"] as? String == "import (contain)", "\(contained.stdout)")

        let typo = try await s.run(["import", "--size", "64", "--option", "fitt=contain", Self.picture.path, "My picture"])
        #expect(typo.status == 64, "\(typo.stderr)")
        #expect(typo.stderr.contains("unknown --option \"fitt\"") && typo.stderr.contains("did you mean \"fit\"?"), "\(typo.stderr)")

        let badValue = try await s.run(["import", "--size", "64", "--option", "fit=contian", Self.picture.path, "My picture"])
        #expect(badValue.status == 64 && badValue.stderr.contains("did you mean \"contain\"?"), "\(badValue.stderr)")

        let styled = try await s.run(["import", "--size", "64", "--style", "medal", Self.picture.path, "My picture"])
        #expect(styled.status == 64, "\(styled.stderr)")
        #expect(styled.stderr.contains("--style medal") && styled.stderr.contains("has no styles"), "\(styled.stderr)")

        let procedural = try await s.run(["generate", "--size", "64", "--option", "fit=contain", "Run a 5k"])
        #expect(procedural.status == 64 && procedural.stderr.contains("unknown --option \"fit\"")
                && procedural.stderr.contains("reads no --option"), "\(procedural.stderr)")
        // Only the first import changed the store.
        #expect(try BadgeMetadata.read(from: s.store.appendingPathComponent("badge.png"))?.model == "import (contain)")
    }
}
