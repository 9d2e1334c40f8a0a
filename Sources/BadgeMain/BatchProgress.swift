import BadgeKit
import Foundation

/// How a batch shows itself while it runs: a live bar with counts, rate and
/// ETA on a terminal; one line per finished item otherwise (a log, CI).
final class BatchProgress: @unchecked Sendable {
    private let lock = NSLock()
    private let total: Int
    private let live: Bool
    private let lines: Int32
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    private var finished = 0
    private var made = 0
    private var failed = 0
    private var upToDate = 0
    /// Items that ended without being drawn (Ctrl-C): not finished, so not on the bar.
    private var cancelled = 0
    /// The items drawing now, and the one started last (shown on the bar):
    /// each event costs the same however many items the batch has.
    private var running: Set<String> = []
    private var lastStarted: String?
    private var ticker: Task<Void, Never>?
    private var lastDraw: ContinuousClock.Instant?
    /// Set by `stop`: no drawing after it, so nothing is left on the summary's line.
    private var stopped = false
    /// Set by `interrupted`: the bar says so until the items in flight have ended.
    private var stopping = false

    /// `lines` (a descriptor: standard output, or standard error with
    /// `--json`) receives the per-item lines when there is no terminal.
    init(total: Int, live: Bool, lines: Int32) {
        self.total = total
        self.live = live
        self.lines = lines
        started = clock.now
    }

    func start() {
        guard live else { return }
        // Redraws between events too, so rate and ETA keep moving during slow items.
        ticker = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                self?.draw(force: true)
            }
        }
    }

    /// Ends the bar: drawn a last time, its line ended, so what follows starts on a line of its own.
    func stop() {
        ticker?.cancel()
        lock.lock()
        defer { lock.unlock() }
        guard live, !stopped else { stopped = true; return }
        stopped = true
        running.removeAll()
        Terminal.write(to: STDERR_FILENO, Data((barText(now: clock.now) + "\n").utf8))
    }

    /// Ctrl-C: says at once that the batch is stopping (the items in flight still end cleanly).
    func interrupted() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopping, !stopped else { return }
        stopping = true
        let text = "stopping… the badges being drawn are abandoned, finished ones are kept (Ctrl-C again quits at once)"
        Terminal.write(to: STDERR_FILENO, Data(((live ? "\r\u{1B}[2K" : "") + text + "\n").utf8))
    }

    func handle(_ event: BatchEvent) {
        lock.lock()
        switch event {
        case let .started(item):
            running.insert(item.key)
            lastStarted = item.key
        case let .finished(result):
            finished += 1
            running.remove(result.item.key)
            switch result.status {
            case .made: made += 1
            case .upToDate: upToDate += 1
            case .failed: failed += 1
            case .cancelled: cancelled += 1
            }
            if !live { Terminal.write(to: lines, Data((Terminal.clean(Self.line(for: result), keepingNewlines: false) + "\n").utf8)) }
        }
        lock.unlock()
        draw(force: false)
    }

    /// `ok          alice.png  procedural  0.12 s`
    static func line(for result: BatchResult) -> String {
        let status = result.status.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
        switch result.status {
        case .made:
            let seconds = result.duration.map { String(format: "%.2f s", BatchProgressMath.seconds($0)) } ?? ""
            return "\(status)  \(result.item.fileName)  \(result.metadata?.backend ?? result.item.backend)  \(seconds)"
        case .upToDate:
            return "\(status)  \(result.item.fileName)"
        case .failed, .cancelled:
            let message = result.error?.headline ?? "unknown failure"
            return "\(status)  \(result.item.key): \(message)"
        }
    }

    private func draw(force: Bool) {
        guard live else { return }
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        let now = clock.now
        if !force, let lastDraw, now - lastDraw < .milliseconds(50) { return }
        lastDraw = now
        Terminal.write(to: STDERR_FILENO, Data(barText(now: now).utf8))
    }

    /// The bar's line, from the start of the line; the caller holds the lock.
    private func barText(now: ContinuousClock.Instant) -> String {
        let elapsed = BatchProgressMath.seconds(now - started)
        let width = 24
        // What was finished: made, up to date or failed; an item cancelled by Ctrl-C was not.
        let done = finished - cancelled
        let filled = total == 0 ? width : min(width, done * width / total)
        var text = "\r\u{1B}[2K  ▕" + String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled) + "▏"
        text += " \(done)/\(total)"
        if failed > 0 { text += "  \(failed) failed" }
        if made > 0 && elapsed > 0.2 && !stopping {
            let rate = Double(made) / elapsed
            text += String(format: "  %.1f/s", rate)
            let remaining = total - done
            if remaining > 0 { text += "  ETA " + BatchProgressMath.clock(Double(remaining) / rate) }
        }
        if stopping { text += "  stopping… \(total - done) left" }
        if let shown = lastStarted.flatMap({ running.contains($0) ? $0 : nil }) ?? running.first {
            text += "  " + Terminal.clean(shown, keepingNewlines: false) + (running.count > 1 ? " +\(running.count - 1)" : "")
        }
        return text
    }
}

enum BatchProgressMath {
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// 75 -> "1:15", 3725 -> "1:02:05".
    static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }
}
