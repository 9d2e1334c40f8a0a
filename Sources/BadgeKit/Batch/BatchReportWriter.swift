#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Writes a run's manifest without holding its results. Each result is
/// encoded once, when it finishes, as one JSON line appended to a journal in
/// the output directory (`manifest.partial.jsonl`); the writer keeps only
/// where each item's line is: 12 bytes an item. Lines reach the journal in
/// blocks of `blockSize`, and at a checkpoint at least every
/// `checkpointInterval`, when the journal is synced to disk too: a killed run
/// leaves a record of what it finished. `finish` assembles `manifest.json`
/// (one result a line, in manifest order) from the journal, writes it
/// atomically and removes the journal.
///
/// `record` is called from one task at a time; the journal's writes and syncs
/// happen in order on the blocking executor (`SerialLane`), never on a
/// cooperative thread.
package final class BatchReportWriter: @unchecked Sendable {
    package static let blockSize = 64 << 10
    package static let defaultCheckpointInterval = Duration.seconds(10)
    /// How many failures `failures` keeps for a summary.
    package static let keptFailures = 20

    private let lock = NSLock()
    private let directory: BatchOutputDirectory
    package let journalName: String
    package let manifestName: String
    private let journal: Int32
    private let journalLane = SerialLane()
    private let interval: Duration
    private let clock = ContinuousClock()
    private var lastCheckpoint: ContinuousClock.Instant
    private var pending: [UInt8] = []
    /// Bytes handed to the journal so far: where the next line goes.
    private var appended = 0
    /// Where each item's line starts in the journal (-1: not recorded yet), and its length.
    private var offsets: [Int]
    private var lengths: [Int32]
    /// The journal's first write or sync error (set on `journalLane`).
    private var journalError: BadgeError?
    private let encoder: JSONEncoder
    private var closed = false

    package private(set) var summary = BatchReport.Summary([])
    /// The first `keptFailures` failed results, for a summary.
    package private(set) var failures: [BatchResult] = []

    /// Starts the journal for a run of `count` items (emptying one a killed run left).
    package init(directory: BatchOutputDirectory, shard: BatchShard?, count: Int,
                 checkpointInterval: Duration = defaultCheckpointInterval) throws {
        self.directory = directory
        manifestName = BatchReport.fileName(for: shard)
        journalName = BatchReport.journalName(for: shard)
        journal = try directory.openJournal(journalName)
        interval = checkpointInterval
        lastCheckpoint = clock.now
        offsets = [Int](repeating: -1, count: count)
        lengths = [Int32](repeating: 0, count: count)
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        pending.reserveCapacity(Self.blockSize + 4096)
    }

    deinit {
        if !closed { close(journal) }
    }

    /// Records item `index`'s result: its line is encoded now and reaches the
    /// journal with the next block or checkpoint. What terminals act on is
    /// escaped (`OutsideText.escapingControls`): the manifest holds backends'
    /// words and `batch --json` prints it as it is.
    package func record(_ index: Int, _ result: BatchResult) {
        var line = (try? encoder.encode(BatchReport.Entry(result))).map(OutsideText.escapingControls(inJSON:))
            ?? Data(#"{"error":{"code":"internal","message":"this result could not be encoded"}}"#.utf8)
        line.append(UInt8(ascii: "\n"))
        lock.lock()
        defer { lock.unlock() }
        guard offsets.indices.contains(index), offsets[index] < 0 else { return }
        offsets[index] = appended
        lengths[index] = Int32(line.count)
        appended += line.count
        pending.append(contentsOf: line)
        summary.add(result.status)
        if result.status == .failed && failures.count < Self.keptFailures { failures.append(result) }
        let now = clock.now
        if now - lastCheckpoint >= interval {
            lastCheckpoint = now
            flush(sync: true)
        } else if pending.count >= Self.blockSize {
            flush(sync: false)
        }
    }

    /// Hands the pending lines to the journal's lane (under `lock`).
    private func flush(sync: Bool) {
        if pending.isEmpty && !sync { return }
        let block = pending
        pending.removeAll(keepingCapacity: true)
        let journal = journal
        journalLane.async { [self] in
            guard journalError == nil else { return }
            var code = block.withUnsafeBytes { BatchOutputDirectory.writeBytes(journal, $0) }
            if code == 0 && sync && fdatasync(journal) != 0 { code = errno }
            if code != 0 {
                journalError = BadgeError(.io, "cannot write the batch's journal", path: directory.url.appendingPathComponent(journalName).path,
                                          cause: BadgeError.errnoDescription(code),
                                          hint: "free some space and rerun: finished badges are kept and are not made again")
            }
        }
    }

    /// Brings the journal up to date on disk now, and waits until it is.
    /// Blocking: call it off the cooperative threads.
    package func checkpoint() {
        lock.lock()
        lastCheckpoint = clock.now
        flush(sync: true)
        lock.unlock()
        journalLane.waitUntilDone()
    }

    /// Writes `manifest.json` (or the shard's) from the journal, in manifest
    /// order, then removes the journal. Blocking: call it off the cooperative threads.
    package func finish(source: String, output: URL, shard: BatchShard?, startedAt: Date, duration: Duration) throws {
        lock.lock()
        defer { lock.unlock() }
        flush(sync: false)
        journalLane.waitUntilDone()
        if let journalError { throw journalError }
        let offsets = offsets
        let lengths = lengths
        let journal = journal
        let journalPath = directory.url.appendingPathComponent(journalName).path
        try directory.writeStreaming(manifestName) { emit in
            var out: [UInt8] = []
            out.reserveCapacity(1 << 20)
            func put(_ text: String) { out.append(contentsOf: text.utf8) }
            func drain(over limit: Int) throws {
                if out.count > limit {
                    try out.withUnsafeBytes(emit)
                    out.removeAll(keepingCapacity: true)
                }
            }
            put("{\n  \"durationSeconds\" : \(fragment(BatchReport.seconds(duration))),\n")
            put("  \"generator\" : \(fragment(BadgeMetadata.generatorVersion)),\n")
            put("  \"output\" : \(fragment(output.path)),\n")
            put("  \"results\" : [")
            var first = true
            var read: [UInt8] = []
            var i = 0
            while i < offsets.count {
                guard offsets[i] >= 0 else { i += 1; continue }
                // The lines of consecutive items usually follow each other in
                // the journal: one read takes a run of them, up to 1 MiB.
                var j = i + 1
                var end = offsets[i] + Int(lengths[i])
                while j < offsets.count && offsets[j] == end && end - offsets[i] < 1 << 20 {
                    end += Int(lengths[j])
                    j += 1
                }
                let start = offsets[i]
                read = [UInt8](repeating: 0, count: end - start)
                let complete = read.withUnsafeMutableBytes { raw -> Bool in
                    var done = 0
                    while done < raw.count {
                        let n = pread(journal, raw.baseAddress! + done, raw.count - done, off_t(start + done))
                        if n < 0 && errno == EINTR { continue }
                        if n <= 0 { return false }
                        done += n
                    }
                    return true
                }
                guard complete else {
                    throw BadgeError(.io, "the batch's journal was cut short while the run went", path: journalPath,
                                     hint: "rerun the batch: finished badges are up to date and are not made again")
                }
                var lineStart = 0
                for k in i..<j {
                    let length = Int(lengths[k])
                    guard read[lineStart + length - 1] == UInt8(ascii: "\n"), read[lineStart] == UInt8(ascii: "{") else {
                        throw BadgeError(.io, "the batch's journal was changed while the run went", path: journalPath,
                                         hint: "rerun the batch: finished badges are up to date and are not made again")
                    }
                    put(first ? "\n    " : ",\n    ")
                    first = false
                    out.append(contentsOf: read[lineStart..<(lineStart + length - 1)])
                    lineStart += length
                }
                try drain(over: 1 << 20)
                i = j
            }
            put(first ? "],\n" : "\n  ],\n")
            if let shard { put("  \"shard\" : \(fragment(shard.description)),\n") }
            put("  \"source\" : \(fragment(source)),\n")
            put("  \"startedAt\" : \(fragment(BadgeMetadata.rfc3339(startedAt, in: .current, fractionalSeconds: true))),\n")
            put("  \"summary\" : \(fragment(summary))\n}\n")
            try drain(over: 0)
        }
        directory.remove(journalName)
        close(journal)
        closed = true
    }

    /// A value as compact JSON, keys sorted, what terminals act on escaped.
    private func fragment<T: Encodable>(_ value: T) -> String {
        (try? encoder.encode(value)).map { String(decoding: OutsideText.escapingControls(inJSON: $0), as: UTF8.self) } ?? "null"
    }
}
