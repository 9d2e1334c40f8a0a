import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reading a child's pipes with read(2), retrying on EINTR. Foundation's
/// `readDataToEndOfFile()` traps when a signal (SIGCHLD, say) interrupts it.
package enum PipeReading {
    /// Everything until end of file.
    package static func readAll(_ handle: FileHandle) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if n > 0 {
                data.append(buffer, count: n)
            } else if n == 0 || errno != EINTR {
                return data
            }
        }
    }

    /// One line (without its newline), or nil at end of file.
    package static func readLine(_ handle: FileHandle) -> String? {
        var line = [UInt8]()
        var byte: UInt8 = 0
        while true {
            let n = read(handle.fileDescriptor, &byte, 1)
            if n == 1 {
                if byte == 0x0A { return String(decoding: line, as: UTF8.self) }
                line.append(byte)
            } else if n == 0 || errno != EINTR {
                return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
            }
        }
    }
}
