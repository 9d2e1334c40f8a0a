import BadgeKit
import BadgeTestSupport
import ExecBackend
import Foundation
import Testing

/// An exec backend's configuration is read as strictly as every other: each
/// mistake names the file, the line and column, and the key.
@Suite(.threadsOfTheirOwn)
struct ExecConfigTests {
    private func error(_ backend: String) throws -> BadgeError {
        let text = "{\n  \"backends\": {\n    \"mine\": \(backend)\n  }\n}\n"
        do {
            let config = try BadgeConfig.parse(Data(text.utf8), file: "/etc/badge/config.json")
            _ = try ExecHarness.registry.makeBackend(named: "mine", in: config, environment: BadgeEnvironment(variables: [:]))
        } catch let error as BadgeError {
            #expect(error.code == .config)
            #expect(error.path == "/etc/badge/config.json")
            return error
        }
        Issue.record("the configuration was accepted: \(backend)")
        throw CancellationError()
    }

    @Test(arguments: [
        (#"{"type": "exec"}"#, "backends.mine", "the required key \"command\" is missing", 3),
        (#"{"type": "exec", "command": []}"#, "backends.mine.command", "must not be an empty array", 3),
        (#"{"type": "exec", "command": "python3 x.py"}"#, "backends.mine.command", "expected an array, found a string", 3),
        (#"{"type": "exec", "command": ["python3", 2]}"#, "backends.mine.command[1]", "expected a string, found a number", 3),
        (#"{"type": "exec", "command": [" "]}"#, "backends.mine.command[0]", "the program name must not be empty", 3),
        (#"{"type": "exec", "command": ["x"], "timeoutSeconds": 0}"#, "backends.mine.timeoutSeconds", "0.0 is out of range", 3),
        (#"{"type": "exec", "command": ["x"], "timeoutSeconds": "60"}"#, "backends.mine.timeoutSeconds", "expected a number, found a string", 3),
        (#"{"type": "exec", "command": ["x"], "stopGraceSeconds": 61}"#, "backends.mine.stopGraceSeconds", "61.0 is out of range", 3),
        (#"{"type": "exec", "command": ["x"], "stopGraceSeconds": -1}"#, "backends.mine.stopGraceSeconds", "-1.0 is out of range", 3),
        (#"{"type": "exec", "command": ["x"], "env": {"A": 1}}"#, "backends.mine.env.A", "expected a string, found a number", 3),
        (#"{"type": "exec", "command": ["x"], "env": {"1A": "b"}}"#, "backends.mine.env.1A", "\"1A\" is not a valid environment variable name", 3),
        (#"{"type": "exec", "command": ["x"], "env": {"A": "${B"}}"#, "backends.mine.env.A", "\"${B\" has a ${ that is not a ${NAME} reference", 3),
        (#"{"type": "exec", "command": ["x"], "workingDirectory": 7}"#, "backends.mine.workingDirectory", "expected a string, found a number", 3),
        (#"{"type": "exec", "command": ["x"], "options": {"steps": 20}}"#, "backends.mine.options.steps", "expected a string, found a number", 3),
    ])
    func mistakesArePointedAt(backend: String, keyPath: String, message: String, line: Int) throws {
        let error = try error(backend)
        #expect(error.keyPath == keyPath)
        #expect(error.message == message)
        #expect(error.location?.line == line)
    }

    /// What a plugin's `env` passes on is a secret when its name, or the name it
    /// is passed as, says so; a model name or a thread count is not masked.
    @Test func theSecretsAPluginIsGivenAreKnownByName() {
        let env = ["HF_TOKEN": "${HF_TOKEN}", "MODEL": "${MODEL_NAME}", "X": "${API_KEY}", "AUTHORIZATION": "Bearer ${BEARER}", "DB_PASSWORD_ENV": "${PASS_NAME}",
                   "THREADS": "${THREADS}", "GONE": "${UNSET_SECRET}"]
        let variables = ["HF_TOKEN": "hf_abcdef123456", "MODEL_NAME": "sdxl-turbo", "API_KEY": "k-123456", "BEARER": "b-654321",
                         "THREADS": "4", "PASS_NAME": "DB_PASS"]
        #expect(EnvironmentTemplate.secrets(in: env, variables: variables).sorted() == ["b-654321", "hf_abcdef123456", "k-123456"])
    }

    /// A time out of its range says which numbers are allowed.
    @Test func aTimeOutOfRangeSaysTheRange() throws {
        let timeout = try error(#"{"type": "exec", "command": ["x"], "timeoutSeconds": 4000}"#)
        #expect(timeout.hint == "use a number of seconds from 0.1 to 3600", "\(String(describing: timeout.hint))")
        let grace = try error(#"{"type": "exec", "command": ["x"], "stopGraceSeconds": 90}"#)
        #expect(grace.message == "90.0 is out of range" && grace.hint == "use a number of seconds from 0 to 60", "\(grace)")
    }

    @Test func aTypoGetsADidYouMean() throws {
        let error = try error(#"{"type": "exec", "command": ["x"], "timeoutSecond": 5}"#)
        #expect(error.message == "unknown key \"timeoutSecond\"")
        #expect(error.hint?.hasPrefix("did you mean \"timeoutSeconds\"?") == true)
    }

    @Test func relativePathsStartAtTheConfigFilesDirectory() async throws {
        let h = try ExecHarness()
        let plugins = h.root.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: ExecHarness.fixtures.appendingPathComponent("good.sh"), to: plugins.appendingPathComponent("good.sh"))
        let marker = "made-in-the-working-directory"
        let text = """
            {"backends": {"local": {"type": "exec", "command": ["plugins/good.sh"], "workingDirectory": "plugins",
                                    "env": {"PNG_SOURCE": "\(h.pngSource.path)", "ENV_COPY": "\(marker)"}}}}
            """
        try Data(text.utf8).write(to: h.configFile)
        // badge itself runs elsewhere: the paths must not depend on its working directory.
        let config = try BadgeConfig.load(from: h.configFile)
        var environment = h.environment
        environment.workingDirectory = URL(fileURLWithPath: "/")
        let backend = try ExecHarness.registry.makeBackend(named: "local", in: config, environment: environment)
        _ = try await Pipeline(environment: environment).run(
            BadgeRequest(prompt: "p", size: 64), backend: backend, commitment: .init(timeZone: .gmt), to: .store(h.store))
        #expect(FileManager.default.fileExists(atPath: plugins.appendingPathComponent(marker).path))
    }
}
