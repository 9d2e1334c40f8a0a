#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging

/// Where a generated badge goes.
public enum BadgeDestination: Sendable {
    /// Commit it as the current badge.
    case store(BadgeStore)
    /// Write it to a file and leave the store alone (a preview, a batch output),
    /// under the `OutputTarget` policy: a FIFO or a device is written into, a
    /// symbolic link followed, a directory refused.
    case file(URL)
    /// Write it to standard output and leave the store alone (`--output -`).
    case standardOutput
}

/// The result of one run through the pipeline.
public struct PipelineOutcome: Sendable {
    public var url: URL
    public var metadata: BadgeMetadata
    public var byteCount: Int
    public var duration: Duration
}

/// The stages every badge passes, whatever made it:
/// request check → availability → private workspace → the backend
/// (a ``GeneratedImage``) → the intake: format, header, limits, a full decode
/// of an untrusted image (an `AdmittedImage`) → metadata stamped into the
/// PNG and the PNG check (a ``CheckedBadge``) → the store's atomic commit (or
/// an atomic file write). Each arrow is a type only the stage before it can
/// make, so there is one road from a request to the store.
/// Cancelling the task at any stage changes nothing and leaves no temporaries.
public struct Pipeline: Sendable {
    public var environment: BadgeEnvironment
    public var limits: ImageLimits

    public init(environment: BadgeEnvironment, limits: ImageLimits = .default) {
        self.environment = environment
        self.limits = limits
    }

    /// What the user decides at commit time rather than the backend.
    public struct Commitment: Sendable {
        /// The day to begin; nil means now.
        public var date: Date?
        public var timeZone: TimeZone
        public init(date: Date? = nil, timeZone: TimeZone) {
            self.date = date
            self.timeZone = timeZone
        }
    }

    /// Renders with `backend` (or, when it is unavailable or fails, with each of
    /// `fallbacks` in turn) and writes the badge to `destination`.
    public func run(
        _ request: BadgeRequest, backend: BackendInstance, fallbacks: [BackendInstance] = [],
        commitment: Commitment, to destination: BadgeDestination, extra: [String: String] = [:]
    ) async throws -> PipelineOutcome {
        let started = ContinuousClock.now
        if case let .store(store) = destination { store.sweepIfIdle() }
        let badge = try await render(request, backend: backend, fallbacks: fallbacks, commitment: commitment, extra: extra)
        await TestHold.at("before-commit", environment)
        try Task.checkCancellation()
        return try await deliver(badge, to: destination, started: started)
    }

    /// The vector road: `request` drawn by `backend` as SVG (a
    /// ``VectorGenerator``), stamped with the metadata its PNG would carry (a
    /// new id, the commitment's day), checked (`SVGCheck`), and written to
    /// `destination`, a file or standard output: the store holds PNGs. A
    /// backend that makes rasters only is refused before it runs, and so no
    /// fallback is tried (it might make a raster).
    public func runVector(
        _ request: BadgeRequest, backend: BackendInstance, commitment: Commitment, to destination: BadgeDestination,
        extra: [String: String] = [:]
    ) async throws -> PipelineOutcome {
        let started = ContinuousClock.now
        if case .store = destination {
            throw BadgeError(.usage, "the store holds PNG badges; an SVG is written to a file", hint: "give --output FILE.svg")
        }
        let (svg, metadata) = try await renderVector(request, backend: backend, commitment: commitment, extra: extra)
        let url: URL
        switch destination {
        case .store: preconditionFailure("refused above")
        case let .file(target):
            try await BlockingExecutor.runToCompletion { try OutputWriter().write(svg, to: .path(target), what: "the badge") }
            url = target
        case .standardOutput:
            try await BlockingExecutor.runToCompletion { try OutputWriter().write(svg, to: .standardOutput, what: "the badge") }
            url = URL(fileURLWithPath: "/dev/stdout")
        }
        environment.logger.info("badge written", metadata: ["path": "\(url.path)", "id": "\(metadata.id)", "format": "svg"])
        return PipelineOutcome(url: url, metadata: metadata, byteCount: svg.count, duration: ContinuousClock.now - started)
    }

    /// `runVector`'s stages but the last: the SVG, stamped and checked, and
    /// its metadata (badges by URL send it).
    public func renderVector(
        _ request: BadgeRequest, backend: BackendInstance, commitment: Commitment, extra: [String: String] = [:]
    ) async throws -> (svg: Data, metadata: BadgeMetadata) {
        guard let generator = backend.generator as? any VectorGenerator else {
            throw BadgeError(.unsupportedFormat, "the \(backend.type) backend \"\(backend.name)\" makes PNG images only; it cannot make an SVG",
                             backend: backend.name, hint: "write a .png, or use the procedural backend for an SVG")
        }
        try backend.checkSource(of: request)
        let request = Self.matched(request, to: backend)
        try await preflight(request, backend: backend)
        let image: VectorImage
        do {
            image = try await generator.generateVector(request)
        } catch {
            throw BadgeError.wrap(error, backend: backend.name, message: "the backend failed")
        }
        try Task.checkCancellation()
        let now = environment.now()
        var metadata = BadgeMetadata(
            commitmentDate: commitment.date ?? now, timeZone: commitment.timeZone.identifier, createdAt: now, prompt: request.prompt,
            backend: backend.name, backendType: backend.type, style: request.style, size: request.size, seed: image.seed,
            model: image.model, extra: image.extra.merging(extra) { _, ours in ours })
        if environment.sourceDate != nil { metadata.id = try metadata.contentID(of: image.document([])) }
        let svg = image.document(metadata.textEntries)
        try SVGCheck.verify(svg, backend: backend.name)
        return (svg, metadata)
    }

    /// Commits (or writes) a badge `render` made earlier, a candidate picked
    /// from several: it passes the intake again, and is stamped with a new id
    /// and the commitment's day (committing is the promise) and checked again.
    public func commit(
        _ badge: CheckedBadge, commitment: Commitment, to destination: BadgeDestination
    ) async throws -> PipelineOutcome {
        try await commit(admit(badge.png, madeWith: badge.metadata), commitment: commitment, to: destination)
    }

    /// Commits (or writes) an image the intake admitted from a badge made
    /// earlier (a batch's output read back, `admit(_:madeWith:)`), by the road
    /// `run` takes: a new id and the commitment's day stamped in, the PNG
    /// check, and the store's atomic commit.
    package func commit(
        _ image: AdmittedImage, commitment: Commitment, to destination: BadgeDestination
    ) async throws -> PipelineOutcome {
        let started = ContinuousClock.now
        if case let .store(store) = destination { store.sweepIfIdle() }
        var metadata = image.metadata
        let now = environment.now()
        metadata.id = BadgeMetadata.newID()
        metadata.commitmentDate = commitment.date ?? now
        metadata.timeZone = commitment.timeZone.identifier
        metadata.createdAt = now
        if environment.sourceDate != nil { metadata.id = try metadata.contentID(of: image.png) }
        let badge = try await BlockingExecutor.run { [metadata] in try CheckedBadge(stamping: metadata, into: image) }
        return try await deliver(badge, to: destination, started: started)
    }

    /// The last stage of every road: a checked badge becomes the current
    /// badge, or the file `destination` names.
    private func deliver(
        _ badge: CheckedBadge, to destination: BadgeDestination, started: ContinuousClock.Instant
    ) async throws -> PipelineOutcome {
        let png = badge.png, metadata = badge.metadata
        let url: URL
        switch destination {
        case let .store(store):
            // Cancelled before it starts, nothing is committed; once it has started, it
            // runs to its end and what it did is reported, whatever came meanwhile.
            try Task.checkCancellation()
            let stored = try await BlockingExecutor.runToCompletion { try store.commit(badge) }
            if !stored.tightened.isEmpty { environment.logger.warning("\(BadgeStore.tightenedMessage(stored.tightened))") }
            await TestHold.at("after-commit", environment)
            url = stored.url
        case let .file(target):
            try Task.checkCancellation()
            try await BlockingExecutor.runToCompletion { try OutputWriter().write(png, to: .path(target), what: "the badge") }
            url = target
        case .standardOutput:
            try Task.checkCancellation()
            try await BlockingExecutor.runToCompletion { try OutputWriter().write(png, to: .standardOutput, what: "the badge") }
            url = URL(fileURLWithPath: "/dev/stdout")
        }
        environment.logger.info("badge written", metadata: ["path": "\(url.path)", "id": "\(metadata.id)"])
        return PipelineOutcome(url: url, metadata: metadata, byteCount: png.count, duration: ContinuousClock.now - started)
    }

    /// Runs the backend, the intake, the stamp and the PNG check; returns the
    /// checked badge (a batch writes it to a file) without committing it.
    /// A backend that is unavailable or fails hands over to the next fallback;
    /// the metadata then records which backend failed and why.
    /// `extra` is added to the metadata (`badge:x-<key>`), e.g. a batch's request hash.
    public func render(
        _ request: BadgeRequest, backend: BackendInstance, fallbacks: [BackendInstance] = [], commitment: Commitment,
        extra: [String: String] = [:]
    ) async throws -> CheckedBadge {
        try backend.checkSource(of: request)
        return try await render(request, chain: [backend] + fallbacks, failures: [], commitment: commitment, extra: extra)
    }

    /// Several takes on one request from one call to a ``MultiImageGenerator``
    /// (a model's `n`): `requests` differ in their seeds alone, the call is made
    /// with the first, and image `i` becomes `requests[i]`'s badge, through the
    /// intake and the stamp as `render` takes each. Returns one result per
    /// request, in order: a missing or refused image fails its request only. A
    /// call that fails as a whole hands every request to the fallbacks, one by
    /// one, or fails them all with its error. Throws for cancellation and usage
    /// errors, which no other request would escape.
    package func renderTogether(
        _ requests: [BadgeRequest], backend: BackendInstance, fallbacks: [BackendInstance] = [], commitment: Commitment,
        extra: [String: String] = [:]
    ) async throws -> [Result<CheckedBadge, BadgeError>] {
        let requests = requests.map { Self.matched($0, to: backend) }
        guard let first = requests.first else { return [] }
        try backend.checkSource(of: first)
        guard requests.count > 1, let generator = backend.generator as? any MultiImageGenerator,
              requests.count <= generator.imagesPerCall(for: first)
        else {
            var results: [Result<CheckedBadge, BadgeError>] = []
            for request in requests { results.append(try await Self.result { try await render(request, backend: backend, fallbacks: fallbacks, commitment: commitment, extra: extra) }) }
            return results
        }
        let images: [GeneratedImage]
        let workspace: Workspace
        let started = ContinuousClock.now
        do {
            try await preflight(first, backend: backend)
            workspace = try Self.makeWorkspace()
            do {
                images = try await generator.generate(first, count: requests.count, in: workspace)
            } catch {
                Self.removeWorkspace(workspace)
                throw BadgeError.wrap(error, backend: backend.name, message: "the backend failed")
            }
        } catch let error as BadgeError where !fallbacks.isEmpty && error.code != .cancelled && error.code != .usage {
            environment.logger.warning("backend failed; using its fallback", metadata: [
                "backend": "\(backend.name)", "fallback": "\(fallbacks[0].name)", "error": "\(error.message)",
            ])
            var results: [Result<CheckedBadge, BadgeError>] = []
            for request in requests {
                results.append(try await Self.result {
                    try await render(request, chain: fallbacks, failures: ["\(backend.name): \(error.message)"], commitment: commitment, extra: extra)
                })
            }
            return results
        }
        defer { Self.removeWorkspace(workspace) }
        try Task.checkCancellation()
        var results: [Result<CheckedBadge, BadgeError>] = []
        for (index, request) in requests.enumerated() {
            guard index < images.count else {
                results.append(.failure(BadgeError(
                    .generationFailed, "the backend made \(images.count) of the \(requests.count) images asked for; this one is missing",
                    backend: backend.name, hint: "the server may have refused some of them; try again, or lower imagesPerRequest")))
                continue
            }
            results.append(try await Self.result {
                let admitted = try await admit(
                    images[index], for: request, backend: backend, commitment: commitment, workspace: workspace,
                    elapsed: ContinuousClock.now - started)
                return try await stamped(admitted, failures: [], extra: extra)
            })
        }
        return results
    }

    /// The outcome of `work` as a result, except for cancellation and usage
    /// errors, which end every request alike and are thrown.
    private static func result(
        _ work: () async throws -> CheckedBadge
    ) async throws -> Result<CheckedBadge, BadgeError> {
        do {
            return .success(try await work())
        } catch {
            let failure = BadgeError.wrap(error, message: "the backend failed")
            if failure.code == .cancelled || failure.code == .usage || Task.isCancelled { throw failure }
            return .failure(failure)
        }
    }

    /// `render` along `chain`, the backend and then its fallbacks; `failures`
    /// are the backends that failed before it, as the metadata records them.
    private func render(
        _ request: BadgeRequest, chain: [BackendInstance], failures: [String], commitment: Commitment, extra: [String: String]
    ) async throws -> CheckedBadge {
        var failures = failures
        for (index, candidate) in chain.enumerated() {
            do {
                let admitted = try await renderUnstamped(request, backend: candidate, commitment: commitment)
                return try await stamped(admitted, failures: failures, extra: extra)
            } catch let error as BadgeError where index + 1 < chain.count && error.code != .cancelled && error.code != .usage {
                environment.logger.warning("backend failed; using its fallback", metadata: [
                    "backend": "\(candidate.name)", "fallback": "\(chain[index + 1].name)", "error": "\(error.message)",
                ])
                failures.append("\(candidate.name): \(error.message)")
            }
        }
        throw BadgeError(.generationFailed, "no backend was tried")
    }

    /// The admitted image's metadata, with the backends that failed before
    /// it and `extra`, stamped into it, and the stamped PNG checked.
    private func stamped(_ image: AdmittedImage, failures: [String], extra: [String: String]) async throws -> CheckedBadge {
        var metadata = image.metadata
        if !failures.isEmpty { metadata.extra["fallback-from"] = failures.joined(separator: "; ") }
        metadata.extra.merge(extra) { _, ours in ours }
        if environment.sourceDate != nil { metadata.id = try metadata.contentID(of: image.png) }
        return try await BlockingExecutor.run { [metadata] in try CheckedBadge(stamping: metadata, into: image) }
    }

    /// `request` with its style spelt as `backend` spells it, when they differ
    /// only in case ("Tile" is the procedural backend's "tile"): styles are
    /// matched the way people type them, and recorded as the backend names them.
    private static func matched(_ request: BadgeRequest, to backend: BackendInstance) -> BadgeRequest {
        var request = request
        request.style = request.style.map { backend.spelling(ofStyle: $0) }
        return request
    }

    /// What every call to a backend checks first: the request, its options and
    /// style (`BackendInstance.check`), and that the backend is available.
    private func preflight(_ request: BadgeRequest, backend: BackendInstance) async throws {
        try backend.check(request)
        let availability = await backend.generator.availability()
        // A check that takes a while (an exec plugin asked over a pipe) may be where Ctrl-C lands:
        // that is a cancellation, not an unavailable backend.
        try Task.checkCancellation()
        if case let .unavailable(reason, hint) = availability {
            throw BadgeError(.backendUnavailable, reason, backend: backend.name, hint: hint)
        }
    }

    private func renderUnstamped(
        _ request: BadgeRequest, backend: BackendInstance, commitment: Commitment
    ) async throws -> AdmittedImage {
        let request = Self.matched(request, to: backend)
        try await preflight(request, backend: backend)
        let workspace = try Self.makeWorkspace()
        defer { Self.removeWorkspace(workspace) }
        environment.logger.debug("workspace ready", metadata: ["path": "\(workspace.directory.path)"])

        let clock = ContinuousClock()
        let started = clock.now
        let image: GeneratedImage
        do {
            image = try await backend.generator.generate(request, in: workspace)
        } catch {
            throw BadgeError.wrap(error, backend: backend.name, message: "the backend failed")
        }
        return try await admit(image, for: request, backend: backend, commitment: commitment, workspace: workspace,
                               elapsed: clock.now - started)
    }

    // MARK: - Workspaces

    static let workspacePrefix = "badge-work-"

    /// A fresh private directory named after our pid, so a later run can tell
    /// a dead run's leftovers from a live one's, in this user's own
    /// directory under $TMPDIR (`workspaceRoot`). The first one a process
    /// makes starts the sweep of those leftovers on a thread of its own,
    /// beside the backend; removing a workspace waits for it, so every run
    /// that ends has swept.
    static func makeWorkspace() throws -> Workspace {
        let root = workspaceRoot
        _ = staleWorkspaceSweep
        var template = Array("\(root)/\(workspacePrefix)\(getpid())-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            throw BadgeError(.io, "cannot create a temporary workspace", path: root, cause: BadgeError.errnoDescription(errno),
                             hint: "check that $TMPDIR exists and is writable")
        }
        let path = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
        return Workspace(directory: URL(fileURLWithPath: path, isDirectory: true))
    }

    static func removeWorkspace(_ workspace: Workspace) {
        try? FileManager.default.removeItem(at: workspace.directory)
        _ = try? staleWorkspaceSweep.value
    }

    /// Where workspaces are made: `badge-<uid>` under $TMPDIR, a directory
    /// only this user can enter, so the sweep lists badge's own few entries
    /// rather than all of $TMPDIR (docs/PERFORMANCE.md has what that costs).
    /// Made with mode 0700 when missing, and used only when
    /// it is a real directory (not a symbolic link) that this user owns and
    /// no one else may enter; otherwise workspaces go straight into $TMPDIR,
    /// where `mkdtemp` keeps each private all the same.
    static let workspaceRoot: String = privateDirectory(in: NSTemporaryDirectory(), named: "badge-\(geteuid())") ?? NSTemporaryDirectory()

    /// `base/name` when it is, or can be made, a directory of this user's
    /// that no one else may enter (see `workspaceRoot`).
    package static func privateDirectory(in base: String, named name: String) -> String? {
        let path = (base.hasSuffix("/") ? base : base + "/") + name
        if mkdir(path, 0o700) != 0 && errno != EEXIST { return nil }
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            return nil
        }
        return path
    }

    /// Once per process: a batch makes hundreds of workspaces.
    private static let staleWorkspaceSweep = BackgroundValue { sweepStaleWorkspaces(in: workspaceRoot) }

    /// Removes the workspaces in `base` whose process is gone (killed with
    /// SIGKILL, say): directories named `badge-work-<pid>-...` that this user
    /// owns. Anything else there, another user's directory or a symbolic
    /// link of that name included, is left alone.
    package static func sweepStaleWorkspaces(in base: String) {
        guard let directory = opendir(base) else { return }
        defer { closedir(directory) }
        let prefix = Array(workspacePrefix.utf8), me = getpid(), owner = geteuid()
        while let entry = readdir(directory) {
            // Only a name with the prefix becomes a String: $TMPDIR may hold thousands.
            let name: String? = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                let length = raw.firstIndex(of: 0) ?? raw.count
                guard length > prefix.count, raw.prefix(prefix.count).elementsEqual(prefix) else { return nil }
                return String(decoding: raw.prefix(length), as: UTF8.self)
            }
            guard let name else { continue }
            let rest = name.dropFirst(workspacePrefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash]), pid > 0, pid != me else { continue }
            var info = stat()
            guard fstatat(dirfd(directory), name, &info, AT_SYMLINK_NOFOLLOW) == 0,
                  info.st_mode & S_IFMT == S_IFDIR, info.st_uid == owner else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: base + "/" + name)
            }
        }
    }
}
