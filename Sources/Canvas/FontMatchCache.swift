#if canImport(Glibc)
import Glibc
#endif
import BadgeKit
import Foundation

/// fontconfig's answer for a pattern, kept between runs with what it was
/// worked out from. fontconfig parses its whole configuration (~35 XML files)
/// before its first match: ~12 ms of a core on every badge, half of it on the
/// critical path of a 2-core machine. The answer changes only when a file or
/// directory fontconfig read changes, so the cache records each one (config
/// files, their directories, font directories, the user's config paths that do
/// not exist yet) with its inode, size and modification time, and is believed
/// only when every one still stats the same and the environment fontconfig
/// reads is the same. Otherwise fontconfig is asked again and the cache is
/// rewritten. ~40 stats cost ~0.1 ms.
struct FontMatchCache {
    /// What fontconfig answered and what the answer depends on.
    struct Match {
        var file: String
        var watched: [String]
        /// The face within the file (a collection such as Noto Sans CJK holds several).
        var index = 0
    }

    /// nil: no cache; every lookup resolves.
    let directory: URL?

    /// In badge's cache directory (`BadgeConfig.cacheDirectory`).
    static var standard: FontMatchCache { FontMatchCache(directory: BadgeConfig.cacheDirectory()) }

    /// The file for `key` (the pattern and everything else the answer depends
    /// on), from the cache when it is still true, else from `resolve`, whose
    /// answer is then cached.
    func file(key: String, resolve: () -> Match?) -> String? {
        face(key: key, resolve: resolve)?.file
    }

    /// The file and the face within it for `key`, as `file(key:resolve:)` finds them.
    func face(key: String, resolve: () -> Match?) -> (file: String, index: Int)? {
        if let cached = cachedFace(key: key) { return cached }
        guard let match = resolve() else { return nil }
        store(match, key: key)
        return (match.file, match.index)
    }

    private static let header = "badge font-match 2"

    private func url(for key: String) -> URL? {
        // FNV-1a: a name per key, the same in every run.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        // "2": this format (with the face's index), so a badge of the earlier one beside it keeps its own.
        return directory?.appendingPathComponent("fontconfig2-" + hexDigits(hash, count: 16))
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    func cached(key: String) -> String? { cachedFace(key: key)?.file }

    func cachedFace(key: String) -> (file: String, index: Int)? {
        // badge's own file, read as any other: a regular file only (never a FIFO left in its place), and small.
        guard let url = url(for: key), let data = try? RegularFile.contents(of: url.path, limit: 256 << 10) else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 6, lines[0] == Self.header, lines[1] == "key\t" + JSONWriter.quote(key),
              lines[2].hasPrefix("font\t"), lines[3].hasPrefix("index\t"), let index = Int(lines[3].dropFirst(6)),
              (0..<65_536).contains(index), lines.last == "end" else { return nil }
        let file = String(lines[2].dropFirst(5))
        // The font itself is always the first thing checked.
        guard lines[4].hasSuffix("\t" + file) else { return nil }
        for line in lines[4..<(lines.count - 1)] {
            let fields = line.split(separator: "\t", maxSplits: 1).map(String.init)
            guard fields.count == 2, Self.fingerprint(of: fields[1]) == fields[0] else { return nil }
        }
        return (file, index)
    }

    private func store(_ match: Match, key: String) {
        guard let url = url(for: key), let directory else { return }
        let paths = [match.file] + match.watched
        // A path that cannot be written on one line is not cached (it is still used).
        guard !paths.contains(where: { $0.contains("\n") || $0.contains("\t") }) else { return }
        var lines = [Self.header, "key\t" + JSONWriter.quote(key), "font\t" + match.file, "index\t\(match.index)"]
        var seen = Set<String>()
        for path in paths where seen.insert(path).inserted {
            lines.append(Self.fingerprint(of: path) + "\t" + path)
        }
        lines.append("end")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? AtomicFileWriter().write(Data((lines.joined(separator: "\n")).utf8), to: url)
    }

    /// "inode:size:mtime-ns" of what `path` names (following links), or "missing".
    static func fingerprint(of path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "missing" }
        let nanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        return "\(info.st_ino):\(info.st_size):\(nanoseconds)"
    }
}
