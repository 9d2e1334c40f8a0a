import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Testing
@testable import ProceduralBackend

/// The caption says the promise: tesseract reads each badge's caption back,
/// and what it reads is compared with the promise itself, never with what the
/// drawing reports it drew. It must be the promise's words from the first,
/// all of them or at least three (a tail may be dropped at a phrase boundary,
/// and the badge then says how many words it kept): one word of a five-word
/// promise fails. Every style, two seeds and two sizes, two badges at a time.
@Suite(.threadsOfTheirOwn, .serialized) struct CaptionOCRTests {
    /// Each promise, and the words of it that are the promise (`nil`: all of
    /// them): a clause that describes the picture is not.
    static let promises: [(prompt: String, says: String?)] = wholePromises.map { (prompt: $0, says: nil) } + [
        // With words about the picture, which are never caption.
        (prompt: "Cycle to work, teal and coral palette", says: "Cycle to work"),
        (prompt: "Eat more vegetables, pastel colours", says: "Eat more vegetables"),
        (prompt: "A minimalist sunrise run, edge-to-edge, no borders", says: "sunrise run"),
    ]

    static let wholePromises = [
        "Cycle to work", "Go to bed before midnight", "Learn to play the guitar", "Drink two litres of water a day",
        "Call grandmother every Sunday", "Save money for a trip around the world", "Write a page of my novel every day",
        "Meditate ten minutes each morning", "Run 5k without stopping", "Read 20 books this year", "Eat more vegetables",
        "Walk the dog after dinner", "Floss every night", "Quit smoking", "Learn Spanish", "Stretch for ten minutes after waking up",
        "Cook dinner at home five nights a week", "Spend less time on my phone", "Volunteer at the animal shelter once a month",
        "Practise the piano for half an hour every evening", "Take the stairs instead of the lift",
        "Plant a vegetable garden this spring", "Swim forty lengths every Saturday", "Keep a gratitude journal",
        "Visit my parents more often", "Climb a mountain with my brother", "Bake bread on Sundays",
        "Go for a walk in the park during lunch", "Finish the marathon in under four hours", "Sleep eight hours a night",
        "Read to my children before bedtime", "Stop buying coffee on the way to work", "Learn to code in Python",
        "Hike the coast path with friends next summer", "Do yoga three times a week", "Write a letter to an old friend",
        "Tidy the house every Saturday morning", "Drink less sugar", "Take a photo every day for a year",
        "Paint the garden fence", "Be kind", "Get up at six and go running before breakfast", "Phone a friend every week",
        "Repair my bike", "Listen to a podcast in French on the train",
    ]

    /// The seeds and sizes each style is drawn at: every promise once in each style,
    /// taking the four in turn, so each style meets every one of them 11 or 12 times.
    static let variants: [(seed: UInt64, size: Int)] = [(1, 512), (2, 256), (2, 512), (1, 256)]

    /// Why `read` (what tesseract read) is not the promise `says`, or nil when it is.
    static func misreading(_ read: String, of says: String, notes: [String: String]) -> String? {
        let promise = OCR.latinWords(says), words = OCR.latinWords(read)
        guard !words.isEmpty else { return "no caption read" }
        guard Array(promise.prefix(words.count)) == words else { return "not the promise's words from the first" }
        guard words.count >= min(Caption.fewestWords, promise.count) else {
            return "\(words.count) of the promise's \(promise.count) words; a caption keeps at least \(min(Caption.fewestWords, promise.count))"
        }
        if words.count < promise.count {
            let note = notes["caption-shortened"] ?? ""
            guard note.hasPrefix("\(words.count) of \(promise.count) words") else {
                return "\(words.count) of \(promise.count) words, and the badge does not say so (\(note))"
            }
        }
        return nil
    }

    @Test func theCheckRefusesAShortenedOrWrongCaption() {
        let shortened = ["caption-shortened": "3 of 5 words: the whole promise does not fit"]
        #expect(Self.misreading("CYCLE", of: "Cycle to work every day", notes: shortened) != nil, "one word of five")
        #expect(Self.misreading("TO WORK EVERY", of: "Cycle to work every day", notes: shortened) != nil, "not from the first word")
        #expect(Self.misreading("CYCLE TO WORK", of: "Cycle to work every day", notes: [:]) != nil, "shortened without saying so")
        #expect(Self.misreading("CYCLE TO WALK", of: "Cycle to work", notes: [:]) != nil, "a word misread")
        #expect(Self.misreading("", of: "Be kind", notes: [:]) != nil, "nothing read")
        #expect(Self.misreading("CYCLE TO WORK", of: "Cycle to work every day", notes: shortened) == nil)
        #expect(Self.misreading("BE KIND", of: "Be kind", notes: [:]) == nil)
    }

    @Test func everyStyleReadsAsThePromise() async throws {
        try OCR.requireTesseract(languages: ["eng"])
        let jobs = BadgeArt.Style.allCases.enumerated().flatMap { s, style in
            Self.promises.enumerated().map { p, promise in
                let variant = Self.variants[(p + s) % Self.variants.count]
                return OCR.Job(prompt: promise.prompt, style: style.rawValue, language: "eng", size: variant.size, seed: variant.seed)
            }
        }
        let results = try await OCR.readAll(jobs)
        let says = Dictionary(Self.promises.map { ($0.prompt, $0.says ?? $0.prompt) }, uniquingKeysWith: { a, _ in a })
        var failures: [String] = []
        var readByStyle: [String: Int] = [:], shortened = 0
        for result in results {
            let promise = try #require(says[result.job.prompt])
            if let why = Self.misreading(result.read, of: promise, notes: result.notes) {
                failures.append("\(result.job.style) \(result.job.size) px seed \(result.job.seed) \"\(result.job.prompt)\": OCR read \"\(result.read)\" (\(why); the badge says it drew \"\(result.drawn)\")")
            } else {
                readByStyle[result.job.style, default: 0] += 1
                if OCR.latinWords(result.read).count < OCR.latinWords(promise).count { shortened += 1 }
            }
        }
        print("caption OCR (eng): " + BadgeArt.Style.allCases.map { "\($0.rawValue) \(readByStyle[$0.rawValue] ?? 0)/\(Self.promises.count)" }.joined(separator: ", ")
            + "; \(shortened) read as the start of a longer promise")
        #expect(failures.isEmpty, "\(failures.count) captions did not read as the promise:\n\(failures.joined(separator: "\n"))")
        // Both seeds and both sizes were drawn in every style.
        for style in BadgeArt.Style.allCases.map(\.rawValue) {
            let drawn = Set(results.filter { $0.job.style == style }.map { "\($0.job.seed)/\($0.job.size)" })
            #expect(drawn == Set(Self.variants.map { "\($0.seed)/\($0.size)" }), "\(style): \(drawn)")
        }
    }

    /// Captions in other scripts are drawn with fonts fontconfig finds, shaped
    /// (Arabic and Hebrew right to left), and read back in their language.
    static let scripts: [(prompt: String, language: String)] = [
        ("学习中文", "chi_sim"), ("每天跑步", "chi_sim"), ("毎日運動する", "jpn"), ("매일 운동하기", "kor"),
        ("Бегать каждое утро", "rus"), ("Διαβάζω κάθε μέρα", "ell"), ("اقرأ كل يوم", "ara"), ("לקרוא ספר כל חודש", "heb"),
        ("हर दिन योग करो", "hin"),
    ]

    @Test func everyScriptIsDrawnAndReadBack() async throws {
        try OCR.requireTesseract(languages: Set(Self.scripts.map(\.language)).sorted())
        let jobs = BadgeArt.Style.allCases.map(\.rawValue).flatMap { style in
            Self.scripts.map { OCR.Job(prompt: $0.prompt, style: style, language: $0.language) }
        }
        let results = try await OCR.readAll(jobs)
        var failures: [String] = []
        for result in results {
            // The whole promise is read back, in capitals where its script has them.
            if OCR.letters(result.read) != OCR.letters(Caption.capitals(result.job.prompt)) {
                failures.append("\(result.job.style) \(result.job.language) \"\(result.job.prompt)\": drew \"\(result.drawn)\", OCR read \"\(result.read)\"")
            }
        }
        print("caption OCR (scripts): \(results.count - failures.count)/\(results.count) read back")
        #expect(failures.isEmpty, "\(failures.count) captions did not read back:\n\(failures.joined(separator: "\n"))")
    }
}

/// Long promises keep their words: the caption is the start of the promise,
/// at least three words, cut at a phrase boundary, and the badge says it was
/// shortened and why. In English, Spanish, French, German, Italian,
/// Portuguese, Dutch, Russian and Greek, at 512 and 1024 px.
@Suite(.threadsOfTheirOwn, .serialized) struct LongPromiseOCRTests {
    static let promises: [(prompt: String, language: String)] = [
        ("Finish writing the fantasy novel I have been planning since university", "eng"),
        ("Run a half marathon in under two hours before my fortieth birthday next spring", "eng"),
        ("Learn to cook one new vegetarian recipe from a different country every single week", "eng"),
        ("Spend an hour every evening reading with my daughter instead of scrolling on my phone", "eng"),
        ("Читать по одной книге в месяц и обсуждать её с друзьями в книжном клубе", "rus"),
        ("Выучить испанский язык до следующего лета, чтобы свободно говорить с семьёй жены", "rus"),
        ("Διαβάζω ένα βιβλίο κάθε μήνα και γράφω λίγες σκέψεις για το καθένα στο ημερολόγιό μου", "ell"),
        ("Περπατάω δέκα χιλιάδες βήματα κάθε μέρα στην παραλία με τον σκύλο μου", "ell"),
        ("Terminar de escribir la novela de fantasía que planeo desde la universidad", "spa"),
        ("Apprendre à jouer du piano assez bien pour accompagner ma fille", "fra"),
        ("Ich lerne jeden Abend Spanisch mit einer App, um im Sommer mit meinen Kollegen zu sprechen", "deu"),
        ("Imparare a suonare la chitarra abbastanza bene per suonare con gli amici", "ita"),
        ("Correr uma meia maratona em menos de duas horas antes do meu aniversário", "por"),
        ("Ik ga elke avond een uur lezen in plaats van op mijn telefoon te scrollen", "nld"),
    ]

    @Test func aLongPromiseKeepsItsStartAndSaysWhy() async throws {
        #expect(Self.promises.allSatisfy { (60...120).contains($0.prompt.count) })
        try OCR.requireTesseract(languages: Set(Self.promises.map(\.language)).sorted())
        let jobs = [512, 1024].flatMap { size in
            Self.promises.map { OCR.Job(prompt: $0.prompt, style: "medal", language: $0.language, size: size) }
        }
        let results = try await OCR.readAll(jobs)
        var failures: [String] = []
        for result in results {
            let whole = PromptReading(result.job.prompt).caption
            let wholeWords = whole.split(separator: " ").map(String.init)
            let drawnWords = result.drawn.split(separator: " ").map(String.init)
            let label = "\(result.job.size) px \"\(result.job.prompt)\": drew \"\(result.drawn)\", OCR read \"\(result.read)\""
            // The start of the promise, at least three words, ending at a phrase boundary.
            guard drawnWords.count >= Caption.fewestWords, drawnWords.count < wholeWords.count,
                  Array(wholeWords.prefix(drawnWords.count)) == drawnWords, Caption.forms(whole).contains(result.drawn)
            else {
                failures.append("not a start of at least 3 words ending at a phrase boundary: \(label)")
                continue
            }
            // Said: how many words, and why.
            let note = result.notes["caption-shortened"] ?? ""
            if !note.hasPrefix("\(drawnWords.count) of \(wholeWords.count) words: the whole promise does not fit") {
                failures.append("no caption-shortened note (\(note)): \(label)")
            }
            // Compared without diacritics: tesseract's rus model reads the drawn Й as И at 1024 px.
            func bare(_ text: String) -> String { OCR.letters(text.folding(options: .diacriticInsensitive, locale: nil)) }
            if bare(result.read) != bare(result.drawn) { failures.append("read otherwise: \(label)") }
        }
        print("long promises: \(results.count - failures.count)/\(results.count) captions read back as the start of the promise")
        #expect(failures.isEmpty, "\(failures.count):\n\(failures.joined(separator: "\n"))")
    }
}

/// Drawing badges and reading their captions with tesseract.
enum OCR {
    struct Job: Sendable {
        var prompt: String
        var style: String
        var language: String
        var size = 512
        var seed: UInt64 = 1
    }

    struct Drawn: Sendable {
        var caption: String
        var notes: [String: String]
    }

    struct Result: Sendable {
        var job: Job
        /// The caption the badge records as drawn.
        var drawn: String
        /// What tesseract read.
        var read: String
        /// What the badge records about its caption ("caption-shortened").
        var notes: [String: String] = [:]
    }

    static func tesseract() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/tesseract" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Fails, saying what to install, when tesseract or a language is missing.
    static func requireTesseract(languages: [String]) throws {
        let packages = languages.map { "tesseract-ocr-" + $0.replacingOccurrences(of: "_", with: "-") }
        guard let tesseract = tesseract() else {
            throw OCRError("tesseract is not installed; install it: apt-get install tesseract-ocr \(packages.joined(separator: " ")) (or scripts/install-deps.sh --with-tests)")
        }
        let listed = try run(tesseract, ["--list-langs"])
        let installed = Set(listed.split(whereSeparator: \.isNewline).map(String.init))
        let missing = languages.filter { !installed.contains($0) }
        guard missing.isEmpty else {
            throw OCRError("tesseract has no \(missing.joined(separator: ", ")); install: apt-get install \(missing.map { "tesseract-ocr-" + $0.replacingOccurrences(of: "_", with: "-") }.joined(separator: " ")) (or scripts/install-deps.sh --with-tests)")
        }
    }

    /// Draws every job, two at a time, off Swift's cooperative threads; then
    /// reads them with tesseract, two processes at a time, each given a list
    /// of images in one language (its model loads once, not once an image).
    static func readAll(_ jobs: [Job]) async throws -> [Result] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("badge-ocr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = jobs.indices.map { directory.appendingPathComponent("\($0).pgm") }
        let drawn = Slots<Drawn>(count: jobs.count)
        // Lists of images in one language, each read by one tesseract.
        var lists: [[Int]] = []
        for language in Set(jobs.map(\.language)).sorted() {
            let indices = jobs.indices.filter { jobs[$0].language == language }
            let half = (indices.count + 1) / 2
            lists += [Array(indices.prefix(half)), Array(indices.dropFirst(half))].filter { !$0.isEmpty }
        }
        let read = Slots<[String]>(count: lists.count)
        let batches = lists
        // Two threads of this test's own, never Dispatch's global queues: on Linux, Swift's
        // tasks run on those queues' threads (one a core), and minutes of drawing and
        // waiting for tesseract there held up every async test running beside this one.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                let next = Counter()
                onTwoThreads {
                    while let k = next.take(below: jobs.count) {
                        drawn.set(k, Swift.Result { try draw(jobs[k], to: files[k]) })
                    }
                }
                let nextList = Counter()
                onTwoThreads {
                    while let k = nextList.take(below: batches.count) {
                        read.set(k, Swift.Result {
                            try recognise(batches[k].map { files[$0] }, language: jobs[batches[k][0]].language,
                                          list: directory.appendingPathComponent("list-\(k).txt"))
                        })
                    }
                }
                done.resume()
            }.start()
        }
        var texts = [String](repeating: "", count: jobs.count)
        for (k, list) in lists.enumerated() {
            for (i, text) in zip(list, try read.get(k)) { texts[i] = text }
        }
        return try jobs.indices.map {
            let made = try drawn.get($0)
            return Result(job: jobs[$0], drawn: made.caption, read: texts[$0], notes: made.notes)
        }
    }

    /// Runs `work` on this thread and on one more, and returns when both are done.
    static func onTwoThreads(_ work: @escaping @Sendable () -> Void) {
        let other = DispatchSemaphore(value: 0)
        Thread {
            work()
            other.signal()
        }.start()
        work()
        other.wait()
    }

    /// Draws the badge and writes its caption's area; returns the caption drawn.
    static func draw(_ job: Job, to file: URL) throws -> Drawn {
        let request = BadgeRequest(prompt: job.prompt, style: job.style, size: job.size, seed: job.seed)
        let drawing = try ImageThreads.$limit.withValue(1) { try BadgeArt(request: request, caption: true, compression: 0).draw() }
        // Letters of 20 px and more read best: smaller badges are read at two or four times their size.
        try writeCaptionArea(drawing.canvas, area: drawing.captionArea, round: job.style != "tile", scale: max(1, 1024 / max(job.size, 256)),
                             darkOnLight: drawing.ink.luminance > 0.5, to: file)
        return Drawn(caption: drawing.notes["caption-drawn"] ?? "", notes: drawing.notes)
    }

    /// What tesseract reads in each of `files`, in order: it ends every page but the last with a form feed.
    static func recognise(_ files: [URL], language: String, list: URL) throws -> [String] {
        try Data((files.map(\.path).joined(separator: "\n") + "\n").utf8).write(to: list)
        guard let tesseract = tesseract() else { throw OCRError("tesseract vanished") }
        var pages = try run(tesseract, [list.path, "stdout", "-l", language, "--psm", "6"], trimming: false)
            .split(separator: "\u{0C}", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        if pages.count == files.count + 1 && pages.last == "" { pages.removeLast() }
        guard pages.count == files.count else {
            throw OCRError("tesseract read \(pages.count) pages of \(files.count)")
        }
        return pages
    }

    /// The caption's ink box with a margin, grey, `scale` times the size (tesseract
    /// reads letters of 20 px and more best), light ink inverted to dark on light
    /// (which tesseract reads better: it read a clear white "HIKE THE" as "4 ="); a
    /// blank image when there is no caption.
    /// On a round badge, what lies beyond the face (the rim) is read from the face's edge instead.
    static func writeCaptionArea(
        _ canvas: Canvas, area: (x: Int, y: Int, width: Int, height: Int)?, round: Bool, scale: Int = 2, darkOnLight: Bool = false,
        to file: URL
    ) throws {
        // Inside the accent ring within the rim (from 0.365 of the side).
        let center = Double(canvas.width) / 2, face = Double(canvas.width) * 0.36
        let margin = 10
        let box = area ?? (0, 0, 1, 1)
        let rows = max(0, box.y - margin)..<min(canvas.height, box.y + box.height + margin)
        let columns = max(0, box.x - margin)..<min(canvas.width, box.x + box.width + margin)
        var grey: [Double] = []
        grey.reserveCapacity(rows.count * columns.count)
        for y in rows {
            for x in columns {
                var (sx, sy) = (x, y)
                let dx = Double(x) + 0.5 - center, dy = Double(y) + 0.5 - center, r = (dx * dx + dy * dy).squareRoot()
                if round && r > face {
                    (sx, sy) = (Int(center + dx * face / r), Int(center + dy * face / r))
                }
                let p = canvas.pixel(sx, sy)
                let a = Double(p.a) / 255
                let g = area == nil ? 255 : (0.299 * Double(p.r) + 0.587 * Double(p.g) + 0.114 * Double(p.b)) * a + 255 * (1 - a)
                grey.append(darkOnLight && area != nil ? 255 - g : g)
            }
        }
        // Enlarged smoothly (bilinear): blocks of repeated pixels read worse at four times.
        let (w, h) = (columns.count, rows.count)
        var pixels: [UInt8] = []
        pixels.reserveCapacity(w * h * scale * scale)
        for oy in 0..<(h * scale) {
            let fy = min(max((Double(oy) + 0.5) / Double(scale) - 0.5, 0), Double(h - 1))
            let y0 = Int(fy), y1 = min(y0 + 1, h - 1), ty = fy - Double(y0)
            for ox in 0..<(w * scale) {
                let fx = min(max((Double(ox) + 0.5) / Double(scale) - 0.5, 0), Double(w - 1))
                let x0 = Int(fx), x1 = min(x0 + 1, w - 1), tx = fx - Double(x0)
                let top = grey[y0 * w + x0] * (1 - tx) + grey[y0 * w + x1] * tx
                let bottom = grey[y1 * w + x0] * (1 - tx) + grey[y1 * w + x1] * tx
                pixels.append(UInt8((top * (1 - ty) + bottom * ty).rounded()))
            }
        }
        var data = Data("P5\n\(columns.count * scale) \(rows.count * scale)\n255\n".utf8)
        data.append(contentsOf: pixels)
        try data.write(to: file)
    }

    /// Runs a program to its end (at most 120 s), and returns what it wrote.
    static func run(_ program: String, _ arguments: [String], trimming: Bool = true) throws -> String {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["OMP_THREAD_LIMIT"] = "1"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // A bound on a hang: killed at 120 s, its output ends and the read with it.
        let timer = KillTimer(process, after: 120)
        let data = PipeReading.readAll(output.fileHandleForReading)
        process.waitUntilExit()
        timer.cancel()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw OCRError("\(program) \(arguments.joined(separator: " ")) failed (status \(process.terminationStatus))")
        }
        let text = String(decoding: data, as: UTF8.self)
        return trimming ? text.trimmingCharacters(in: .whitespacesAndNewlines) : text
    }

    /// Upper-case words of letters and digits.
    static func latinWords(_ text: String) -> [String] {
        text.uppercased().split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }

    /// The letters, marks and digits of `text`, without spaces or punctuation.
    static func letters(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter {
            $0.properties.isAlphabetic || $0.properties.numericType != nil || $0.properties.generalCategory == .nonspacingMark
                || $0.properties.generalCategory == .spacingMark
        }))
    }

    static func isContiguousRun(_ part: [String], of whole: [String]) -> Bool {
        guard part.count <= whole.count else { return false }
        return (0...(whole.count - part.count)).contains { Array(whole[$0..<($0 + part.count)]) == part }
    }

    private final class Counter: @unchecked Sendable {
        private var value = 0
        private let lock = NSLock()
        func take(below limit: Int) -> Int? {
            lock.lock()
            defer { lock.unlock() }
            guard value < limit else { return nil }
            value += 1
            return value - 1
        }
    }

    private final class Slots<Value>: @unchecked Sendable {
        private var slots: [Swift.Result<Value, Error>?]
        private let lock = NSLock()
        init(count: Int) { slots = Array(repeating: nil, count: count) }
        func set(_ k: Int, _ result: Swift.Result<Value, Error>) {
            lock.lock()
            slots[k] = result
            lock.unlock()
        }
        func get(_ k: Int) throws -> Value {
            lock.lock()
            defer { lock.unlock() }
            return try slots[k]!.get()
        }
    }
}

struct OCRError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
