import BadgeKit
import Foundation

/// An exec backend's configuration, read strictly from its config object.
///
/// Relative paths are resolved against the directory of the configuration file
/// (the working directory when there is none), so a plugin can live beside the
/// config that names it: `command[0]` when it contains a `/`, and
/// `workingDirectory`. The program runs in `workingDirectory`, by default that
/// same directory, so its other relative arguments resolve there too.
struct ExecOptions: Sendable {
    static let keys = ["type", "command", "env", "workingDirectory", "timeoutSeconds", "stopGraceSeconds", "options"]
    static let defaultTimeout = 60.0
    static let timeoutRange = 0.1...3600.0
    static let defaultGrace = 2.0
    static let graceRange = 0.0...60.0

    /// The program as written (`command[0]`), resolved when it names a path.
    var program: String
    var arguments: [String]
    /// Values as written; `${NAME}` is filled in from badge's environment when the plugin runs.
    var environment: [String: String]
    var workingDirectory: URL
    var timeout: Duration
    /// How long a run that is being stopped (its time limit passed, or Ctrl-C) has
    /// between SIGTERM and SIGKILL: to cancel a job it started on a server, say.
    var grace: Duration
    /// Options every request carries, under the request's own `--option key=value`s.
    var options: [String: String]

    init(_ config: ConfigObject, base: URL) throws {
        try config.allowOnly(Self.keys)
        let commandValue = try config.require(
            "command", hint: "the program and its arguments, e.g. [\"/usr/bin/python3\", \"my_backend.py\"]")
        let command = try commandValue.stringArray(nonEmpty: true)
        guard !command[0].trimmingCharacters(in: .whitespaces).isEmpty else {
            throw try commandValue.array()[0].error("the program name must not be empty")
        }
        for (index, value) in try commandValue.array().enumerated() where command[index].contains("\0") {
            throw value.error("must not contain a NUL character")
        }
        program = command[0].contains("/") ? BadgeConfig.resolvePath(command[0], relativeTo: base).path : command[0]
        arguments = Array(command.dropFirst())

        environment = [:]
        if let env = config.value("env") {
            environment = try env.stringMap()
            let object = try env.object()
            for key in object.keys {
                guard key.wholeMatch(of: /[A-Za-z_][A-Za-z0-9_]*/) != nil else {
                    throw try object.require(key).error(
                        "\"\(key)\" is not a valid environment variable name", hint: "use letters, digits and '_', not starting with a digit")
                }
                let value = environment[key]!
                if value.contains("\0") { throw try object.require(key).error("must not contain a NUL character") }
                if let problem = EnvironmentTemplate.problem(in: value) {
                    throw try object.require(key).error(problem, hint: "write ${NAME} to pass badge's own variable NAME")
                }
            }
        }

        workingDirectory = base
        if let directory = config.value("workingDirectory") {
            workingDirectory = BadgeConfig.resolvePath(try directory.nonEmptyString(), relativeTo: base)
        }

        timeout = try Self.seconds("timeoutSeconds", in: config, default: Self.defaultTimeout, range: Self.timeoutRange)
        grace = try Self.seconds("stopGraceSeconds", in: config, default: Self.defaultGrace, range: Self.graceRange)

        options = try config.value("options")?.stringMap() ?? [:]
    }

    /// The number of seconds at `key`, which must lie in `range`; `fallback` when it is absent.
    private static func seconds(_ key: String, in config: ConfigObject, default fallback: Double, range: ClosedRange<Double>) throws -> Duration {
        var seconds = fallback
        if let value = config.value(key) {
            seconds = try value.double()
            guard range.contains(seconds) else {
                let low = range.lowerBound == range.lowerBound.rounded() ? String(Int(range.lowerBound)) : String(range.lowerBound)
                throw value.error("\(seconds) is out of range", hint: "use a number of seconds from \(low) to \(Int(range.upperBound))")
            }
        }
        return .milliseconds(Int((seconds * 1000).rounded()))
    }
}

/// `${NAME}` in a configured environment value: badge's own variable NAME. The
/// only syntax there is; everything else is taken literally.
package enum EnvironmentTemplate {
    // A computed property: Regex is not Sendable, so it cannot be a shared constant.
    static var reference: Regex<(Substring, Substring)> { /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/ }

    /// Why `value` is malformed (a `${` that is not a whole reference), or nil.
    static func problem(in value: String) -> String? {
        let stripped = value.replacing(reference, with: "")
        return stripped.contains("${") ? "\"\(value)\" has a ${ that is not a ${NAME} reference" : nil
    }

    /// The names `value` refers to.
    static func references(in value: String) -> [String] {
        value.matches(of: reference).map { String($0.output.1) }
    }

    /// The values of the variables a plugin's `env` passes on that are secrets by
    /// their name (`HF_TOKEN`, `API_KEY`, `DB_PASSWORD`), or by the name they are
    /// passed as: what output must never repeat.
    package static func secrets(in env: [String: String], variables: [String: String]) -> [String] {
        env.flatMap { name, value in
            references(in: value).compactMap { reference -> String? in
                guard BadgeConfig.isSecretKey(name) || BadgeConfig.isSecretKey(reference), let secret = variables[reference], !secret.isEmpty else { return nil }
                return secret
            }
        }
    }

    /// `value` with every reference filled in; nil when one names an unset variable.
    static func expand(_ value: String, from variables: [String: String]) -> String? {
        var missing = false
        let expanded = value.replacing(reference) { match -> String in
            guard let found = variables[String(match.output.1)] else {
                missing = true
                return ""
            }
            return found
        }
        return missing ? nil : expanded
    }
}
