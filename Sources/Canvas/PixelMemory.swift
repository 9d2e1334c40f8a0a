#if canImport(Glibc)
import Glibc
#endif

/// A canvas's bytes, zeroed, from calloc: a fresh large block comes straight
/// from the kernel, which hands it out zeroed, so a badge's first canvas
/// costs no memset and a thousand page faults before drawing starts; every
/// page is mapped writable up front (MADV_POPULATE_WRITE, Linux 5.14+; what
/// it buys is in docs/PERFORMANCE.md, *Speed tricks*). Left to fault as it
/// is drawn, blending reads a pixel before writing it: the read maps the
/// shared zero page, the write then copies it and flushes the TLB of every
/// core the process runs on, twice the faults and an interrupt each. A block
/// malloc reuses (a batch's next canvas) is cleared by calloc without faulting
/// at all: mapping every canvas afresh instead cost a batch on two cores a
/// tenth of its speed.
public final class PixelMemory: RandomAccessCollection, Equatable {
    public let count: Int
    private let base: UnsafeMutablePointer<UInt8>

    private static let page = 4096

    init(zeroedCount count: Int, mapped: Bool = true) {
        self.count = count
        guard let memory = calloc(Swift.max(count, 1), 1) else { fatalError("out of memory for a \(count)-byte canvas") }
        base = memory.assumingMemoryBound(to: UInt8.self)
        if mapped { map(0..<count) }
    }

    /// Maps the pages of `bytes` writable now (MADV_POPULATE_WRITE, Linux
    /// 5.14+), rather than as they are drawn. A hint: on an older kernel the
    /// pages fault in as before. Threads drawing different bands map their
    /// own rows, at the same time.
    func map(_ bytes: Range<Int>) {
        let pageStart = (Int(bitPattern: base) + bytes.lowerBound + Self.page - 1) & ~(Self.page - 1)
        let pageEnd = (Int(bitPattern: base) + bytes.upperBound) & ~(Self.page - 1)
        if pageEnd > pageStart {
            _ = madvise(UnsafeMutableRawPointer(bitPattern: pageStart), pageEnd - pageStart, MADV_POPULATE_WRITE)
        }
    }

    deinit {
        free(base)
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
