import BadgeKit
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

// MARK: - 5. Mistakes get the right suggestion

extension FirstTenMinutesTests {
    @Test func aMistypedCommandOrOptionGetsTheNearestRightOne() async throws {
        let s = try Sandbox()
        let command = try await s.run(["genrate", "Run a 5k"])
        #expect(command.status == 64, "\(command.stderr)")
        #expect(command.stderr.contains("'genrate' is not a badge command") && command.stderr.contains("did you mean 'generate'?"),
                "\(command.stderr)")

        let option = try await s.run(["generate", "--stlye", "tile", "Run a 5k"])
        #expect(option.status == 64, "\(option.stderr)")
        #expect(option.stderr.contains("error: unknown option '--stlye'") && option.stderr.contains("did you mean '--style'?"), "\(option.stderr)")
        #expect(!option.stderr.contains("'--store'"), "\(option.stderr)")

        // The candidates are the command's own options: import's --backend, show's --json.
        let importTypo = try await s.run(["import", "--bakcend", "x", "a.png"])
        #expect(importTypo.status == 64 && importTypo.stderr.contains("did you mean '--backend'?"), "\(importTypo.stderr)")
        let nested = try await s.run(["config", "valdiate"])
        #expect(nested.status == 64 && nested.stderr.contains("did you mean 'validate'?"), "\(nested.stderr)")
        let showTypo = try await s.run(["show", "--jsno"])
        #expect(showTypo.status == 64 && showTypo.stderr.contains("did you mean '--json'?"), "\(showTypo.stderr)")
        #expect(s.badge == nil)
    }
}
