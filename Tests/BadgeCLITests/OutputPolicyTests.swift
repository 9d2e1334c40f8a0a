import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

private func kind(_ path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return info.st_mode & S_IFMT
}

/// Issue #31, end to end: run as root, `generate --output /dev/null` replaced
/// the device with a PNG. Every command that writes a file the user names
/// (generate and import --output, card back, card flip, card html DIR, batch
/// --contact-sheet) follows one policy: `-` is standard output, a FIFO or a
/// device is written into, a symlink is followed, a directory is an error.
@Suite(.threadsOfTheirOwn, .serialized)
struct OutputPolicyTests {
    static let jobs = #"[{"name": "a", "prompt": "Run a marathon", "size": 64, "seed": 1}]"#

    /// A sandbox with a committed badge (the card commands need one).
    func sandbox() async throws -> Sandbox {
        let s = try Sandbox()
        let made = try await s.run(["generate", "--size", "64", "--seed", "1", "a calm sea"])
        #expect(made.status == 0, "\(made.stderr)")
        return s
    }

    /// Each command, writing to `target`.
    func commands(_ s: Sandbox, _ target: (String) -> String) throws -> [(String, [String])] {
        let manifest = s.root.appendingPathComponent("jobs.json")
        try Data(Self.jobs.utf8).write(to: manifest)
        let picture = s.root.appendingPathComponent("picture.png")
        try TestPNG.solid(width: 64, height: 64, rgb: (10, 20, 30)).write(to: picture)
        return [
            ("generate", ["generate", "--size", "64", "--seed", "2", "--output", target("g.png"), "a preview"]),
            ("import", ["import", "--size", "64", "--output", target("i.png"), picture.path, "a picture"]),
            ("card back", ["card", "back", "--output", target("back.png")]),
            ("card flip", ["card", "flip", "--size", "32", "--fps", "10", "--output", target("flip.png")]),
            ("batch", ["batch", manifest.path, "--output", s.root.appendingPathComponent("out").path, "--contact-sheet", target("sheet.png")]),
        ]
    }

    /// A device node of our own (mknod in the sandbox, never the system's /dev/null).
    /// A name that is not UTF-8 (Latin-1 "x\xff.png") is refused, saying
    /// which argument: read as a String it would become "x\u{FFFD}.png", another file.
    @Test func anArgumentThatIsNotUTF8IsRefusedNotRenamed() async throws {
        let s = try Sandbox()
        let result = try await s.run(["generate", "--size", "64", "A promise", "--output"],
                                     prefix: ["sh", "-c", "cd \"$1\" && shift && exec \"$@\" \"$(printf 'x\\377.png')\"", "sh", s.tmp.path])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("argument 6 is not UTF-8: x\\xff.png"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.tmp.path).filter { $0.hasPrefix("x") }.isEmpty)
        #expect(s.badge == nil, "nothing was committed")
    }

    @Test(.enabled(if: geteuid() == 0, "mknod needs root (the bug was root's)"))
    func aCharacterDeviceIsWrittenIntoByEveryCommand() async throws {
        let s = try await sandbox()
        let devices = s.root.appendingPathComponent("dev")
        try FileManager.default.createDirectory(at: devices, withIntermediateDirectories: true)
        func device(_ name: String) -> String {
            let path = devices.appendingPathComponent(name).path
            if kind(path) == nil { #expect(mknod(path, S_IFCHR | 0o666, nullDeviceNumber) == 0, "mknod \(path): \(errno)") }
            return path
        }
        for (name, arguments) in try commands(s, device) {
            let result = try await s.run(arguments)
            #expect(result.status == 0, "\(name): \(result.stderr)")
        }
        // card html DIR: DIR/index.html is a device.
        let page = s.root.appendingPathComponent("page")
        try FileManager.default.createDirectory(at: page, withIntermediateDirectories: true)
        #expect(mknod(page.appendingPathComponent("index.html").path, S_IFCHR | 0o666, nullDeviceNumber) == 0)
        let html = try await s.run(["card", "html", page.path])
        #expect(html.status == 0, "\(html.stderr)")
        #expect(kind(page.appendingPathComponent("index.html").path) == S_IFCHR)

        for name in try FileManager.default.contentsOfDirectory(atPath: devices.path) {
            #expect(kind(devices.appendingPathComponent(name).path) == S_IFCHR, "\(name) is still a character device")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: devices.path).count == 5, "nothing else was created beside them")
        #expect(kind("/dev/null") == S_IFCHR)
    }

    @Test func aFIFOWithAReaderGetsTheBadge() async throws {
        let s = try Sandbox()
        let fifo = s.root.appendingPathComponent("badge.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = try FIFOReader(fifo)
        let result = try await s.run(["generate", "--size", "64", "--seed", "3", "--output", fifo, "into a pipe"])
        #expect(result.status == 0, "\(result.stderr)")
        let data = try #require(reader.contents(), "the reader saw the end of the badge")
        #expect(data.starts(with: PNG.signature))
        #expect(try BadgeMetadata(entries: PNG.chunks(in: data).compactMap(PNG.textEntry))?.prompt == "into a pipe")
        #expect(kind(fifo) == S_IFIFO)

        // With no reader, it is an error, not a hang.
        let alone = try await s.run(["generate", "--size", "64", "--output", fifo, "no one listens"], timeout: 60)
        #expect(alone.status == 1)
        #expect(alone.stderr.contains("cannot write the badge: no process is reading the FIFO"), "\(alone.stderr)")
        #expect(kind(fifo) == S_IFIFO)
    }

    /// `--output -` piped into sha256sum: the same bytes as a file.
    @Test func dashIsStandardOutput() async throws {
        let s = try Sandbox()
        let environment = ["SOURCE_DATE_EPOCH": "1767225600", "TZ": "UTC"]
        let file = s.root.appendingPathComponent("file.png")
        let arguments = ["generate", "--seed", "4", "--size", "64"]
        let made = try await s.run(arguments + ["--output", file.path, "x"], extraEnvironment: environment)
        #expect(made.status == 0, "\(made.stderr)")
        let piped = try await s.run(arguments + ["--output", "-", "x"], extraEnvironment: environment,
                                    prefix: ["sh", "-c", #"{ "$0" "$@"; echo "badge exited $?" >&2; } | sha256sum"#])
        #expect(piped.stderr.contains("badge exited 0"), "\(piped.stderr)")
        #expect(piped.stderr.contains("Wrote a preview to standard output"), "the report goes to standard error: \(piped.stderr)")
        // The file's own sum, by the same sha256sum (the binary's arguments after the script are ignored).
        let sum = try await s.run([], extraEnvironment: ["FILE": file.path], prefix: ["sh", "-c", #"sha256sum < "$FILE""#])
        let expected = String(sum.stdout.prefix(64))
        #expect(expected.count == 64 && piped.stdout.hasPrefix(expected + "  -"), "\(piped.stdout) vs \(sum.stdout)")

        let both = try await s.run(arguments + ["--output", "-", "--json", "x"])
        #expect(both.status == 64)
        #expect(both.stderr.contains("--output - writes the picture to standard output, where --json would go too"), "\(both.stderr)")

        // card back -o - too.
        #expect(try await s.run(["generate", "--size", "64", "--seed", "5", "committed"]).status == 0)
        let back = try await s.run(["card", "back", "-o", "-"])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(Data(back.stdout.utf8).count > 8 && back.stderr.contains("Wrote the back of the card"), "\(back.stderr)")
    }

    /// A symlink into another folder: its target is replaced there, atomically; the link stays.
    @Test func aSymlinkIsFollowedIntoAnotherFolder() async throws {
        let s = try await sandbox()
        let elsewhere = s.root.appendingPathComponent("elsewhere")
        let here = s.root.appendingPathComponent("here")
        for folder in [elsewhere, here] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        func link(_ name: String) -> String {
            let target = elsewhere.appendingPathComponent(name)
            try? Data("old".utf8).write(to: target)
            let path = here.appendingPathComponent(name).path
            try? FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "../elsewhere/\(name)")
            return path
        }
        for (name, arguments) in try commands(s, link) {
            let result = try await s.run(arguments)
            #expect(result.status == 0, "\(name): \(result.stderr)")
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: here.path) {
            #expect(kind(here.appendingPathComponent(name).path) == S_IFLNK, "\(name) is still a link")
            let written = try Data(contentsOf: elsewhere.appendingPathComponent(name))
            #expect(written.starts(with: PNG.signature), "\(name): its target holds the new file")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).count == 5, "no temporaries left")
    }

    @Test func aDirectoryIsAClearErrorAndIsLeftAlone() async throws {
        let s = try await sandbox()
        let folders = s.root.appendingPathComponent("folders")
        func folder(_ name: String) -> String {
            let url = folders.appendingPathComponent(name)
            try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return url.path
        }
        for (name, arguments) in try commands(s, folder) {
            let result = try await s.run(arguments)
            #expect(result.status == 64, "\(name): \(result.stderr)")
            #expect(result.stderr.contains("is a directory, not a file"), "\(name): \(result.stderr)")
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: folders.path) {
            #expect(try FileManager.default.contentsOfDirectory(atPath: folders.appendingPathComponent(name).path).isEmpty, "\(name)")
        }
        // card html DIR where DIR is a file.
        let file = s.root.appendingPathComponent("not-a-folder")
        try Data("x".utf8).write(to: file)
        let html = try await s.run(["card", "html", file.path])
        #expect(html.status == 64)
        #expect(html.stderr.contains("\(file.path): the card page's folder is a file, not a folder"), "\(html.stderr)")
        #expect(try Data(contentsOf: file) == Data("x".utf8))
        // A batch's --output: the file on the way is named, in badge's words rather than Foundation's.
        let jobs = s.root.appendingPathComponent("jobs.jsonl")
        try Data(#"{"prompt": "a", "size": 64}"#.utf8).write(to: jobs)
        for (output, said) in [(file.path, "\(file.path): the output folder is a file, not a folder"),
                               (file.path + "/out/1", "the output folder cannot be there: \(file.path) is a file, not a folder")] {
            let batch = try await s.run(["batch", jobs.path, "--output", output])
            #expect(batch.status == 1 && batch.stderr.contains(said), "\(output): \(batch.stderr)")
            #expect(!batch.stderr.contains("NSCocoaErrorDomain") && !batch.stderr.contains("same name"), "\(batch.stderr)")
        }
        #expect(try Data(contentsOf: file) == Data("x".utf8))
    }
}
