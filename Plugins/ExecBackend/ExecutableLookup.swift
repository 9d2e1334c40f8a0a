#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Finds the program to run the way a shell would, but in the plugin's own
/// PATH (not badge's), so `badge backends` can say "not found" before running anything.
enum ExecutableLookup {
    static func find(_ program: String, path: String) -> String? {
        if program.contains("/") { return isExecutableFile(program) ? program : nil }
        for directory in path.split(separator: ":", omittingEmptySubsequences: true) where directory.hasPrefix("/") {
            let candidate = "\(directory)/\(program)"
            if isExecutableFile(candidate) { return candidate }
        }
        return nil
    }

    static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        return access(path, X_OK) == 0
    }
}
