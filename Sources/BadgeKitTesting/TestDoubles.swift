import BadgeKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A generator for tests: writes a given PNG, or fails, or waits to be cancelled.
public struct FakeGenerator: BadgeGenerator {
    public enum Behaviour: Sendable {
        case writes(Data)
        case fails(BadgeError)
        case waitsForCancellation
        case unavailable(String)
    }

    public var behaviour: Behaviour
    /// Whether the images it writes say they were encoded in this process.
    public var encodedInProcess: Bool

    public init(_ behaviour: Behaviour, encodedInProcess: Bool = false) {
        self.behaviour = behaviour
        self.encodedInProcess = encodedInProcess
    }

    public func availability() async -> Availability {
        if case let .unavailable(reason) = behaviour { return .unavailable(reason: reason, hint: "this is a test double") }
        return .available
    }

    public func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
        // Like every backend, it stops when cancelled.
        try Task.checkCancellation()
        switch behaviour {
        case let .writes(data):
            let file = workspace.file("fake.png")
            try data.write(to: file)
            if encodedInProcess {
                return GeneratedImage(encodedInProcess: file, model: "fake")
            }
            return GeneratedImage(file: file, model: "fake")
        case let .fails(error):
            throw error
        case .waitsForCancellation:
            // Task.sleep ends at once, throwing, when the task is cancelled.
            while true {
                try await Task.sleep(for: .seconds(3600))
            }
        case let .unavailable(reason):
            throw BadgeError(.backendUnavailable, reason)
        }
    }
}

/// A file system that fails one chosen system call with a chosen errno, and
/// otherwise does what the real one does.
package struct FaultyFileSystem: StoreFileSystem {
    package enum Call: String, Sendable { case open, write, fsync, close, rename, link, unlink, mkdir, flock, setTimes }

    package var failing: Call
    package var errno: Int32
    /// Only names (a path, or a name relative to a directory) containing this fail (nil: every one).
    package var pathContaining: String?
    private let real = PosixFileSystem()

    package init(failing: Call, errno: Int32, pathContaining: String? = nil) {
        self.failing = failing
        self.errno = errno
        self.pathContaining = pathContaining
    }

    private func shouldFail(_ call: Call, _ path: String? = nil) -> Bool {
        guard call == failing else { return false }
        guard let pathContaining, let path else { return true }
        return path.contains(pathContaining)
    }

    package func openat(_ directory: Int32, _ name: String, _ flags: Int32, _ mode: mode_t) throws(SystemCallError) -> Int32 {
        if shouldFail(.open, name) { throw SystemCallError("open", errno) }
        return try real.openat(directory, name, flags, mode)
    }

    package func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int {
        if shouldFail(.write) {
            // Like a real ENOSPC: part of the data lands first.
            _ = try real.write(fd, UnsafeRawBufferPointer(rebasing: buffer.prefix(buffer.count / 2)))
            throw SystemCallError("write", errno)
        }
        return try real.write(fd, buffer)
    }

    package func fsync(_ fd: Int32) throws(SystemCallError) {
        if shouldFail(.fsync) { throw SystemCallError("fsync", errno) }
        try real.fsync(fd)
    }

    package func close(_ fd: Int32) throws(SystemCallError) {
        try real.close(fd)
        if shouldFail(.close) { throw SystemCallError("close", errno) }
    }

    package func renameat(_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String) throws(SystemCallError) {
        if shouldFail(.rename, to) { throw SystemCallError("rename", errno) }
        try real.renameat(fromDirectory, from, toDirectory, to)
    }

    package func linkat(_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String) throws(SystemCallError) {
        if shouldFail(.link, to) { throw SystemCallError("link", errno) }
        try real.linkat(fromDirectory, from, toDirectory, to)
    }

    package func unlinkat(_ directory: Int32, _ name: String) throws(SystemCallError) {
        if shouldFail(.unlink, name) { throw SystemCallError("unlink", errno) }
        try real.unlinkat(directory, name)
    }

    package func mkdirat(_ directory: Int32, _ name: String, _ mode: mode_t) throws(SystemCallError) {
        if shouldFail(.mkdir, name) { throw SystemCallError("mkdir", errno) }
        try real.mkdirat(directory, name, mode)
    }

    package func flock(_ fd: Int32, _ operation: Int32) throws(SystemCallError) {
        if shouldFail(.flock) { throw SystemCallError("flock", errno) }
        try real.flock(fd, operation)
    }

    package func setTimes(_ directory: Int32, _ name: String, to time: timespec) throws(SystemCallError) {
        if shouldFail(.setTimes, name) { throw SystemCallError("utimensat", errno) }
        try real.setTimes(directory, name, to: time)
    }
}

/// A tiny valid PNG (solid colour, 8-bit RGB) built without any C library, for
/// tests of the store and the pipeline.
public enum TestPNG {
    public static func solid(width: Int, height: Int, rgb: (UInt8, UInt8, UInt8)) -> Data {
        var ihdr = Data()
        for v in [UInt32(width), UInt32(height)] {
            ihdr.append(contentsOf: [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)])
        }
        ihdr.append(contentsOf: [8, 2, 0, 0, 0])
        var raw = [UInt8]()
        raw.reserveCapacity((width * 3 + 1) * height)
        for _ in 0..<height {
            raw.append(0)
            for _ in 0..<width { raw.append(contentsOf: [rgb.0, rgb.1, rgb.2]) }
        }
        return PNG.assemble([
            PNGChunk(type: "IHDR", data: ihdr),
            PNGChunk(type: "IDAT", data: storedZlib(raw)),
            PNGChunk(type: "IEND", data: Data()),
        ])
    }

    /// zlib with uncompressed ("stored") blocks: valid, and needs no deflater.
    public static func storedZlib(_ bytes: [UInt8]) -> Data {
        var out = Data([0x78, 0x01])
        var offset = 0
        repeat {
            let n = min(65535, bytes.count - offset)
            let final: UInt8 = offset + n >= bytes.count ? 1 : 0
            out.append(final)
            out.append(contentsOf: [UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)])
            out.append(contentsOf: bytes[offset..<(offset + n)])
            offset += n
        } while offset < bytes.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        let adler = b << 16 | a
        out.append(contentsOf: [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)])
        return out
    }
}

extension CheckedBadge {
    /// `metadata` stamped into `png` by the stages every badge passes before
    /// the store: the intake of a PNG badge made earlier, the stamp and the
    /// PNG check. For tests that put a badge of their own in a store.
    package static func stamping(_ metadata: BadgeMetadata, into png: Data) throws -> CheckedBadge {
        let intake = ImageIntake(limits: ImageLimits.default.admittingDrawing(side: metadata.size))
        return try CheckedBadge(stamping: metadata, into: intake.admit(png, madeWith: metadata))
    }
}
