import Foundation

/// One configured backend instance: its name, its type, and its own options
/// (still as located JSON, so the backend's factory reports errors precisely).
public struct BackendConfig: Sendable {
    public var name: String
    public var type: String
    /// The whole object, `type` included; factories call `allowOnly` on it.
    public var options: ConfigObject
    /// Where `type` was written, for "unknown type" errors.
    public var typeLocation: SourceLocation?
    /// True for the instances badge provides without any configuration.
    public var isBuiltIn: Bool
    /// Another instance to use when this one is unavailable or fails (`"fallback"`).
    public var fallback: String?
    /// How many requests a batch sends it at once (`"concurrency"`); nil lets
    /// the backend choose (`BadgeGenerator.preferredConcurrency`).
    public var concurrency: Int?

    public init(
        name: String, type: String, options: ConfigObject, typeLocation: SourceLocation? = nil,
        isBuiltIn: Bool = false, fallback: String? = nil, concurrency: Int? = nil
    ) {
        self.name = name
        self.type = type
        self.options = options
        self.typeLocation = typeLocation
        self.isBuiltIn = isBuiltIn
        self.fallback = fallback
        self.concurrency = concurrency
    }
}

/// The effective configuration: a file's settings over built-in defaults.
public struct BadgeConfig: Sendable {
    public struct Defaults: Sendable, Hashable {
        public var backend: String = "procedural"
        public var style: String?
        /// Where the file gives `style`, for an error about it.
        package var styleLocation: SourceLocation?
        public var size: Int = BadgeRequest.defaultSize
        public init() {}
    }

    public static let historyLimitDefault = 20
    public static let historyLimitRange = 0...10_000
    /// Instance names: what a user types after `--backend`.
    public static let namePattern = "^[a-z0-9][a-z0-9._-]{0,63}$"

    /// The file this came from; nil for the built-in configuration.
    public var file: String?
    public var store: String?
    public var historyLimit = BadgeConfig.historyLimitDefault
    public var defaults = Defaults()
    public var intake = ImageLimits.default
    package var batch = BatchSettings()
    /// Every instance, built-ins first unless the file redefines them, in file order.
    public var backends: [BackendConfig]

    /// The configuration badge uses when there is no file: `procedural` and `import`.
    public static var builtIn: BadgeConfig {
        BadgeConfig(file: nil, backends: builtInBackends)
    }

    static var builtInBackends: [BackendConfig] {
        ["procedural", "import"].map { name in
            BackendConfig(name: name, type: name, options: .empty(keyPath: "backends.\(name)"), isBuiltIn: true)
        }
    }

    public init(file: String?, backends: [BackendConfig]) {
        self.file = file
        self.backends = backends
    }

    public func backend(named name: String) -> BackendConfig? {
        backends.first { $0.name == name }
    }

    /// The instances to try for `name`, in order: it, then its fallbacks.
    public func fallbackChain(for name: String) -> [String] {
        var chain = [name]
        while let next = backend(named: chain.last!)?.fallback, !chain.contains(next) { chain.append(next) }
        return chain
    }

    /// Every fallback names a configured instance, and no chain comes back on itself.
    func checkFallbacks(_ section: ConfigObject?) throws {
        // By name, once: a lookup per step keeps a long configuration's check linear.
        let byName = Dictionary(backends.map { ($0.name, $0) }) { first, _ in first }
        let members = Dictionary((section?.members ?? []).map { ($0.key, $0) }) { first, _ in first }
        var ending: Set<String> = []  // backends whose chain is known to end
        for backend in backends {
            guard let fallback = backend.fallback, let member = members[backend.name],
                  let value = (try? section?.value(of: member).object())?.value("fallback") else { continue }
            guard byName[fallback] != nil else {
                throw value.error("no backend is named \(ConfigExcerpt.quoted(fallback))",
                                  hint: "configured backends: \(backends.map(\.name).joined(separator: ", "))")
            }
            var seen = [backend.name]
            var seenSet: Set<String> = [backend.name]
            var next: String? = fallback
            while let name = next, !ending.contains(name) {
                if seenSet.contains(name) {
                    throw value.error("the fallbacks go round in a circle: \((seen + [name]).joined(separator: " -> "))",
                                      hint: "end the chain with a backend that has no fallback, such as procedural")
                }
                seen.append(name)
                seenSet.insert(name)
                next = byName[name]?.fallback
            }
            ending.formUnion(seenSet)
        }
    }

    /// The most backends a configuration may name: its check is bounded before it starts.
    static let maxBackends = 10_000

    // MARK: - Finding the file

    /// Where the configuration comes from: `--config`, then `$BADGE_CONFIG`, then
    /// `$XDG_CONFIG_HOME/badge/config.json` (if it exists). `required` is true when
    /// the user named the file, so its absence is an error rather than a default.
    public static func locate(explicit: String?, variables: [String: String], workingDirectory: URL)
        -> (url: URL, required: Bool)?
    {
        if let explicit { return (resolvePath(explicit, relativeTo: workingDirectory), true) }
        if let env = variables["BADGE_CONFIG"], !env.isEmpty {
            return (resolvePath(env, relativeTo: workingDirectory), true)
        }
        let configHome = variables["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (home(variables) + "/.config")
        return (URL(fileURLWithPath: configHome).appendingPathComponent("badge/config.json"), false)
    }

    /// Loads the configuration as `locate` finds it; built-in defaults when there is no file.
    public static func load(explicit: String?, variables: [String: String], workingDirectory: URL) throws -> BadgeConfig {
        guard let (url, required) = locate(explicit: explicit, variables: variables, workingDirectory: workingDirectory) else {
            return .builtIn
        }
        if !required && !FileManager.default.fileExists(atPath: url.path) { return .builtIn }
        return try load(from: url)
    }

    public static func load(from url: URL) throws -> BadgeConfig {
        let data = try readUserFile(url, what: "configuration file", code: .config,
                                    hint: "check the path given by --config or $BADGE_CONFIG", maxBytes: 8 << 20)
        return try parse(data, file: url.path)
    }

    /// Parses and checks a configuration document against the schema.
    public static func parse(_ data: Data, file: String?) throws -> BadgeConfig {
        let root = ConfigValue(node: try JSONParser.parse(data, file: file), keyPath: "", file: file)
        let object = try root.object()
        try object.allowOnly(["store", "historyLimit", "defaults", "intake", "backends", "batch"])
        var config = BadgeConfig(file: file, backends: [])

        if let store = object.value("store") {
            config.store = try store.nonEmptyString()
        }
        if let limit = try object.int("historyLimit", in: historyLimitRange) {
            config.historyLimit = limit
        }
        if let defaults = try object.object("defaults") {
            try defaults.allowOnly(["backend", "style", "size"])
            if let backend = defaults.value("backend") { config.defaults.backend = try backend.nonEmptyString() }
            if let style = defaults.value("style") {
                config.defaults.style = try style.nonEmptyString()
                config.defaults.styleLocation = style.location
            }
            if let size = try defaults.int("size", in: BadgeRequest.sizeRange) { config.defaults.size = size }
        }
        if let intake = try object.object("intake") {
            try intake.allowOnly(["maxFileBytes", "maxSide", "maxPixels", "maxDecodeBytes"])
            if let v = try intake.int("maxFileBytes", in: 1024...(1 << 30)) { config.intake.maxFileBytes = v }
            if let v = try intake.int("maxSide", in: 16...65535) { config.intake.maxSide = v }
            if let v = try intake.int("maxPixels", in: 256...1_000_000_000) { config.intake.maxPixels = v }
            if let v = try intake.int("maxDecodeBytes", in: (1 << 20)...(64 << 30)) { config.intake.maxDecodeBytes = v }
        }

        var backends: [BackendConfig] = []
        let section = try object.object("backends")
        if let section {
            guard section.members.count <= maxBackends else {
                throw BadgeError(.config, "the configuration has \(section.members.count) backends; badge reads at most \(maxBackends)",
                                 path: file, location: section.node.location, keyPath: section.keyPath,
                                 hint: "a configuration names the few backends you use; split the rest into other files")
            }
            let pattern = try Regex(namePattern)
            for member in section.members {
                let value = section.value(of: member)
                guard member.key.wholeMatch(of: pattern) != nil else {
                    throw BadgeError(
                        .config, "\"\(member.key)\" is not a valid backend name", path: file,
                        location: member.keyLocation, keyPath: value.keyPath,
                        hint: "use lowercase letters, digits, '.', '_' and '-', starting with a letter or digit")
                }
                let whole = try value.object()
                let type = try whole.require("type", hint: "say which kind of backend this is, e.g. \"type\": \"procedural\"")
                // `fallback` and `concurrency` belong to the pipeline, not the backend: its factory never sees them.
                let options = ConfigObject(members: whole.members.filter { !pipelineKeys.contains($0.key) }, node: whole.node,
                                           keyPath: whole.keyPath, file: whole.file)
                backends.append(BackendConfig(
                    name: member.key, type: try type.nonEmptyString(), options: options,
                    typeLocation: type.location, fallback: try whole.value("fallback")?.nonEmptyString(),
                    concurrency: try whole.int("concurrency", in: BatchSettings.concurrencyRange)))
            }
        }
        if let batch = try object.object("batch") {
            let base = file.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
                ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
            config.batch = try BatchSettings.read(batch, baseDirectory: base)
        }

        let defined = Set(backends.map(\.name))
        config.backends = builtInBackends.filter { !defined.contains($0.name) } + backends
        try config.checkFallbacks(section)

        if let backendValue = try object.object("defaults")?.value("backend"),
           config.backend(named: config.defaults.backend) == nil {
            throw backendValue.error(
                "no backend is named \"\(config.defaults.backend)\"",
                hint: "configured backends: \(config.backends.map(\.name).joined(separator: ", "))")
        }
        return config
    }

    /// Keys of a backend object that the pipeline reads, not the backend.
    static let pipelineKeys: Set<String> = ["fallback", "concurrency"]

    // MARK: - The store directory

    /// `--store`, then `$BADGE_STORE`, then the config's `store`, then
    /// `$XDG_DATA_HOME/badge`, then `~/.local/share/badge`.
    public func storeDirectory(explicit: String?, variables: [String: String], workingDirectory: URL) -> URL {
        if let explicit { return Self.resolvePath(explicit, relativeTo: workingDirectory) }
        if let env = variables["BADGE_STORE"], !env.isEmpty { return Self.resolvePath(env, relativeTo: workingDirectory) }
        if let store {
            let base = file.map { URL(fileURLWithPath: $0).deletingLastPathComponent() } ?? workingDirectory
            return Self.resolvePath(store, relativeTo: base, variables: variables)
        }
        let dataHome = variables["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (Self.home(variables) + "/.local/share")
        return URL(fileURLWithPath: dataHome, isDirectory: true).appendingPathComponent("badge", isDirectory: true)
    }

    /// `$XDG_CACHE_HOME/badge`, then `~/.cache/badge`: what badge keeps only
    /// to be faster (fontconfig's answer), safe to delete.
    public static func cacheDirectory(variables: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let cacheHome = variables["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (home(variables) + "/.cache")
        return URL(fileURLWithPath: cacheHome, isDirectory: true).appendingPathComponent("badge", isDirectory: true)
    }

    static func home(_ variables: [String: String]) -> String {
        variables["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
    }

    /// Expands `~/` and resolves relative paths against `base`.
    public static func resolvePath(_ path: String, relativeTo base: URL, variables: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        var expanded = path
        if expanded == "~" { expanded = home(variables) }
        else if expanded.hasPrefix("~/") { expanded = home(variables) + expanded.dropFirst(1) }
        if expanded.hasPrefix("/") { return URL(fileURLWithPath: expanded).withoutDotComponents }
        return base.appendingPathComponent(expanded).withoutDotComponents
    }

    // MARK: - Showing it

    /// The effective configuration as JSON, with secrets masked: values of keys
    /// that look like credentials are replaced, and `...Env` keys show whether
    /// the variable they name is set, never its value.
    public func effectiveJSON(storeDirectory: URL, variables: [String: String]) -> String {
        let at = SourceLocation(line: 1, column: 1, offset: 0)
        func node(_ v: JSONNode.Value) -> JSONNode { JSONNode(v, at: at) }
        func str(_ s: String) -> JSONNode { node(.string(s)) }
        func num(_ n: Int) -> JSONNode { node(.number(Double(n), literal: String(n))) }
        func member(_ k: String, _ v: JSONNode) -> JSONMember { JSONMember(key: k, keyLocation: at, value: v) }

        var defaultsMembers = [member("backend", str(defaults.backend)), member("size", num(defaults.size))]
        if let style = defaults.style { defaultsMembers.insert(member("style", str(style)), at: 1) }
        let backendMembers = backends.map { backend -> JSONMember in
            var options = backend.options.members.map { m in JSONMember(key: m.key, keyLocation: at, value: Self.masked(m.key, m.value, variables)) }
            if options.isEmpty { options = [member("type", str(backend.type))] }
            if let fallback = backend.fallback { options.append(member("fallback", str(fallback))) }
            if let concurrency = backend.concurrency { options.append(member("concurrency", num(concurrency))) }
            return member(backend.name, node(.object(options)))
        }
        let root = node(.object([
            member("source", file.map(str) ?? str("built-in defaults (no configuration file)")),
            member("store", str(storeDirectory.path)),
            member("historyLimit", num(historyLimit)),
            member("defaults", node(.object(defaultsMembers))),
            member("intake", node(.object([
                member("maxFileBytes", num(intake.maxFileBytes)),
                member("maxSide", num(intake.maxSide)),
                member("maxPixels", num(intake.maxPixels)),
                member("maxDecodeBytes", num(intake.maxDecodeBytes)),
            ]))),
            member("backends", node(.object(backendMembers))),
            member("batch", node(.object([
                member("output", str(batch.output?.path ?? "./\(BatchSettings.defaultOutput) (beside where badge batch runs)")),
                member("concurrency", num(batch.concurrency ?? BatchSettings.defaultConcurrency)),
                member("failFast", node(.bool(batch.failFast))),
                member("jobs", num(batch.jobs?.jobs.count ?? 0)),
            ]))),
        ]))
        return JSONWriter.write(root)
    }

    /// Whether a key or a variable's name says it holds a secret (`apiKey`,
    /// `HF_TOKEN`, `DB_PASSWORD`); a key that names a variable (`apiKeyEnv`) does not.
    package static func isSecretKey(_ key: String) -> Bool {
        let lower = key.lowercased()
        if lower.hasSuffix("env") { return false }
        return ["key", "token", "secret", "password", "authorization", "credential"].contains { lower.contains($0) }
    }

    private static func masked(_ key: String, _ value: JSONNode, _ variables: [String: String]) -> JSONNode {
        if isSecretKey(key) { return JSONNode(.string("********"), at: value.location) }
        if key.lowercased().hasSuffix("env"), case let .string(name) = value.value {
            let state = (variables[name].map { !$0.isEmpty } ?? false) ? "set" : "not set"
            return JSONNode(.string("\(name) (\(state))"), at: value.location)
        }
        if case let .object(members) = value.value {
            return JSONNode(.object(members.map { JSONMember(key: $0.key, keyLocation: $0.keyLocation, value: masked($0.key, $0.value, variables)) }), at: value.location)
        }
        return value
    }
}
