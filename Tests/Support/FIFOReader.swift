#if canImport(Glibc)
import Glibc
#endif
import BadgeKit
import Foundation

/// A FIFO with a reader: opened for reading before anyone writes (so a
/// writer's non-blocking open finds it), read to its end on a thread of its own,
/// which then closes it.
package final class FIFOReader: @unchecked Sendable {
    package let fd: Int32
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()

    package init(_ path: String) throws {
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError("open", errno) }
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 100) > 0 else { continue }
                let n = read(fd, &buffer, buffer.count)
                if n > 0 {
                    data.append(contentsOf: buffer[0..<n])
                } else if poller.revents & Int16(POLLHUP) != 0 && n == 0 {
                    break  // the writer came and went
                }
            }
            // The read end closes with the reading: the FIFO has no reader after this.
            close(fd)
            done.signal()
        }.start()
    }

    /// What was written, once the writer has closed its end (at most `timeout` seconds).
    package func contents(timeout: TimeInterval = 120) -> Data? {
        done.wait(timeout: .now() + timeout) == .success ? data : nil
    }
}


/// The device number of /dev/null (major 1, minor 3, as glibc's makedev
/// packs them), for a device node of a test's own made with mknod.
package let nullDeviceNumber: dev_t = 1 << 8 | 3
