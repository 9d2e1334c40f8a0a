#if canImport(Glibc)
import Glibc
#endif

/// A canvas's bytes, zeroed. A large canvas takes its pages straight from the
/// kernel, which hands them out zeroed, asking for 2 MB pages where it has
/// them: a 1024 px canvas then costs two page faults as it is first drawn
/// rather than a memset and a thousand faults before drawing starts (~2 ms of
/// a badge's critical path). A small one comes from calloc.
public final class PixelMemory: RandomAccessCollection, Equatable {
    public let count: Int
    private let base: UnsafeMutablePointer<UInt8>
    /// The mapping to unmap, when the memory is mapped rather than calloc'd.
    private let mapping: (start: UnsafeMutableRawPointer, length: Int)?

    private static let hugePage = 2 << 20
    /// From this size on a mapping pays for itself (glibc's malloc maps from 128 KB; a huge page needs 2 MB).
    private static let mappedFrom = 1 << 20

    init(zeroedCount count: Int) {
        self.count = count
        if count >= Self.mappedFrom, let mapped = Self.map(count) {
            base = mapped.base
            mapping = mapped.mapping
        } else {
            guard let memory = calloc(Swift.max(count, 1), 1) else { fatalError("out of memory for a \(count)-byte canvas") }
            base = memory.assumingMemoryBound(to: UInt8.self)
            mapping = nil
        }
    }

    deinit {
        if let mapping {
            munmap(mapping.start, mapping.length)
        } else {
            free(base)
        }
    }

    /// An anonymous mapping with room to start on a 2 MB boundary, so that
    /// the kernel can back it with huge pages (a hint it may ignore).
    private static func map(_ count: Int) -> (base: UnsafeMutablePointer<UInt8>, mapping: (UnsafeMutableRawPointer, Int))? {
        let length = count + hugePage
        guard let start = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              start != MAP_FAILED else { return nil }
        let address = Int(bitPattern: start)
        let aligned = UnsafeMutableRawPointer(bitPattern: (address + hugePage - 1) & ~(hugePage - 1))!
        _ = madvise(aligned, count - count % hugePage, MADV_HUGEPAGE)
        return (aligned.assumingMemoryBound(to: UInt8.self), (start, length))
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(i: Int) -> UInt8 {
        get {
            precondition(i >= 0 && i < count, "pixel byte \(i) is outside the canvas")
            return base[i]
        }
        set {
            precondition(i >= 0 && i < count, "pixel byte \(i) is outside the canvas")
            base[i] = newValue
        }
    }

    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    public func withUnsafeMutableBufferPointer<R>(_ body: (UnsafeMutableBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeMutableBufferPointer(start: base, count: count))
    }

    public static func == (a: PixelMemory, b: PixelMemory) -> Bool {
        a.count == b.count && memcmp(a.base, b.base, a.count) == 0
    }
}
