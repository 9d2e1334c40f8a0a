import BadgeKit
import CCurl
import Foundation

/// Drives one curl multi handle. Submissions and cancellations come from
/// any thread (a locked inbox, a flag on the transfer, a wakeup); everything
/// else (the handles, the callbacks, resuming callers) happens in the loop,
/// which runs on the blocking executor while there are transfers and ends
/// when there are none. The multi handle, with its connections, outlives it
/// for the next run.
final class CurlLoop: @unchecked Sendable {
    /// Made on the first submission; set once, under the lock.
    private var multiHandle: UnsafeMutableRawPointer?
    private let lock = NSLock()
    private var inbox: [Transfer] = []
    private var stopping = false
    /// Whether the loop is running or handed to the executor (under the lock).
    private var looping = false
    /// The loop only (one run at a time).
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]

    func submit(_ transfer: Transfer) {
        let (multi, start) = lock.withLock { () -> (UnsafeMutableRawPointer, Bool) in
            inbox.append(transfer)
            let multi = multiHandle ?? badge_curl_multi_init()!
            multiHandle = multi
            let start = !looping
            looping = true
            return (multi, start)
        }
        if start {
            let handle = MultiHandle(pointer: multi)
            BlockingExecutor.shared.submit { [self] in run(handle.pointer) }
        } else {
            badge_curl_multi_wakeup(multi)
        }
    }

    func cancel(_ transfer: Transfer) {
        transfer.requestCancel()
        if let multi = lock.withLock({ looping ? multiHandle : nil }) { badge_curl_multi_wakeup(multi) }
    }

    /// Ends the loop once its transfers are done, and frees the multi handle.
    func stop() {
        let idle = lock.withLock { () -> UnsafeMutableRawPointer? in
            stopping = true
            if looping {
                if let multiHandle { badge_curl_multi_wakeup(multiHandle) }
                return nil
            }
            defer { multiHandle = nil }
            return multiHandle
        }
        if let idle { badge_curl_multi_cleanup(idle) }
    }

    private func run(_ multi: UnsafeMutableRawPointer) {
        while true {
            let (arrivals, ending, freeing) = lock.withLock { () -> ([Transfer], Bool, Bool) in
                defer { inbox.removeAll() }
                // Nothing left to do: the loop ends here, and the next submission starts another.
                let ending = inbox.isEmpty && active.isEmpty
                if ending { looping = false }
                let freeing = ending && stopping
                if freeing { multiHandle = nil }
                return (inbox, ending, freeing)
            }
            if freeing { badge_curl_multi_cleanup(multi) }
            if ending { return }
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
            if !active.isEmpty { badge_curl_multi_poll(multi, nil, 0, 250, nil) }
        }
    }
}

/// The multi handle, handed to the loop that alone drives it.
private struct MultiHandle: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
}
