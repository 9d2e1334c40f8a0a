import Foundation

/// The config's `batch` section: where batch output goes, how much runs at
/// once, and (optionally) the jobs themselves.
package struct BatchSettings: Sendable {
    package static let concurrencyRange = 1...256
    package static let defaultOutput = "badges"
    /// Enough to overlap the network waits of remote backends; CPU-bound
    /// backends are held to the core count by their own limit.
    package static let defaultConcurrency = 8

    /// Resolved against the config file's directory.
    package var output: URL?
    package var concurrency: Int?
    package var failFast = false
    /// The jobs written in the config, if any.
    package var jobs: BatchManifest?

    package init() {}

    static func read(_ object: ConfigObject, baseDirectory: URL) throws -> BatchSettings {
        try object.allowOnly(["output", "concurrency", "failFast", "jobs"])
        var settings = BatchSettings()
        if let output = try object.value("output")?.nonEmptyString() {
            settings.output = BadgeConfig.resolvePath(output, relativeTo: baseDirectory)
        }
        settings.concurrency = try object.int("concurrency", in: concurrencyRange)
        settings.failFast = try object.bool("failFast") ?? false
        if let list = object.value("jobs") {
            settings.jobs = BatchManifest(
                jobs: try BatchManifest.jobs(in: list, baseDirectory: baseDirectory),
                source: (object.file ?? "configuration") + " (batch.jobs)")
        }
        return settings
    }
}
