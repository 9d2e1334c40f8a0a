import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

func fileKind(_ path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return info.st_mode & S_IFMT
}

/// Issue #31: `--output` and every file a command writes never replace
/// something that is not a regular file.
@Suite(.threadsOfTheirOwn)
struct OutputTargetTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("badge-output-\(UUID().uuidString)")
    var png: Data { TestPNG.solid(width: 8, height: 8, rgb: (1, 2, 3)) }

    init() throws { try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true) }

    func path(_ name: String) -> URL { root.appendingPathComponent(name) }

    @Test func dashIsStandardOutputAndAPathIsResolvedAgainstTheDirectory() {
        defer { try? FileManager.default.removeItem(at: root) }
        #expect(OutputTarget("-", relativeTo: root) == .standardOutput)
        #expect(OutputTarget("./b.png", relativeTo: root) == .path(path("b.png")))
        // ".." is the kernel's to resolve, after whatever link "a" may be.
        #expect(OutputTarget("a/../b.png", relativeTo: root) == .path(URL(fileURLWithPath: root.path + "/a/../b.png")))
        #expect(OutputTarget("/x/y.png", relativeTo: root) == .path(URL(fileURLWithPath: "/x/y.png")))
    }

    @Test func aSymlinkIsFollowedAndItsTargetReplacedInItsOwnFolder() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let other = path("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try Data("old".utf8).write(to: other.appendingPathComponent("real.png"))
        // here/link.png -> ../other/hop.png -> real.png
        let here = path("here")
        try FileManager.default.createDirectory(at: here, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: other.appendingPathComponent("hop.png").path, withDestinationPath: "real.png")
        try FileManager.default.createSymbolicLink(atPath: here.appendingPathComponent("link.png").path, withDestinationPath: "../other/hop.png")
        try OutputWriter().write(png, to: .path(here.appendingPathComponent("link.png")), what: "the badge")
        #expect(fileKind(here.appendingPathComponent("link.png").path) == S_IFLNK)
        #expect(fileKind(other.appendingPathComponent("hop.png").path) == S_IFLNK)
        #expect(try Data(contentsOf: other.appendingPathComponent("real.png")) == png)
        #expect(try FileManager.default.contentsOfDirectory(atPath: here.path) == ["link.png"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: other.path).sorted() == ["hop.png", "real.png"], "no temporaries left")

        // A link to nothing yet creates its target.
        try FileManager.default.createSymbolicLink(atPath: path("dangling.png").path, withDestinationPath: "other/new.png")
        try OutputWriter().write(png, to: .path(path("dangling.png")), what: "the badge")
        #expect(try Data(contentsOf: other.appendingPathComponent("new.png")) == png)
        #expect(fileKind(path("dangling.png").path) == S_IFLNK)
    }

    @Test func aLoopOfLinksADirectoryAndASocketAreClearErrors() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createSymbolicLink(atPath: path("a").path, withDestinationPath: "b")
        try FileManager.default.createSymbolicLink(atPath: path("b").path, withDestinationPath: "a")
        #expect { try OutputWriter().write(png, to: .path(path("a")), what: "the badge") } throws: { error in
            let e = error as? BadgeError
            return e?.code == .io && e?.message == "cannot write the badge" && e?.hint?.contains("40 symbolic links") == true
        }
        let folder = path("folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: path("to-folder").path, withDestinationPath: "folder")
        for name in ["folder", "to-folder"] {
            #expect { try OutputWriter().write(png, to: .path(path(name)), what: "the badge") } throws: { error in
                let e = error as? BadgeError
                return e?.code == .usage && e?.message.hasPrefix("cannot write the badge: \(folder.path)") == true
                    && e?.message.hasSuffix("is a directory, not a file") == true && e?.hint == "give a file name inside it"
            }
        }
        #expect(fileKind(folder.path) == S_IFDIR)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)

        let socketPath = path("socket").path
        let socketFD = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socketFD) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(socketPath.utf8) + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        #expect { try OutputWriter().write(png, to: .path(URL(fileURLWithPath: socketPath)), what: "the badge") } throws: { error in
            (error as? BadgeError)?.message == "cannot write the badge: \(socketPath) is a socket, not a file"
        }
        #expect(fileKind(socketPath) == S_IFSOCK)
    }

    @Test func aFIFOIsWrittenIntoAndOneWithoutAReaderIsAnError() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let fifo = path("pipe.png").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect { try OutputWriter().write(png, to: .path(URL(fileURLWithPath: fifo)), what: "the badge") } throws: { error in
            let e = error as? BadgeError
            return e?.message == "cannot write the badge: no process is reading the FIFO" && e?.path == fifo
        }
        let reader = try FIFOReader(fifo)
        try OutputWriter().write(png, to: .path(URL(fileURLWithPath: fifo)), what: "the badge")
        #expect(reader.contents() == png)
        #expect(fileKind(fifo) == S_IFIFO, "the FIFO is still a FIFO")
    }

    /// As root, rename(2) replaced /dev/null with a PNG. A device node of our
    /// own (mknod, never the system's) is written into and stays a device.
    @Test(.enabled(if: geteuid() == 0, "mknod needs root"))
    func aCharacterDeviceIsWrittenIntoAndStaysOne() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let device = path("null").path
        #expect(mknod(device, S_IFCHR | 0o666, nullDeviceNumber) == 0, "mknod: \(errno)")
        try OutputWriter().write(png, to: .path(URL(fileURLWithPath: device)), what: "the badge")
        #expect(fileKind(device) == S_IFCHR)
        try FileManager.default.createSymbolicLink(atPath: path("to-null").path, withDestinationPath: "null")
        try OutputWriter().write(png, to: .path(path("to-null")), what: "the badge")
        #expect(fileKind(device) == S_IFCHR)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() == ["null", "to-null"])
        #expect(fileKind("/dev/null") == S_IFCHR)
    }

    /// /dev/stdout leads to /proc/self/fd/1: a descriptor, written into.
    @Test func aProcDescriptorLinkIsWrittenInto() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let fifo = path("fd.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = try FIFOReader(fifo)
        let fd = open(fifo, O_WRONLY | O_CLOEXEC)
        #expect(fd >= 0)
        try FileManager.default.createSymbolicLink(atPath: path("out.png").path, withDestinationPath: "/proc/self/fd/\(fd)")
        try OutputWriter().write(png, to: .path(path("out.png")), what: "the badge")
        close(fd)
        #expect(reader.contents() == png)
        #expect(fileKind(path("out.png").path) == S_IFLNK)
    }
}
