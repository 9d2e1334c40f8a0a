import BadgeKit
import BadgeTestSupport
import Foundation
import Testing

/// The memory a large canvas and each encoding thread's buffers live in:
/// what callers rely on is zeroed, writable memory of at least the size
/// asked, aligned so that the kernel can back it with 2 MB pages.
@Suite(.threadsOfTheirOwn)
struct HugePageMemoryTests {
    @Test(arguments: [1, 4096, 2 << 20, (2 << 20) + 1, 5_000_000])
    func itIsZeroedWritableAndWhole2MBPages(count: Int) throws {
        let memory = try #require(HugePageMemory(count: count))
        #expect(memory.count >= count)
        #expect(memory.count % HugePageMemory.pageSize == 0)
        #expect(memory.count - count < HugePageMemory.pageSize)
        #expect(Int(bitPattern: memory.base) % HugePageMemory.pageSize == 0)
        let bytes = UnsafeMutableRawBufferPointer(start: memory.base, count: memory.count)
        #expect(!bytes.contains { $0 != 0 })
        // Every page writable, the last byte included, and keeping what was written.
        for offset in Swift.stride(from: 0, to: memory.count, by: 4096) { bytes[offset] = UInt8(truncatingIfNeeded: offset >> 12 | 1) }
        bytes[memory.count - 1] = 0xA5
        #expect(bytes[memory.count - 1] == 0xA5)
        #expect(Swift.stride(from: 0, to: memory.count, by: 4096).allSatisfy { bytes[$0] == UInt8(truncatingIfNeeded: $0 >> 12 | 1) })
    }
}
