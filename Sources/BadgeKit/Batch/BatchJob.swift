import Foundation

/// One line of a batch: a named promise, and how to draw it. Anything left
/// out comes from the command line, then the config's defaults.
package struct BatchJob: Sendable, Hashable {
    package var name: String
    package var prompt: String
    package var backend: String?
    package var style: String?
    package var size: Int?
    package var seed: UInt64?
    /// How many images to make, one per seed (seed, seed+1, ...).
    package var variants: Int
    /// A picture for backends that import one, resolved against the manifest's directory.
    package var source: String?
    package var options: [String: String]
    /// Where the job was written, for errors that point at it.
    package var origin: Origin

    package struct Origin: Sendable, Hashable, CustomStringConvertible {
        package var file: String?
        package var location: SourceLocation?
        package var keyPath: String?
        /// Where each field's value was written: "style", "options.fit" (a JSON
        /// job's `options` key, a CSV row's `option:fit` cell), ...
        package var fields: [String: SourceLocation] = [:]
        /// A CSV row: its fields are cells, a backend option an `option:KEY` column.
        package var isRow = false

        package init(file: String?, location: SourceLocation?, keyPath: String? = nil) {
            self.file = file
            self.location = location
            self.keyPath = keyPath
        }

        /// `field` (as `fields` names it) as the manifest writes it: "options.fit"
        /// in a JSON job, the column "option:fit" in a CSV row.
        package func name(of field: String) -> String {
            isRow && field.hasPrefix("options.") ? "option:" + field.dropFirst(8) : field
        }

        /// This origin narrowed to `field`'s value, when the job gave one.
        package func at(_ field: String?) -> Origin {
            guard let field, let location = fields[field] else { return self }
            var copy = self
            copy.location = location
            return copy
        }

        package var description: String {
            (file ?? "manifest") + (location.map { ":\($0.line)" } ?? "")
        }

        func error(_ message: String, hint: String? = nil) -> BadgeError {
            BadgeError(.config, message, path: file, location: location, keyPath: keyPath, hint: hint)
        }
    }

    package static let fields = ["name", "prompt", "backend", "style", "size", "seed", "variants", "source", "options"]
    package static let variantsRange = 1...1000
    /// A file name without its extension and variant suffix; 100 leaves room
    /// for both inside the 255 bytes every Linux file system allows.
    package static let maxNameLength = 100

    package init(
        name: String, prompt: String, backend: String? = nil, style: String? = nil, size: Int? = nil,
        seed: UInt64? = nil, variants: Int = 1, source: String? = nil, options: [String: String] = [:],
        origin: Origin = Origin(file: nil, location: nil)
    ) {
        self.name = name
        self.prompt = prompt
        self.backend = backend
        self.style = style
        self.size = size
        self.seed = seed
        self.variants = variants
        self.source = source
        self.options = options
        self.origin = origin
    }

    /// Reads a job written as a JSON object (a manifest entry, a JSON Lines
    /// line, or an entry of the config's `batch.jobs`). `baseDirectory`
    /// resolves a relative `source`.
    /// Its errors name the job (`job "b": size: 12 is out of range`).
    package static func read(_ object: ConfigObject, baseDirectory: URL) throws -> BatchJob {
        let label = label(name: try? object.value("name")?.string(), prompt: try? object.value("prompt")?.string())
        return try said(of: label, under: object.keyPath) { try readFields(object, baseDirectory: baseDirectory) }
    }

    /// The job's name as its errors give it, read before anything is checked:
    /// its `name` when that can be one, else its prompt's slug; nil when
    /// neither (a wrong name's error then stands alone).
    static func label(name: String?, prompt: String?) -> String? {
        if let name { return nameProblem(name) == nil ? name : nil }
        guard let prompt, !prompt.isEmpty else { return nil }
        return slug(prompt)
    }

    /// `work`'s error said of the job `label`, at the same place: the key is
    /// the job's own ("size"), not where the job sits in its list ("[1].size").
    static func said<T>(of label: String?, under keyPath: String, _ work: () throws -> T) throws -> T {
        do {
            return try work()
        } catch var error as BadgeError {
            guard let label else { throw error }
            var key = error.keyPath ?? ""
            if key == keyPath {
                key = ""
            } else if !keyPath.isEmpty, key.hasPrefix(keyPath + ".") {
                key.removeFirst(keyPath.count + 1)
            }
            error.message = "job \(ConfigExcerpt.quoted(label)): " + (key.isEmpty ? "" : key + ": ") + error.message
            error.keyPath = nil
            throw error
        }
    }

    private static func readFields(_ object: ConfigObject, baseDirectory: URL) throws -> BatchJob {
        try object.allowOnly(fields)
        let prompt = try object.require("prompt", hint: "every job needs the promise to draw").nonEmptyString()
        var origin = Origin(file: object.file, location: object.node.location, keyPath: object.keyPath)
        for member in object.members where fields.contains(member.key) {
            origin.fields[member.key] = member.value.location
            if member.key == "options", case let .object(options) = member.value.value {
                for option in options { origin.fields["options." + option.key] = option.value.location }
            }
        }
        var job = BatchJob(name: "", prompt: prompt, origin: origin)
        if let name = object.value("name") {
            job.name = try name.string()
            if let problem = nameProblem(job.name) { throw name.error(problem.message, hint: problem.hint) }
        } else {
            job.name = slug(prompt)
        }
        job.backend = try object.value("backend")?.nonEmptyString()
        job.style = try object.value("style")?.nonEmptyString()
        job.size = try object.int("size", in: BadgeRequest.sizeRange)
        job.seed = try object.value("seed")?.uint64()
        job.variants = try object.int("variants", in: variantsRange) ?? 1
        if let source = try object.value("source")?.nonEmptyString() {
            job.source = source == "-" ? source : BadgeConfig.resolvePath(source, relativeTo: baseDirectory).path
        }
        if let options = object.value("options") { job.options = try options.stringMap() }
        return job
    }

    /// Why `name` cannot name a file in the output directory, or nil when it can.
    /// Only `[A-Za-z0-9._-]`, starting with a letter, a digit or `_`: no path
    /// separators, no `..`, no hidden files, nothing a shell or a planted
    /// symlink could turn into another place.
    package static func nameProblem(_ name: String) -> (message: String, hint: String)? {
        let hint = "use letters, digits, '.', '_' and '-' (at most \(maxNameLength)), starting with a letter, a digit or '_'"
        if name.isEmpty { return ("the job name is empty", hint) }
        if name.utf8.count > maxNameLength { return ("the job name is \(name.utf8.count) bytes long", hint) }
        for (offset, byte) in name.utf8.enumerated() {
            let safe = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_") || (offset > 0 && (byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")))
            if !safe {
                let shown = byte == 0 ? "a NUL byte" : byte < 0x20 || byte >= 0x7F ? String(format: "byte 0x%02X", byte)
                    : "'\(Character(Unicode.Scalar(byte)))'"
                return ("the job name \(JSONWriter.quote(name)) has \(shown) at byte \(offset)", hint)
            }
        }
        return nil
    }

    /// A file-safe name made from the prompt, for jobs that give none:
    /// "Run a 5k!" becomes "run-a-5k".
    package static func slug(_ prompt: String) -> String {
        var out = ""
        var pendingDash = false
        for scalar in prompt.lowercased().unicodeScalars {
            if scalar.isASCII, CharacterSet.alphanumerics.contains(scalar) {
                if pendingDash && !out.isEmpty { out.append("-") }
                pendingDash = false
                out.unicodeScalars.append(scalar)
                if out.utf8.count >= 60 { break }
            } else {
                pendingDash = true
            }
        }
        // A prompt with no Latin letters or digits (Chinese, emoji) still gets a stable name.
        return out.isEmpty ? "badge-" + hexDigits(UInt64(UInt32(truncatingIfNeeded: BatchHash.fnv1a(prompt))), count: 8) : out
    }
}
