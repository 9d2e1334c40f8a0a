import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// badge as something a person installs: one version everywhere, `make install` and
/// `make uninstall`, the .deb's tooling, the Containerfile agreeing with `make check-package`,
/// and output that is the same bytes when `SOURCE_DATE_EPOCH` is set.
@Suite(.threadsOfTheirOwn)
struct PackagingTests {
    static let repository = Sandbox.repository

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// A program that was still running at its limit.
    struct Hang: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs a program to completion on a thread of its own (not a cooperative one).
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                    in directory: URL = repository) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result {
                    let process = ChildProcess()
                    process.executableURL = URL(fileURLWithPath: executable)
                    process.arguments = arguments
                    process.currentDirectoryURL = directory
                    if let environment { process.environment = environment }
                    process.standardInput = FileHandle.nullDevice
                    let out = Pipe(), err = Pipe()
                    process.standardOutput = out
                    process.standardError = err
                    try process.run()
                    let group = DispatchGroup()
                    final class Sink: @unchecked Sendable { var data = Data() }
                    let outData = Sink(), errData = Sink()
                    for (pipe, sink) in [(out, outData), (err, errData)] {
                        group.enter()
                        Thread { sink.data = PipeReading.readAll(pipe.fileHandleForReading); group.leave() }.start()
                    }
                    let ended = process.waitUntilExit(orKillAfter: .seconds(600))
                    group.wait()
                    guard ended else {
                        throw Hang(description: "\(executable) \(arguments.joined(separator: " ")) did not finish within 600 s and was killed")
                    }
                    return Output(status: process.terminationStatus, stdout: String(decoding: outData.data, as: UTF8.self),
                                  stderr: String(decoding: errData.data, as: UTF8.self))
                })
            }.start()
        }
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("badge-packaging-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    // MARK: - One version

    @Test func theVersionHasOneSource() async throws {
        let s = try Sandbox()
        let printed = try await s.run(["--version"])
        let version = printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(printed.status == 0 && version == BadgeMetadata.version)
        // The Makefile names the .deb after it, and the Debian changelog's newest entry is it.
        let make = try await Self.run("/usr/bin/env", ["make", "-s", "version"])
        #expect(make.status == 0 && make.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == version, "\(make.stderr)")
        let changelog = try String(contentsOf: Self.repository.appendingPathComponent("packaging/changelog"), encoding: .utf8)
        #expect(changelog.hasPrefix("badge (\(version)) "), "packaging/changelog's first entry is not \(version)")
        // And every badge records it.
        let out = s.root.appendingPathComponent("v.png")
        let made = try await s.run(["generate", "--size", "64", "--seed", "3", "--output", out.path, "Ship it"])
        #expect(made.status == 0, "\(made.stderr)")
        let metadata = try #require(try BadgeMetadata.read(from: out))
        #expect(metadata.generator == "badge \(version)")
    }

    // MARK: - Reproducible output

    @Test func sourceDateEpochMakesTheSameBytes() async throws {
        let s = try Sandbox()
        let environment = ["SOURCE_DATE_EPOCH": "1767225600", "TZ": "UTC"]
        var files: [Data] = []
        for name in ["a.png", "b.png"] {
            let out = s.root.appendingPathComponent(name)
            let made = try await s.run(["generate", "--seed", "1", "--size", "128", "--output", out.path, "x"], extraEnvironment: environment)
            #expect(made.status == 0, "\(made.stderr)")
            files.append(try Data(contentsOf: out))
        }
        #expect(files[0] == files[1], "two runs with the same SOURCE_DATE_EPOCH differ")
        let metadata = try #require(try BadgeMetadata.read(from: s.root.appendingPathComponent("a.png")))
        #expect(metadata.createdAt == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(metadata.commitmentDate == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(metadata.id.count == 16 && metadata.id.allSatisfy(\.isHexDigit))

        // Another epoch is another day, so other bytes and another id.
        let later = s.root.appendingPathComponent("c.png")
        let made = try await s.run(["generate", "--seed", "1", "--size", "128", "--output", later.path, "x"],
                                   extraEnvironment: ["SOURCE_DATE_EPOCH": "1767312000", "TZ": "UTC"])
        #expect(made.status == 0, "\(made.stderr)")
        let other = try #require(try BadgeMetadata.read(from: later))
        #expect(other.commitmentDate == Date(timeIntervalSince1970: 1_767_312_000) && other.id != metadata.id)

        // Without it, ids are random: two runs differ.
        let plain = try await s.run(["generate", "--seed", "1", "--size", "128", "--output", s.root.appendingPathComponent("d.png").path, "x"])
        #expect(plain.status == 0)
        let random = try #require(try BadgeMetadata.read(from: s.root.appendingPathComponent("d.png")))
        #expect(random.id != metadata.id)
    }

    @Test func aMalformedSourceDateEpochIsAUsageError() async throws {
        let s = try Sandbox()
        let out = s.root.appendingPathComponent("a.png")
        let result = try await s.run(["generate", "--output", out.path, "x"], extraEnvironment: ["SOURCE_DATE_EPOCH": "yesterday"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("SOURCE_DATE_EPOCH is not a number of seconds since 1970: \"yesterday\""), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    // MARK: - make install / make uninstall

    /// A stage like `make stage` writes, with small stand-in files.
    static func fakeStage() throws -> URL {
        let stage = try temporaryDirectory()
        let fm = FileManager.default
        try fm.createDirectory(at: stage.appendingPathComponent("completions"), withIntermediateDirectories: true)
        for name in ["badge", "badge.1", "completions/badge.bash", "completions/_badge", "completions/badge.fish", "config.example.json"] {
            try Data("\(name)\n".utf8).write(to: stage.appendingPathComponent(name))
        }
        return stage
    }

    static let installed = [
        "bin/badge", "share/man/man1/badge.1", "share/bash-completion/completions/badge",
        "share/zsh/site-functions/_badge", "share/fish/vendor_completions.d/badge.fish", "share/doc/badge/config.example.json",
    ]

    static func files(under root: URL) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        var found: [String] = []
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory), !isDirectory.boolValue {
                found.append(path)
            }
        }
        return found.sorted()
    }

    @Test func installPutsEachFileWhereItsReaderLooksAndUninstallRemovesExactlyThem() async throws {
        let stage = try Self.fakeStage()
        let work = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: stage); try? FileManager.default.removeItem(at: work) }
        // A missing DESTDIR is created.
        let destdir = work.appendingPathComponent("dest/dir")
        let script = Self.repository.appendingPathComponent("scripts/install.sh").path
        let install = try await Self.run("/bin/bash", [script, "install", stage.path, destdir.path, "/usr/local"])
        #expect(install.status == 0, "\(install.stderr)")
        #expect(Self.files(under: destdir) == Self.installed.map { "usr/local/" + $0 }.sorted())
        let binary = destdir.appendingPathComponent("usr/local/bin/badge").path
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: binary)[.posixPermissions] as? Int)
        #expect(mode == 0o755)
        let page = destdir.appendingPathComponent("usr/local/share/man/man1/badge.1").path
        #expect(try String(contentsOfFile: page, encoding: .utf8) == "badge.1\n")

        // Something else in the same tree stays.
        let other = destdir.appendingPathComponent("usr/local/bin/other")
        try Data("other".utf8).write(to: other)
        let uninstall = try await Self.run("/bin/bash", [script, "uninstall", stage.path, destdir.path, "/usr/local"])
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(Self.files(under: destdir) == ["usr/local/bin/other"])
        let again = try await Self.run("/bin/bash", [script, "uninstall", stage.path, destdir.path, "/usr/local"])
        #expect(again.status == 0 && again.stderr.contains("nothing to remove"))

        // Into an empty DESTDIR and out again: the folders install made go too, and it is empty.
        try FileManager.default.removeItem(at: destdir.appendingPathComponent("usr"))
        let second = try await Self.run("/bin/bash", [script, "install", stage.path, destdir.path, "/usr/local"])
        let out = try await Self.run("/bin/bash", [script, "uninstall", stage.path, destdir.path, "/usr/local"])
        #expect(second.status == 0 && out.status == 0, "\(second.stderr)\(out.stderr)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: destdir.path)) ?? ["?"] == [])
    }

    @Test func installIntoAReadOnlyDestdirFailsClearlyAndLeavesNothing() async throws {
        let stage = try Self.fakeStage()
        let work = try Self.temporaryDirectory()
        defer {
            chmod(work.appendingPathComponent("ro/usr/local/share").path, 0o755)
            try? FileManager.default.removeItem(at: stage)
            try? FileManager.default.removeItem(at: work)
        }
        let readOnly = work.appendingPathComponent("ro")
        // The first targets can be written (usr/local/bin is made, man1 exists), share/ cannot:
        // the install gets halfway, fails, and must take back what it wrote.
        let local = readOnly.appendingPathComponent("usr/local")
        try FileManager.default.createDirectory(at: local.appendingPathComponent("share/man/man1"), withIntermediateDirectories: true)
        for (path, mode) in [(work, 0o755), (readOnly, 0o755), (readOnly.appendingPathComponent("usr"), 0o755), (local, 0o777),
                             (local.appendingPathComponent("share/man"), 0o777), (local.appendingPathComponent("share/man/man1"), 0o777),
                             (local.appendingPathComponent("share"), 0o555), (stage, 0o755)] {
            chmod(path.path, mode_t(mode))
        }
        // root writes anywhere: the install runs as nobody then, as a person without rights would.
        // nobody may not reach the checkout (a clone in a 0700 folder, /root/src/badge), so the
        // script runs from a copy in the work folder, which it can read, and from there.
        let script = work.appendingPathComponent("install.sh")
        try FileManager.default.copyItem(at: Self.repository.appendingPathComponent("scripts/install.sh"), to: script)
        chmod(script.path, 0o644)
        let asUser = getuid() == 0 ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/bash"] : ["/bin/bash"]
        let result = try await Self.run(asUser[0], Array(asUser.dropFirst()) + [script.path, "install", stage.path, readOnly.path, "/usr/local"],
                                        in: work)
        #expect(result.status == 1)
        #expect(result.stderr.contains("Permission denied") && result.stderr.contains("nothing was installed"), "\(result.stderr)")
        #expect(Self.files(under: readOnly).isEmpty)
        let left = try FileManager.default.contentsOfDirectory(atPath: readOnly.appendingPathComponent("usr/local/share/man/man1").path)
        #expect(left.isEmpty, "temporaries left: \(left)")
        #expect(!FileManager.default.fileExists(atPath: local.appendingPathComponent("bin").path), "the folder install made is left")
    }

    @Test func makeDebWithoutDpkgDebSaysWhatToInstall() async throws {
        // A PATH with the shell and coreutils but none of dpkg's tools.
        let bin = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: bin) }
        for tool in ["bash", "dirname"] {
            try FileManager.default.createSymbolicLink(atPath: bin.appendingPathComponent(tool).path, withDestinationPath: "/usr/bin/\(tool)")
        }
        let script = Self.repository.appendingPathComponent("scripts/make-deb.sh").path
        let result = try await Self.run("/usr/bin/bash", [script, "--check-tools"], environment: ["PATH": bin.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("apt-get install dpkg dpkg-dev binutils"), "\(result.stderr)")
    }

    @Test func makeDebRefusesACompressionLevelXzHasNot() async throws {
        let script = Self.repository.appendingPathComponent("scripts/make-deb.sh").path
        for level in ["fast", "10", "-1"] {
            // Refused when make deb first asks the script, before any release build.
            let result = try await Self.run("/usr/bin/bash", [script, "--check-tools"],
                                            environment: ["PATH": "/usr/bin:/bin", "DEB_XZ_LEVEL": level])
            #expect(result.status == 64, "\(level): \(result.status)")
            #expect(result.stderr.contains("DEB_XZ_LEVEL must be an xz compression level from 0 to 9, not '\(level)'"), "\(result.stderr)")
        }
    }

    // MARK: - The Containerfile and make check-package

    /// The shell commands of the Containerfile's last stage's first RUN, split at `&&`.
    static func containerRuntimeSteps(_ text: String) -> (base: String?, copies: [String], steps: [String]) {
        let joined = text.replacingOccurrences(of: "\\\n", with: " ")
        let lines = joined.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.hasPrefix("#") }
        guard let last = lines.lastIndex(where: { $0.hasPrefix("FROM ") }) else { return (nil, [], []) }
        let stage = lines[last...]
        let base = stage.first.map { String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces) }
        let copies = stage.filter { $0.hasPrefix("COPY ") }
        guard let run = stage.first(where: { $0.hasPrefix("RUN ") }) else { return (base, copies, []) }
        let steps = run.dropFirst(4).components(separatedBy: "&&").map {
            $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        }
        return (base, copies, steps)
    }

    /// The `runtime_steps=( ... )` array of scripts/check-package.sh, and the suite it debootstraps.
    static func checkPackageSteps(_ text: String) -> (suite: String?, steps: [String]) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { String($0) }
        let suite = lines.first { $0.hasPrefix("suite=") }.map { String($0.dropFirst(6)) }
        guard let start = lines.firstIndex(of: "runtime_steps=(") else { return (suite, []) }
        var steps: [String] = []
        for line in lines[(start + 1)...] {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == ")" { break }
            steps.append(String(trimmed.dropFirst().dropLast()))
        }
        return (suite, steps)
    }

    @Test func theContainerfilesRuntimeStageIsWhatCheckPackageRuns() throws {
        let containerfile = try String(contentsOf: Self.repository.appendingPathComponent("Containerfile"), encoding: .utf8)
        let script = try String(contentsOf: Self.repository.appendingPathComponent("scripts/check-package.sh"), encoding: .utf8)
        let container = Self.containerRuntimeSteps(containerfile)
        let check = Self.checkPackageSteps(script)
        #expect(!check.steps.isEmpty, "no runtime_steps in scripts/check-package.sh")
        #expect(container.steps == check.steps)
        #expect(container.base == "debian:\(check.suite ?? "?")-slim")
        // The package goes in where both steps look for it, and it is the .deb that `make deb` builds.
        #expect(container.copies.contains { $0.hasSuffix(" /tmp/badge.deb") && $0.contains(".build/deb/badge_") })
        #expect(script.contains("cp \"$deb\" \"$root/tmp/badge.deb\""))
        #expect(containerfile.contains("RUN make deb"))
    }

    @Test func theStepComparisonNoticesADifference() {
        // The same parser on a Containerfile whose runtime stage drifted.
        let drifted = "FROM debian:bookworm-slim\nRUN apt-get update \\\n && apt-get install -y /tmp/badge.deb\n"
        let steps = Self.containerRuntimeSteps(drifted).steps
        #expect(steps == ["apt-get update", "apt-get install -y /tmp/badge.deb"])
        #expect(steps != Self.checkPackageSteps("suite=bookworm\nruntime_steps=(\n  \"apt-get update\"\n  \"apt-get install -y --no-install-recommends /tmp/badge.deb\"\n)\n").steps)
    }
}
