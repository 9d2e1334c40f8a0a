import Foundation

/// The jobs of a batch, read from a manifest file (JSON, JSON Lines or CSV) or
/// from the config's `batch.jobs`. Reading is all or nothing: a manifest with
/// one bad job runs none, and the error says where it is.
package struct BatchManifest: Sendable {
    package enum Format: String, Sendable, CaseIterable {
        case json, jsonLines = "jsonl", csv
    }

    package var jobs: [BatchJob]
    /// Where the jobs came from ("jobs.csv", "config.json batch.jobs").
    package var source: String
    /// The jobs left out of `jobs` because they are wrong, read with
    /// `deferringMistakes`: `BatchPlan.make` names them with what it finds
    /// wrong with the others, in manifest order.
    package var mistakes = Mistakes()

    package init(jobs: [BatchJob], source: String) {
        self.jobs = jobs
        self.source = source
    }

    package static let maxBytes = 64 << 20

    /// Reads `url`; the format comes from the extension (.json, .jsonl/.ndjson,
    /// .csv), or from the content when the extension says nothing.
    /// `deferringMistakes`: a wrong job is left out and kept in `mistakes`
    /// rather than thrown (a manifest that cannot be read at all still throws).
    package static func load(from url: URL, deferringMistakes: Bool = false) throws -> BatchManifest {
        let data = try readUserFile(url, what: "batch manifest", code: .usage,
                                    hint: "give a .json, .jsonl or .csv file of jobs, or put them in the config's batch.jobs")
        return try parse(data, file: url.path, format: format(for: url.pathExtension, data: data),
                         baseDirectory: url.deletingLastPathComponent(), deferringMistakes: deferringMistakes)
    }

    static func format(for pathExtension: String, data: Data) -> Format {
        switch pathExtension.lowercased() {
        case "json": return .json
        case "jsonl", "ndjson": return .jsonLines
        case "csv": return .csv
        default: return sniff(data)
        }
    }

    /// `[` is a JSON array; lines that each start with `{` are JSON Lines; a
    /// single `{` document is JSON; anything else is CSV. A UTF-8 byte order
    /// mark before them (as some editors write) is passed over.
    package static func sniff(_ data: Data) -> Format {
        let text = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data[...]
        let lines = text.split(separator: UInt8(ascii: "\n")).map { $0.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D } }
            .filter { !$0.isEmpty }
        guard let first = lines.first?.first else { return .csv }
        if first == UInt8(ascii: "[") { return .json }
        if first == UInt8(ascii: "{") {
            return lines.count > 1 && lines.allSatisfy({ $0.first == UInt8(ascii: "{") }) ? .jsonLines : .json
        }
        return .csv
    }

    package static func parse(_ data: Data, file: String?, format: Format, baseDirectory: URL,
                              deferringMistakes: Bool = false) throws -> BatchManifest {
        if data.count > maxBytes {
            throw BadgeError(.config, "the manifest is \(data.count) bytes; at most \(maxBytes >> 20) MiB is read", path: file,
                             hint: "split it, or run it in shards (--shard K/N)")
        }
        let read: (jobs: [BatchJob], mistakes: Mistakes)
        switch format {
        case .json: read = try parseJSON(data, file: file, baseDirectory: baseDirectory)
        case .jsonLines: read = try parseJSONLines(data, file: file, baseDirectory: baseDirectory)
        case .csv: read = try parseCSV(data, file: file, baseDirectory: baseDirectory)
        }
        if !deferringMistakes { try read.mistakes.check() }
        var manifest = BatchManifest(jobs: read.jobs, source: file ?? "standard input")
        manifest.mistakes = read.mistakes
        return manifest
    }

    /// `[{...}, ...]` or `{"jobs": [{...}, ...]}`.
    static func parseJSON(_ data: Data, file: String?, baseDirectory: URL) throws -> (jobs: [BatchJob], mistakes: Mistakes) {
        let root = ConfigValue(node: try JSONParser.parse(data, file: file), keyPath: "", file: file)
        let list: ConfigValue
        if case .object = root.node.value {
            let object = try root.object()
            try object.allowOnly(["jobs"])
            list = try object.require("jobs", hint: "write the jobs as an array: {\"jobs\": [{\"prompt\": \"...\"}]}")
        } else {
            list = root
        }
        return try readJobs(in: list, baseDirectory: baseDirectory)
    }

    /// The jobs of a JSON array (a manifest's, or the config's `batch.jobs`).
    package static func jobs(in list: ConfigValue, baseDirectory: URL) throws -> [BatchJob] {
        let read = try readJobs(in: list, baseDirectory: baseDirectory)
        try read.mistakes.check()
        return read.jobs
    }

    static func readJobs(in list: ConfigValue, baseDirectory: URL) throws -> (jobs: [BatchJob], mistakes: Mistakes) {
        var jobs: [BatchJob] = []
        var mistakes = Mistakes()
        for item in try list.array() {
            if let job = try mistakes.job(at: item.location.offset, { try BatchJob.read(try item.object(), baseDirectory: baseDirectory) }) {
                jobs.append(job)
            }
        }
        return (jobs, mistakes)
    }

    /// The wrong jobs of a manifest, and what its plan finds wrong with the
    /// others. Reading goes on past a job that is wrong, so one run names them
    /// all: the first in manifest order in full, and in its hint how many more
    /// there are and where the first few of those are.
    package struct Mistakes: Sendable {
        /// The first mistakes, by where their job begins in the manifest.
        private var kept: [(order: Int, error: BadgeError)] = []
        package private(set) var count = 0
        /// How many of them are about the whole batch rather than a job.
        private var wholeBatchCount = 0
        /// The jobs named in the hint besides the first.
        static let listed = 5

        package init() {}

        package var isEmpty: Bool { count == 0 }

        /// `read`'s job, or nil when it is wrong (noted at `order`).
        mutating func job<T>(at order: Int, _ read: () throws -> T) throws -> T? {
            do {
                return try read()
            } catch let error as BadgeError {
                note(error, at: order)
                return nil
            }
        }

        /// Notes `error` of the job that begins at byte `order` of the manifest;
        /// a negative `order` is a mistake about the whole batch (a default
        /// every job takes), which comes before every job's.
        mutating func note(_ error: BadgeError, at order: Int) {
            count += 1
            if order < 0 { wholeBatchCount += 1 }
            let index = kept.firstIndex { $0.order > order } ?? kept.count
            guard index <= Self.listed else { return }
            kept.insert((order, error), at: index)
            if kept.count > Self.listed + 1 { kept.removeLast() }
        }

        /// Throws the first mistake, with the others in its hint.
        func check() throws {
            guard let first = kept.first else { return }
            var error = first.error
            if count > 1 {
                let others = count - 1
                let more = kept.dropFirst().map(\.error)
                let firstIsWholeBatch = first.order < 0
                let wholeBatchLeft = wholeBatchCount - (firstIsWholeBatch ? 1 : 0)
                let jobsLeft = count - wholeBatchCount - (firstIsWholeBatch ? 0 : 1)
                var counts: [String] = []
                if wholeBatchLeft > 0 {
                    counts.append("\(wholeBatchLeft) more mistake\(wholeBatchLeft == 1 ? "" : "s") for the whole batch")
                }
                if jobsLeft > 0 {
                    let noun = jobsLeft == 1 ? "job is" : "jobs are"
                    counts.append(firstIsWholeBatch ? "\(jobsLeft) \(noun) wrong too" : "\(jobsLeft) more \(noun) wrong")
                }
                var also = counts.joined(separator: ", and ") + ": "
                also += more.map { mistake in
                    let at = mistake.location.map { "line \($0.line), column \($0.column): " } ?? ""
                    let key = mistake.keyPath.map { $0.isEmpty ? "" : "\($0): " } ?? ""
                    return at + key + mistake.message
                }.joined(separator: "; ")
                if others > more.count { also += "; …" }
                error.hint = [error.hint, also].compactMap { $0 }.joined(separator: "\n")
            }
            throw error
        }
    }

    /// One JSON object per line; blank lines are skipped. Errors name the line.
    static func parseJSONLines(_ data: Data, file: String?, baseDirectory: URL) throws -> (jobs: [BatchJob], mistakes: Mistakes) {
        var jobs: [BatchJob] = []
        var mistakes = Mistakes()
        var lineNumber = 0
        var lineOffset = 0
        var values = 0
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            defer { lineOffset += line.count + 1 }
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            let node: JSONNode
            do {
                node = try JSONParser.parse(Data(line), file: file, maxNodes: JSONParser.maxNodes, used: &values,
                                            line: lineNumber, offset: lineOffset)
            } catch let error as BadgeError {
                // Past the file's limit of values, every line after would say so too.
                if values > JSONParser.maxNodes { throw error }
                mistakes.note(error, at: lineOffset)
                continue
            }
            let value = ConfigValue(node: node, keyPath: "", file: file)
            if let job = try mistakes.job(at: lineOffset, { try BatchJob.read(try value.object(), baseDirectory: baseDirectory) }) {
                jobs.append(job)
            }
        }
        return (jobs, mistakes)
    }

    /// A header row naming the columns: the job fields, plus `option:KEY`
    /// columns for backend options. Empty cells mean "not given".
    static func parseCSV(_ data: Data, file: String?, baseDirectory: URL) throws -> (jobs: [BatchJob], mistakes: Mistakes) {
        let table = try CSVTable.parse(data, file: file)
        let known = BatchJob.fields.filter { $0 != "options" }
        var seen: Set<String> = []
        for cell in table.header {
            let column = cell.text.trimmingCharacters(in: .whitespaces)
            guard known.contains(column) || (column.hasPrefix("option:") && column.count > 7) else {
                var hint = "known columns: \(known.joined(separator: ", ")), and option:KEY for a backend option"
                if let near = ConfigObject.closest(to: column, in: known) { hint = "did you mean \"\(near)\"? " + hint }
                throw BadgeError(.config, "unknown column \"\(column)\"", path: file, location: cell.location, hint: hint)
            }
            guard seen.insert(column).inserted else {
                throw BadgeError(.config, "the column \"\(column)\" appears twice", path: file, location: cell.location)
            }
        }
        guard seen.contains("prompt") else {
            throw BadgeError(.config, "the header has no \"prompt\" column", path: file,
                             location: table.header.first?.location, hint: "the first row names the columns, e.g. name,prompt,style")
        }
        let at = SourceLocation(line: 1, column: 1, offset: 0)
        var jobs: [BatchJob] = []
        var mistakes = Mistakes()
        for row in table.rows {
            if let job = try mistakes.job(at: row.first?.location.offset ?? 0, { try csvJob(row) }) { jobs.append(job) }
        }
        return (jobs, mistakes)

        func csvJob(_ row: [CSVTable.Cell]) throws -> BatchJob {
            // Each row becomes the JSON object it stands for, so one reader checks every format alike.
            var members: [JSONMember] = []
            var options: [JSONMember] = []
            func text(_ column: String) -> String? {
                guard let index = table.header.firstIndex(where: { $0.text.trimmingCharacters(in: .whitespaces) == column }),
                      index < row.count, !row[index].text.isEmpty else { return nil }
                return row[index].text
            }
            try BatchJob.said(of: BatchJob.label(name: text("name"), prompt: text("prompt")), under: "") {
                for (index, cell) in row.enumerated() where !cell.text.isEmpty {
                    let column = table.header[index].text.trimmingCharacters(in: .whitespaces)
                    let value: JSONNode.Value
                    if ["size", "seed", "variants"].contains(column) {
                        let digits = cell.text.trimmingCharacters(in: .whitespaces)
                        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else {
                            throw BadgeError(.config, "\(column) must be a whole number, not \"\(cell.text)\"", path: file,
                                             location: cell.location)
                        }
                        value = .number(Double(digits) ?? 0, literal: digits)
                    } else {
                        value = .string(cell.text)
                    }
                    let member = JSONMember(key: column, keyLocation: cell.location, value: JSONNode(value, at: cell.location))
                    if column.hasPrefix("option:") {
                        options.append(JSONMember(key: String(column.dropFirst(7)), keyLocation: cell.location, value: member.value))
                    } else {
                        members.append(member)
                    }
                }
            }
            if !options.isEmpty {
                members.append(JSONMember(key: "options", keyLocation: row[0].location, value: JSONNode(.object(options), at: row[0].location)))
            }
            let object = ConfigObject(members: members, node: JSONNode(.object(members), at: row.first?.location ?? at),
                                      keyPath: "", file: file)
            var job = try BatchJob.read(object, baseDirectory: baseDirectory)
            job.origin.isRow = true
            return job
        }
    }
}
