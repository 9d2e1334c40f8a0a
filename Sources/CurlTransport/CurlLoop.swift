import BadgeKit
import CCurl
import Foundation

/// Drives one curl multi handle on a dedicated thread. Submissions and
/// cancellations come from any thread (a locked inbox, a flag on the transfer, a wakeup);
/// everything else (the handles, the callbacks, resuming callers) happens on
/// the loop thread alone.
final class CurlLoop: @unchecked Sendable {
    /// Made with the loop thread, on the first submission; set once, under the lock.
    private var multiHandle: UnsafeMutableRawPointer?
    private let lock = NSLock()
    private var inbox: [Transfer] = []
    private var stopping = false
    /// Loop thread only.
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]

    func submit(_ transfer: Transfer) {
        let multi = lock.withLock { () -> UnsafeMutableRawPointer in
            inbox.append(transfer)
            if let multiHandle { return multiHandle }
            let multi = badge_curl_multi_init()!
            multiHandle = multi
            let handle = MultiHandle(pointer: multi)
            NamedThread.start("badge.curl") { [self] in run(handle.pointer) }
            return multi
        }
        badge_curl_multi_wakeup(multi)
    }

    func cancel(_ transfer: Transfer) {
        transfer.requestCancel()
        if let multi = lock.withLock({ multiHandle }) { badge_curl_multi_wakeup(multi) }
    }

    func stop() {
        let multi = lock.withLock { () -> UnsafeMutableRawPointer? in
            stopping = true
            return multiHandle
        }
        if let multi { badge_curl_multi_wakeup(multi) }
    }

    private func run(_ multi: UnsafeMutableRawPointer) {
        while true {
            let (arrivals, stop) = lock.withLock { () -> ([Transfer], Bool) in
                defer { inbox.removeAll() }
                return (inbox, stopping)
            }
            for transfer in arrivals {
                if transfer.isCancelRequested {
                    transfer.finish(.failure(CancellationError()))
                    continue
                }
                do {
                    let easy = try transfer.makeHandle()
                    badge_curl_multi_add_handle(multi, easy)
                    active[easy] = transfer
                } catch {
                    transfer.finish(.failure(error))
                }
            }
            for (easy, transfer) in active where transfer.isCancelRequested {
                badge_curl_multi_remove_handle(multi, easy)
                active[easy] = nil
                transfer.finish(.failure(CancellationError()))
            }
            if stop && active.isEmpty {
                badge_curl_multi_cleanup(multi)
                return
            }

            var running: Int32 = 0
            badge_curl_multi_perform(multi, &running)
            var queued: Int32 = 0
            while let message = badge_curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                      let transfer = active[easy] else { continue }
                let result = message.pointee.data.result
                let outcome = transfer.complete(result)
                badge_curl_multi_remove_handle(multi, easy)
                active[easy] = nil
                transfer.finish(outcome)
            }
            // Sleeps until a socket is ready, a wakeup arrives, or a timer is due
            // (the idle check runs from curl's progress callback at least once a second).
            badge_curl_multi_poll(multi, nil, 0, active.isEmpty ? 5_000 : 250, nil)
        }
    }
}

/// The multi handle, handed to the loop thread that alone drives it.
private struct MultiHandle: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
}
