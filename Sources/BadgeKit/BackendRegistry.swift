import Foundation

/// A backend instance ready to run: its configured name, its type, and the generator.
public struct BackendInstance: Sendable {
    public var name: String
    public var type: String
    public var generator: any BadgeGenerator

    public init(name: String, type: String, generator: any BadgeGenerator) {
        self.name = name
        self.type = type
        self.generator = generator
    }

    /// `style` as this backend spells it, when the two differ only in case
    /// ("Tile" is the procedural backend's "tile"): styles are matched the way
    /// people type them, and recorded (and a batch's requests hashed) as the
    /// backend names them. Any other style is returned as given.
    package func spelling(ofStyle style: String) -> String {
        guard let styles = generator.styles, !styles.contains(style) else { return style }
        return styles.first { $0.lowercased() == style.lowercased() } ?? style
    }

    /// The style a request for `prompt` is handed: `given` (`--style`, a
    /// job's, the studio's), else `fallback` (the configuration's default)
    /// unless the prompt's own words ask for a style, which the backend then
    /// reads from them.
    package func style(given: String?, fallback: String?, prompt: String) -> String? {
        if let given { return spelling(ofStyle: given) }
        guard let fallback, generator.style(askedForIn: prompt) == nil else { return nil }
        return spelling(ofStyle: fallback)
    }

    /// What a request to this backend must be before anything runs: a valid
    /// request (size, prompt length), options the backend reads, and a style it
    /// has (for a backend that lists its styles). The pipeline checks each
    /// backend it calls; a batch checks every job with it before the first runs.
    package func check(_ request: BadgeRequest) throws {
        try request.validate()
        try generator.checkRequestOptions(request.options, backend: name)
        try checkSourceOptions(of: request)
        if let style = request.style { try check(style: style) }
    }

    /// Refuses an option that acts on a source picture alone (`sourceOptionKeys`)
    /// in a request without one.
    package func checkSourceOptions(of request: BadgeRequest) throws {
        guard request.source == nil, let key = generator.sourceOptionKeys.intersection(request.options.keys).min(),
              let value = request.options[key] else { return }
        throw BadgeError(.usage, "\(RequestOptionNaming.setting(key, value)) applies only to a source picture", backend: name,
                         hint: "\(RequestOptionNaming.addSource), or leave the option out")
    }

    /// Refuses `style` when this backend lists its styles and it is not one of them.
    package func check(style: String) throws {
        guard let styles = generator.styles, !styles.isEmpty, !styles.contains(spelling(ofStyle: style)) else { return }
        throw BadgeError(.usage, "it has no style \"\(style)\"", backend: name,
                         hint: "choose one of: " + styles.joined(separator: ", "))
    }

    /// What `check` and `checkSource` refuse of a batch job's request, each
    /// refusal naming the job's field at fault (`RequestRefusal`). A style the
    /// job names (`styleGiven`) is checked here, and refused by a backend with
    /// no styles, which would ignore it; one it did not name (`--style`, the
    /// config's) is the batch's to check once. `fallbackOf` is the backend
    /// this one stands in for: as a fallback, only what it would refuse when
    /// it runs is checked (a source and a style are its first backend's business).
    package func checkJob(_ request: BadgeRequest, styleGiven: Bool, fallbackOf: String? = nil) throws {
        func at(_ field: String, _ work: () throws -> Void) throws {
            do {
                try work()
            } catch let error as BadgeError {
                throw RequestRefusal(field: field, fallbackOf: fallbackOf, error: error)
            }
        }
        try at(BadgeRequest.sizeRange.contains(request.size) ? "prompt" : "size") { try request.validate() }
        do {
            try generator.checkRequestOptions(request.options, backend: name)
        } catch let error as BadgeError {
            // The option at fault is the first one refused alone; the whole set's refusal when none is.
            for key in request.options.keys.sorted() {
                try at("options." + key) { try generator.checkRequestOptions([key: request.options[key]!], backend: name) }
            }
            throw RequestRefusal(field: "options", fallbackOf: fallbackOf, error: error)
        }
        if request.source == nil, let key = generator.sourceOptionKeys.intersection(request.options.keys).min() {
            try at("options." + key) { try checkSourceOptions(of: request) }
        }
        guard styleGiven, let style = request.style else {
            if fallbackOf == nil { try at("source") { try checkSource(of: request) } }
            return
        }
        try at("style") {
            try check(style: style)
            if fallbackOf == nil, generator.styles?.isEmpty == true {
                throw BadgeError(.usage, "it has no styles; the job's style would be ignored", backend: name,
                                 hint: "describe the look in the prompt instead")
            }
        }
        if fallbackOf == nil { try at("source") { try checkSource(of: request) } }
    }

    /// `checkJob` by a job's backend, `chain[0]`, and by each fallback after it:
    /// a fallback takes the job when its backend fails, so what it would refuse
    /// is known before anything runs.
    package static func checkJob(_ request: BadgeRequest, styleGiven: Bool, chain: [BackendInstance]) throws {
        for (index, instance) in chain.enumerated() {
            try instance.checkJob(request, styleGiven: styleGiven, fallbackOf: index == 0 ? nil : chain[0].name)
        }
    }

    /// Refuses a source picture (`--source`, a batch job's `source`) when this
    /// backend makes its picture from the words alone: it would be ignored.
    package func checkSource(of request: BadgeRequest) throws {
        guard request.source != nil, !generator.readsSource else { return }
        throw BadgeError(.usage, "it makes its picture from the words alone and cannot use a source picture (\(RequestOptionNaming.source))",
                         backend: name,
                         hint: "the backends that read a picture: import (badge import FILE \"your promise\", or \"backend\": \"import\" in a batch job), and http backends with \"api\" openai, automatic1111 or comfyui")
    }

    /// The styles candidates for `prompt` are varied through, so they also
    /// differ in look: the backend's, when no style was `given` and the
    /// prompt's words ask for none; else nil, and every candidate has the one style.
    package func stylesToVary(given: String?, prompt: String) -> [String]? {
        guard given == nil, let styles = generator.styles, !styles.isEmpty, generator.style(askedForIn: prompt) == nil else { return nil }
        return styles
    }
}

/// A batch job's request refused by `BackendInstance.checkJob`: the `error`,
/// the job's field at fault ("prompt", "size", "style", "source", "options",
/// "options.KEY"), and the backend the refusing one is the fallback of.
package struct RequestRefusal: Error, Sendable {
    package var field: String
    package var fallbackOf: String?
    package var error: BadgeError
}

/// How messages name a request's backend options: `--option KEY=VALUE` on the
/// command line, the manifest's own field in a batch (a JSON job's `options`,
/// a CSV row's `option:KEY` column). A batch checks its jobs with
/// `$current.withValue(.manifest(row:))`.
package enum RequestOptionNaming: Sendable {
    case commandLine
    /// `row`: a CSV row, whose options are `option:KEY` cells.
    case manifest(row: Bool)

    @TaskLocal package static var current: RequestOptionNaming = .commandLine

    /// One option as given: `--option fit=zoom`, `options.fit "zoom"`, `option:fit "zoom"`.
    package static func setting(_ key: String, _ value: String) -> String {
        switch current {
        case .commandLine: return "--option \(key)=\(value)"
        case .manifest(row: false): return "options.\(key) \(JSONWriter.quote(value))"
        case .manifest(row: true): return "option:\(key) \(JSONWriter.quote(value))"
        }
    }

    /// An option key no backend reads: `--option "bogus"`, `options key "bogus"`, `column "option:bogus"`.
    package static func key(_ key: String) -> String {
        switch current {
        case .commandLine: return "--option \(JSONWriter.quote(key))"
        case .manifest(row: false): return "options key \(JSONWriter.quote(key))"
        case .manifest(row: true): return "column \(JSONWriter.quote("option:" + key))"
        }
    }

    /// Where a source picture was given: `--source`, a job's `source`.
    package static var source: String {
        switch current {
        case .commandLine: return "--source"
        case .manifest(row: false): return "the job's \"source\""
        case .manifest(row: true): return "the job's source column"
        }
    }

    /// How to give a source picture: `--source FILE`, a job's `source`.
    package static var addSource: String {
        switch current {
        case .commandLine: return "add --source FILE"
        case .manifest(row: false): return "give the job a \"source\" picture"
        case .manifest(row: true): return "give the job a picture in its source column"
        }
    }

    /// Options in general: `--option`, `options`, `option:KEY columns`.
    package static var options: String {
        switch current {
        case .commandLine: return "--option"
        case .manifest(row: false): return "options"
        case .manifest(row: true): return "option:KEY columns"
        }
    }
}

/// Maps a backend *type* ("procedural", "import", ...) to a factory that builds an
/// instance from its config object. A value, not a global: the CLI builds one
/// with every backend it ships, and tests build their own with fakes.
public struct BackendRegistry: Sendable {
    /// Builds a generator from its options. Validates every option (call
    /// `config.options.allowOnly`) and throws `BadgeError(.config)` located in the file.
    public typealias Factory = @Sendable (BackendConfig, BadgeEnvironment) throws -> any BadgeGenerator

    public struct Entry: Sendable {
        public var type: String
        public var summary: String
        public var factory: Factory
    }

    private var entries: [String: Entry] = [:]

    public init() {}

    /// Registers `type`; a later registration of the same type replaces the earlier.
    public mutating func register(_ type: String, summary: String, factory: @escaping Factory) {
        entries[type] = Entry(type: type, summary: summary, factory: factory)
    }

    public var types: [String] { entries.keys.sorted() }

    /// The entry for `type`, matched without regard to case ("Procedural" is "procedural").
    public func entry(for type: String) -> Entry? {
        entries[type] ?? entries.first { $0.key.lowercased() == type.lowercased() }?.value
    }

    /// Builds one instance, or says precisely why its configuration is wrong.
    public func makeBackend(_ config: BackendConfig, environment: BadgeEnvironment) throws -> BackendInstance {
        guard let entry = entry(for: config.type) else {
            var hint = "known types: \(types.joined(separator: ", "))"
            if let near = ConfigObject.closest(to: config.type, in: types) { hint = "did you mean \"\(near)\"? " + hint }
            throw BadgeError(
                .config, "unknown backend type \"\(config.type)\"", path: config.options.file,
                location: config.typeLocation, keyPath: config.options.childPath("type"), hint: hint)
        }
        do {
            var config = config
            config.type = entry.type
            let generator = try entry.factory(config, environment)
            return BackendInstance(name: config.name, type: entry.type, generator: generator)
        } catch let error as BadgeError {
            throw error.code == .config ? error : error.attributed(to: config.name)
        }
    }

    /// Builds the instance the user asked for by name.
    public func makeBackend(named name: String, in config: BadgeConfig, environment: BadgeEnvironment) throws -> BackendInstance {
        guard let backendConfig = config.backend(named: name) else {
            var hint = "configured backends: \(config.backends.map(\.name).joined(separator: ", "))"
            if let near = ConfigObject.closest(to: name, in: config.backends.map(\.name)) {
                hint = "did you mean \"\(near)\"? " + hint
            }
            throw BadgeError(.unknownBackend, "no backend is named \"\(name)\"", path: config.file, hint: hint)
        }
        return try makeBackend(backendConfig, environment: environment)
    }

    /// Builds every configured instance; the first configuration error is thrown.
    public func makeAll(_ config: BadgeConfig, environment: BadgeEnvironment) throws -> [BackendInstance] {
        try config.backends.map { try makeBackend($0, environment: environment) }
    }
}

/// A backend type that adds itself to a registry, under its type name: what
/// `BadgeMain.run(registering:)` takes to build a `badge` with more backends.
///
/// ```swift
/// public static func register(in registry: inout BackendRegistry) {
///     registry.register("solid", summary: "a disc of one colour") { config, _ in
///         try config.options.allowOnly(["type"])
///         return SolidGenerator()
///     }
/// }
/// ```
public protocol RegisteringGenerator: BadgeGenerator {
    /// Adds this type's factory to `registry` (``BackendRegistry/register(_:summary:factory:)``).
    static func register(in registry: inout BackendRegistry)
}
