import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import ExecBackend
import Foundation
import Testing

/// A plugin that behaves: what it is sent, what it sees, what badge keeps.
@Suite(.threadsOfTheirOwn)
struct ExecBackendTests {
    @Test func theConformanceSuitePasses() async throws {
        let h = try ExecHarness()
        let backend = try h.backend("good.sh")
        // A plugin that never answers, at work once it has written its child's pid.
        let hanging = try h.backend("hang.sh")
        let pidFile = h.childPIDFile
        try await GeneratorConformance.check(
            backend.generator, request: BadgeRequest(prompt: "Swim twice a week", size: 64, seed: 3),
            waiting: .init(hanging.generator, request: BadgeRequest(prompt: "Swim twice a week", size: 64, seed: 3)) {
                FileManager.default.fileExists(atPath: pidFile.path)
            })
        #expect(try await h.childDies(), "the hanging plugin's child outlived the cancellation")
    }

    @Test func theRequestCarriesEverythingTheProtocolPromises() async throws {
        let h = try ExecHarness()
        let copy = h.root.appendingPathComponent("request.json")
        let backend = try h.backend("good.sh", env: ["REQUEST_COPY": copy.path], extra: #", "options": {"steps": "20", "sampler": "euler"}"#)
        let request = BadgeRequest(prompt: "Call \"Mum\" on Sundays\n", style: "flat", size: 128, seed: 18_446_744_073_709_551_615,
                                   options: ["sampler": "dpm"])
        _ = try await h.run(backend, request: request)
        let sent = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: copy)) as? [String: Any])
        #expect(sent["protocol"] as? Int == 1)
        #expect(sent["kind"] as? String == "generate")
        #expect(sent["prompt"] as? String == "Call \"Mum\" on Sundays\n")
        #expect(sent["style"] as? String == "flat")
        #expect(sent["size"] as? Int == 128)
        // Every UInt64 seed arrives exact (JSON readers that go through doubles would round it).
        #expect(try String(contentsOf: copy, encoding: .utf8).contains("\"seed\": 18446744073709551615,"))
        // The config's options, under the command line's.
        #expect(sent["options"] as? [String: String] == ["steps": "20", "sampler": "dpm"])
        let output = try #require(sent["output"] as? String)
        #expect(output.hasPrefix("/") && output.hasSuffix("/image.png") && output.contains("badge-work-"))
        // One line, so a plugin can read it with a line reader too.
        #expect(try String(contentsOf: copy, encoding: .utf8).filter { $0 == "\n" }.count <= 1)
    }

    @Test func thePluginSeesAMinimalEnvironmentAndNoSecretsOfBadges() async throws {
        let h = try ExecHarness()
        let copy = h.root.appendingPathComponent("env.txt")
        let backend = try h.backend("good.sh", env: ["ENV_COPY": copy.path, "MODEL_TOKEN": "${MY_TOKEN}", "GREETING": "hi ${LANG}!"])
        _ = try await h.run(backend)
        let lines = try String(contentsOf: copy, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.contains("MODEL_TOKEN=tok-for-the-plugin"))
        #expect(lines.contains("GREETING=hi C.UTF-8!"))
        #expect(lines.contains("PATH=/usr/local/bin:/usr/bin:/bin"))
        #expect(lines.contains("HOME=\(h.root.path)"))
        #expect(lines.contains("BADGE_PROTOCOL=1") && lines.contains("BADGE_PROMPT=Learn the cello") && lines.contains("BADGE_SIZE=64"))
        #expect(!lines.contains { $0.contains("sk-never-for-plugins") || $0.hasPrefix("OPENAI_API_KEY=") || $0.hasPrefix("MY_TOKEN=") })
    }

    @Test func itsMetadataIsKeptInTheBadge() async throws {
        let h = try ExecHarness()
        let outcome = try await h.run(try h.backend("good.sh"))
        let stored = try #require(try h.store.current()?.metadata)
        #expect(stored.id == outcome.metadata.id)
        #expect(stored.model == "good 1" && stored.seed == 77 && stored.revisedPrompt == "a good badge")
        #expect(stored.extra == ["steps": "20", "sampler": "euler"])
        #expect(stored.backend == "good" && stored.backendType == "exec")
    }

    /// A token the plugin is given (`"HF_TOKEN": "${MY_TOKEN}"`) never reaches
    /// what badge keeps of its words: the badge's text (a file made to be
    /// shared), a batch's manifest, the studio's JSON. Those are not printed
    /// through the terminal's scrubber, so the backend masks it itself, in
    /// its metadata and in its errors.
    @Test func aTokenItRepeatsIsMaskedInItsMetadataAndErrors() async throws {
        let h = try ExecHarness()
        let token = h.variables["MY_TOKEN"]!
        _ = try await h.run(try h.backend("leaky.sh", env: ["HF_TOKEN": "${MY_TOKEN}"]))
        let stored = try #require(try h.store.current()?.metadata)
        #expect(stored.model == "hub model (token ********)" && stored.revisedPrompt == "drawn for ********")
        #expect(stored.extra == ["endpoint": "https://hub.example/run?token=********"])
        #expect(!(try Data(contentsOf: h.store.badgeURL)).contains(Data("for-the-plugin".utf8)))

        let failing = try ExecHarness()
        let error = try await failing.failure(try failing.backend("echo-token.sh", env: ["HF_TOKEN": "${MY_TOKEN}"]))
        #expect(error.message.hasSuffix("failed: the hub refused token ********"), "\(error)")
        #expect(!"\(error.message) \(error.cause ?? "") \(error.hint ?? "")".contains(token))
    }

    @Test func standardErrorGoesToTheLogAndStraysAreRemoved() async throws {
        let h = try ExecHarness()
        _ = try await h.run(try h.backend("good.sh"))
        #expect(h.log.all.contains("info: plugin: drawing with care"))
        #expect(h.log.all.contains { $0.hasPrefix("warning: the plugin left files beside its image") })
    }

    // MARK: - Availability

    @Test func availabilityIsThePluginsOwnAnswer() async throws {
        let h = try ExecHarness()
        #expect(try await h.backend("good.sh").generator.availability() == .available)
        #expect(try await h.backend("unavailable.sh").generator.availability() == .unavailable(reason: "no GPU found", hint: "plug one in"))
    }

    @Test func anUnavailablePluginIsNeverAskedToGenerate() async throws {
        let h = try ExecHarness()
        let error = try await h.failure(try h.backend("unavailable.sh"))
        #expect(error.code == .backendUnavailable && error.message == "no GPU found")
    }

    @Test func aMissingProgramIsUnavailableBeforeAnythingRuns() async throws {
        let h = try ExecHarness()
        let backend = try h.backend("no-such-plugin.sh")
        guard case let .unavailable(reason, hint) = await backend.generator.availability() else {
            Issue.record("a missing program must be unavailable")
            return
        }
        #expect(reason.contains("no-such-plugin.sh\" was not found or is not executable"))
        #expect(hint?.contains("command[0]") == true)
    }

    @Test func anUnsetVariableInEnvIsUnavailable() async throws {
        let h = try ExecHarness()
        let backend = try h.backend("good.sh", env: ["KEY": "${NOT_SET_ANYWHERE}"])
        #expect(await backend.generator.availability()
            == .unavailable(reason: "the environment variable NOT_SET_ANYWHERE is not set",
                            hint: "export NOT_SET_ANYWHERE=... (this backend's env passes it to the plugin as KEY)"))
    }

    @Test func aHangingAvailabilityCheckIsStoppedAndUnavailable() async throws {
        let h = try ExecHarness()
        let backend = try h.backend("hang.sh", timeout: 1, env: ["HANG_AVAILABILITY": "1"])
        guard case let .unavailable(reason, _) = await backend.generator.availability() else {
            Issue.record("a hanging check must be unavailable")
            return
        }
        #expect(reason.contains("did not finish within its time limit of 1 s"))
        #expect(try await h.childDies())
    }
}

extension ExecBackendTests {
    @Test func aScriptWithoutAShebangCannotBeStartedAndSaysWhy() async throws {
        let h = try ExecHarness()
        guard case let .unavailable(reason, hint) = try await h.backend("noshebang.sh").generator.availability() else {
            Issue.record("a program that cannot be started must be unavailable")
            return
        }
        #expect(reason.hasPrefix("it cannot be started: "), "\(reason)")
        #expect(hint?.contains("#!") == true)
    }
}

extension ExecBackendTests {
    @Test func aChattyPluginCannotFloodTheLog() async throws {
        let h = try ExecHarness()
        _ = try await h.run(try h.backend("chatty.sh"))
        let lines = h.log.all.filter { $0.hasPrefix("info: plugin: step ") }
        #expect(lines.count == 1000)
        #expect(lines.first == "info: plugin: step 0 of 5000")
        #expect(h.log.all.contains("info: plugin: 4000 more lines on standard error not logged"))
    }
}

extension ExecBackendTests {
    @Test func anAvailableAnswerIsReusedForABatchButUnavailableIsAskedAgain() async throws {
        let h = try ExecHarness()
        let asked = h.root.appendingPathComponent("asked.log")
        let backend = try h.backend("good.sh", env: ["ASKED_LOG": asked.path])
        let started = ContinuousClock.now
        for _ in 0..<3 { _ = try await h.run(backend) }
        let elapsed = ContinuousClock.now - started
        // Three badges, one availability check, three generations. On a machine so
        // loaded that the three outlive the answer's lifetime, it is asked again
        // once per lifetime at most.
        let log = try String(contentsOf: asked, encoding: .utf8).split(separator: "\n")
        let checks = log.filter { $0 == "availability" }.count
        #expect(log.filter { $0 == "generate" }.count == 3 && log.first == "availability", "\(log)")
        if elapsed < AvailabilityMemo.lifetime {
            #expect(log == ["availability", "generate", "generate", "generate"])
        } else {
            #expect(checks <= 1 + Int(elapsed / AvailabilityMemo.lifetime), "\(log) in \(elapsed)")
        }

        // An unavailable answer is not kept: each check asks the plugin again.
        let askedAgain = h.root.appendingPathComponent("asked-again.log")
        let unavailable = try h.backend("unavailable.sh", env: ["ASKED_LOG": askedAgain.path])
        for _ in 0..<2 { #expect(await unavailable.generator.availability() != .available) }
        #expect(try String(contentsOf: askedAgain, encoding: .utf8).split(separator: "\n") == ["availability", "availability"])
    }
}
