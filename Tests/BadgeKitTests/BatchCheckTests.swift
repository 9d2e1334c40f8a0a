import BadgeKit
import BadgeTestSupport
import Foundation
import Testing

/// A backend that lists its styles and the options it reads, and refuses a
/// `fit` it cannot take, as a real one does.
private struct PickyGenerator: BadgeGenerator {
    let styles: [String]?
    let requestOptionKeys: Set<String>?
    var sourceOptionKeys: Set<String> = []
    var readsSource = false

    func availability() async -> Availability { .available }

    func generate(_ request: BadgeRequest, in workspace: Workspace) async throws -> GeneratedImage {
        throw BadgeError(.generationFailed, "a checking test draws nothing")
    }

    func checkRequestOptions(_ options: [String: String], backend: String) throws {
        try checkRequestOptionKeys(options, backend: backend)
        if let fit = options["fit"], !["cover", "contain"].contains(fit) {
            throw BadgeError(.usage, "\(RequestOptionNaming.setting("fit", fit)): expected one of cover, contain", backend: backend)
        }
    }
}

/// What a job's backends refuse is placed at the job's field at fault, named
/// as the manifest names it, with the manifest's own mistakes in one run.
@Suite(.threadsOfTheirOwn)
struct BatchCheckTests {
    static let base = URL(fileURLWithPath: "/data/batch", isDirectory: true)
    static let config = try! BadgeConfig.parse(Data("""
        {"backends": {"styled": {"type": "procedural", "fallback": "plain"}, "plain": {"type": "procedural"},
                      "alone": {"type": "procedural"}, "edits": {"type": "procedural"}}}
        """.utf8), file: "config.json")
    static let instances = [
        "styled": BackendInstance(name: "styled", type: "test", generator: PickyGenerator(styles: ["tile", "medal"], requestOptionKeys: ["fit"])),
        "plain": BackendInstance(name: "plain", type: "test", generator: PickyGenerator(styles: [], requestOptionKeys: [])),
        "alone": BackendInstance(name: "alone", type: "test", generator: PickyGenerator(styles: [], requestOptionKeys: ["fit"])),
        "edits": BackendInstance(name: "edits", type: "test", generator: PickyGenerator(
            styles: [], requestOptionKeys: ["fit", "strength"], sourceOptionKeys: ["strength"], readsSource: true)),
    ]

    /// The error a run of `text` stops with, checked as `badge batch` checks it.
    private func mistake(_ text: String, _ format: BatchManifest.Format, file: String) -> BadgeError? {
        do {
            let manifest = try BatchManifest.parse(Data(text.utf8), file: file, format: format, baseDirectory: Self.base,
                                                   deferringMistakes: true)
            _ = try BatchPlan.make(manifest, config: Self.config, defaults: .init(backend: "alone", style: nil, size: 256), check: { request, backend, styleGiven in
                try BackendInstance.checkJob(request, styleGiven: styleGiven,
                                             chain: Self.config.fallbackChain(for: backend).compactMap { Self.instances[$0] })
            })
            return nil
        } catch {
            return error as? BadgeError
        }
    }

    /// An option that acts on a source picture, in a job that gives none, is
    /// refused at that option (a JSON key's value, a CSV cell); with a source it passes.
    @Test func aSourceOptionWithoutASourceIsRefusedAtTheOption() throws {
        let json = #"[{"name": "a", "prompt": "Run", "backend": "edits", "options": {"fit": "cover", "strength": "0.5"}}]"#
        let error = try #require(mistake(json, .json, file: "jobs.json"))
        #expect(error.path == "jobs.json" && error.location?.line == 1 && error.location?.column == 93, "\(error)")
        #expect(error.message == #"job "a": backend 'edits': options.strength "0.5" applies only to a source picture"#, "\(error)")
        #expect(error.hint == #"give the job a "source" picture, or leave the option out"#, "\(error)")
        let csv = "name,prompt,backend,source,option:strength\nb,Swim,edits,,0.5\n"
        let cell = try #require(mistake(csv, .csv, file: "jobs.csv"))
        #expect(cell.location?.line == 2 && cell.location?.column == 15, "\(cell)")
        #expect(cell.message == #"job "b": backend 'edits': option:strength "0.5" applies only to a source picture"#, "\(cell)")
        #expect(cell.hint == "give the job a picture in its source column, or leave the option out", "\(cell)")
        let given = #"[{"name": "c", "prompt": "Run", "backend": "edits", "source": "a.png", "options": {"strength": "0.5"}}]"#
        #expect(mistake(given, .json, file: "jobs.json") == nil)
    }

    @Test func aJSONJobIsRefusedAtTheValueOfTheKeyAtFault() {
        let json = """
            [{"name": "a", "prompt": "Run", "backend": "alone", "options": {"fit": "zoom"}},
             {"name": "b", "prompt": "Read", "backend": "alone", "style": "tile"},
             {"name": "c", "prompt": "\(String(repeating: "x", count: 4001))"}]
            """
        let error = mistake(json, .json, file: "jobs.json")
        #expect(error?.headline == "jobs.json:1:72: job \"a\": backend 'alone': options.fit \"zoom\": expected one of cover, contain")
        #expect(error?.hint == """
            2 more jobs are wrong: line 2, column 63: job "b": backend 'alone': it has no styles; the job's style would be ignored; \
            line 3, column 26: job "c": the prompt is 4001 bytes long
            """)
    }

    @Test func aCSVJobIsRefusedAtItsCell() {
        let csv = """
            name,prompt,backend,style,option:fit,option:size\r
            a,Run,alone,,zoom,\r
            b,Read,alone,,,big\r
            c,Walk,styled,baroque,,\r
            """
        let error = mistake(csv, .csv, file: "jobs.csv")
        #expect(error?.headline == "jobs.csv:2:14: job \"a\": backend 'alone': option:fit \"zoom\": expected one of cover, contain")
        #expect(error?.hint == """
            2 more jobs are wrong: line 3, column 16: job "b": backend 'alone': unknown column "option:size"; \
            line 4, column 15: job "c": backend 'styled': it has no style "baroque"
            """)
    }

    /// A job whose fields are wrong is not checked further; the others are, and
    /// every mistake is named in one run, in manifest order.
    @Test func fieldMistakesAndBackendRefusalsAreNamedTogetherInOrder() {
        let lines = """
            {"name": "a", "prompt": "Run", "options": {"fit": "zoom"}}
            {"name": "b", "prompt": "Read", "size": "big"}
            not json
            {"name": "d", "prompt": "Walk", "backend": "nowhere"}
            """
        let error = mistake(lines, .jsonLines, file: "jobs.jsonl")
        #expect(error?.headline == "jobs.jsonl:1:51: job \"a\": backend 'alone': options.fit \"zoom\": expected one of cover, contain")
        #expect(error?.hint == """
            3 more jobs are wrong: line 2, column 41: job "b": size: expected a whole number, found a string; \
            line 3, column 1: unexpected 'not' where a value was expected; line 4, column 44: job "d": no backend is named "nowhere"
            """)
    }

    /// A fallback takes the job when its backend fails: what it would refuse is named before anything runs.
    @Test func aFallbackThatCannotTakeTheJobIsNamed() {
        let error = mistake(#"[{"name": "a", "prompt": "Run", "backend": "styled", "options": {"fit": "cover"}}]"#, .json, file: "jobs.json")
        #expect(error?.headline == "jobs.json:1:73: job \"a\": backend 'plain' (the fallback of 'styled'): unknown options key \"fit\"")
        #expect(error?.hint == "this backend reads no options")
    }

    /// On the command line an option is still `--option KEY=VALUE`.
    @Test func theCommandLineNamesAnOptionAsItIsTyped() {
        let request = BadgeRequest(prompt: "Run", options: ["fit": "zoom", "size": "9"])
        #expect(throws: BadgeError(.usage, "unknown --option \"size\"", backend: "styled", hint: "it reads: fit")) {
            try Self.instances["styled"]!.check(request)
        }
        #expect(throws: BadgeError(.usage, "--option fit=zoom: expected one of cover, contain", backend: "styled")) {
            try Self.instances["styled"]!.check(BadgeRequest(prompt: "Run", options: ["fit": "zoom"]))
        }
    }
}
