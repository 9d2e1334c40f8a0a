#if canImport(Glibc)
import Glibc
#endif

/// Zeroed memory of its own mapping, aligned to and rounded up to 2 MB, and
/// marked for transparent huge pages (`MADV_HUGEPAGE`): where the kernel
/// grants them, the first touch of each 2 MB costs one page fault rather than
/// 512. For the large buffers a drawing is encoded with (each encoding
/// thread's tables and band buffers), which a process maps once and reuses.
///
/// On the 2-core VM these figures come from, a 4 KB page's first write cost
/// ~2.8 µs (a fault, its memory cgroup's charge, a cleared page), so 4 MB
/// took 2.1-2.9 ms of a core; in huge pages, 0.40-0.80 ms (docs/PERFORMANCE.md,
/// *Memory*). A hint: where huge pages are off or none is free, the memory is
/// the same, in 4 KB pages.
package final class HugePageMemory {
    package static let pageSize = 2 << 20

    /// The first byte; `count` bytes from it are the caller's.
    package let base: UnsafeMutableRawPointer
    package let count: Int

    /// Maps `count` bytes (rounded up to whole 2 MB pages); nil when the
    /// kernel refuses the mapping (out of address space or memory).
    package init?(count: Int) {
        let size = (max(count, 1) + Self.pageSize - 1) & ~(Self.pageSize - 1)
        // One page more than asked, so an aligned start lies inside; the
        // slack before and after it is returned at once.
        let reserved = size + Self.pageSize
        guard let mapping = mmap(nil, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              mapping != MAP_FAILED
        else { return nil }
        let start = (Int(bitPattern: mapping) + Self.pageSize - 1) & ~(Self.pageSize - 1)
        let head = start - Int(bitPattern: mapping)
        if head > 0 { munmap(mapping, head) }
        let tail = reserved - head - size
        if tail > 0 { munmap(UnsafeMutableRawPointer(bitPattern: start + size), tail) }
        base = UnsafeMutableRawPointer(bitPattern: start)!
        self.count = size
        _ = madvise(base, size, MADV_HUGEPAGE)
    }

    deinit {
        munmap(base, count)
    }
}
