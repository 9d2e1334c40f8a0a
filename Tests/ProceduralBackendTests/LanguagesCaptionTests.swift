import BadgeKit
import BadgeKitTesting
import BadgeTestSupport
import Canvas
import Foundation
import Testing
@testable import ProceduralBackend

/// Long promises in Spanish, French, German, Italian, Portuguese, Dutch and
/// English are shortened by their own small words; Chinese, Japanese and
/// Korean at the phrase ends ICU's line breaking knows; the motif comes from
/// the verb and its object, not an adverbial of time, place or duration; a
/// colour word in any of the seven languages colours the badge and leaves the
/// caption. (LongPromiseOCRTests reads the long captions back from the pixels.)
@Suite(.threadsOfTheirOwn)
struct LanguagesCaptionTests {
    /// Each promise and the shortened forms its caption may take: a start of
    /// at least three words, cut before a small word of its language, never
    /// ending on one.
    @Test(arguments: [
        ("Apprendre à jouer du piano assez bien pour accompagner ma fille", "APPRENDRE À JOUER DU PIANO"),
        ("Terminar de escribir la novela de fantasía que planeo desde la universidad", "TERMINAR DE ESCRIBIR LA NOVELA DE FANTASÍA"),
        ("Ich lerne jeden Abend Spanisch mit einer App, um im Sommer mit meinen Kollegen zu sprechen", "LERNE JEDEN ABEND SPANISCH"),
        ("Imparare a suonare la chitarra abbastanza bene per suonare con gli amici", "IMPARARE A SUONARE LA CHITARRA"),
        ("Correr uma meia maratona em menos de duas horas antes do meu aniversário", "CORRER UMA MEIA MARATONA"),
        ("Ik ga elke avond een uur lezen in plaats van op mijn telefoon te scrollen", "ELKE AVOND EEN UUR LEZEN"),
        ("Finish writing the fantasy novel I have been planning since university", "FINISH WRITING THE FANTASY NOVEL"),
    ])
    func aLongPromiseIsCutBeforeASmallWordOfItsLanguage(prompt: String, form: String) {
        let caption = PromptReading(prompt).caption
        let forms = Caption.forms(caption)
        #expect(forms.contains(form), "\(forms)")
        for shorter in forms.dropFirst() {
            #expect(caption.hasPrefix(shorter), "\(shorter) is not the start of \(caption)")
            let last = String(shorter.split(separator: " ").last ?? "")
            #expect(Caption.endsWell(last), "\(shorter) ends on a small word")
        }
    }

    /// "I will" in the languages that say it with a word of its own.
    @Test(arguments: [
        ("Voy a correr cada mañana", "CORRER CADA MAÑANA"), ("Je vais courir chaque matin", "COURIR CHAQUE MATIN"),
        ("Ich werde jeden Tag lesen", "JEDEN TAG LESEN"), ("Eu vou correr todos os dias", "CORRER TODOS OS DIAS"),
        ("Ik ga elke dag lezen", "ELKE DAG LEZEN"),
    ])
    func theFuturesIWillIsNotCaption(prompt: String, caption: String) {
        #expect(PromptReading(prompt).caption == caption)
    }

    /// Chinese, Japanese and Korean are cut where ICU's line breaking and its
    /// words agree: never inside a word, and in Japanese never before a
    /// particle or a verb's ending.
    @Test func chineseJapaneseAndKoreanAreCutAtPhraseEnds() throws {
        let chinese = "我要每天早上上班前跑步三十分钟然后吃一顿健康的早餐"
        let forms = Caption.forms(chinese)
        #expect(forms.first == chinese)
        #expect(forms.contains("我要每天早上上班前跑步三十分钟"), "\(forms)")
        // 早上, 跑步 and 分钟 are words: no form ends inside one.
        for broken in ["我要每天早", "我要每天早上上班前跑", "我要每天早上上班前跑步三十分"] { #expect(!forms.contains(broken), "\(broken)") }
        let japanese = "毎朝仕事の前に三十分走って健康的な朝ごはんを食べる"
        let cuts = Caption.forms(japanese).dropFirst()
        #expect(cuts.contains("毎朝仕事の前に"), "\(Array(cuts))")
        let characters = Array(japanese)
        for cut in cuts {
            let next = characters[cut.count]
            #expect(!next.unicodeScalars.allSatisfy { (0x3041...0x309F).contains($0.value) }, "\(cut) is cut before \(next)")
        }
        let korean = "매일 아침 출근하기 전에 삼십 분 동안 달리고 건강한 아침을 먹기"
        #expect(Caption.forms(korean).contains("매일 아침 출근하기 전에"))
        // Not on a particle nor a preposition: 健康的 is not a phrase's end.
        #expect(!forms.contains("我要每天早上上班前跑步三十分钟然后吃一顿健康的"))
        // Two lines of a shortened caption break at a phrase's end: 每天学习 / 中文, not 每天学 / 习中文.
        #expect(try #require(Caption.split("每天学习中文", round: true, phrases: true)) == ("每天学习", "中文"))
    }

    /// A long Chinese promise is drawn shortened, at a phrase end, and says so in characters.
    @Test func aLongChinesePromiseIsShortenedAndSaysSo() throws {
        let prompt = "我要每天早上上班前跑步三十分钟然后吃一顿健康的早餐再骑自行车去公司上班"
        let drawing = try BadgeArt(request: BadgeRequest(prompt: prompt, size: 512, seed: 1), caption: true, compression: 0).draw()
        let drawn = try #require(drawing.notes["caption-drawn"]).replacingOccurrences(of: " ", with: "")
        #expect(drawn.count < prompt.count && prompt.hasPrefix(drawn), "\(drawn)")
        #expect(Caption.forms(prompt).contains(drawn), "\(drawn) is not cut at a phrase end")
        #expect(drawing.notes["caption-shortened"]?.hasPrefix("\(drawn.count) of \(prompt.count) characters") == true,
                "\(drawing.notes["caption-shortened"] ?? "no note")")
    }

    /// The issue's examples and their kin: the verb and its object choose the
    /// motif, before adverbials of time, place and duration.
    @Test(arguments: [
        ("Apprendre le japonais avant mon voyage à Kyoto", Motif.language),
        ("Learn to play the cello", .music),
        ("-5 kg by summer", .dumbbells),
        ("Ich werde jeden Morgen vor der Arbeit dreißig Minuten laufen", .runner),
        ("Run thirty minutes every morning", .runner),
        ("Correr treinta minutos cada mañana antes del trabajo", .runner),
        ("Read a book before my trip to Kyoto", .book),
        ("Nadar en el mar cada verano", .swimmer),
        ("Perdre cinq kilos avant l'été", .dumbbells),
        ("Ik ga elke avond een uur lezen in plaats van op mijn telefoon te scrollen", .book),
    ])
    func theMotifComesFromWhatThePromiseIsAbout(prompt: String, motif: Motif) {
        #expect(PromptReading(prompt).scene.0 == motif, "\(PromptReading(prompt).motifs.map { "\($0.0) <- \($0.1)" })")
    }

    /// The adverbials found: a preposition of time or place and its noun
    /// phrase, a number and a unit of time, a word of frequency and its noun.
    @Test func adverbialsOfTimePlaceAndDuration() {
        func marked(_ text: String) -> [String] {
            let words = PromptReading.words(text)
            return PromptReading.adverbialWords(in: text).map { words[$0] }
        }
        #expect(marked("Apprendre le japonais avant mon voyage à Kyoto") == ["avant", "mon", "voyage", "à", "kyoto"])
        #expect(marked("Ich werde jeden Morgen vor der Arbeit dreißig Minuten laufen")
            == ["jeden", "morgen", "vor", "der", "arbeit", "dreißig", "minuten"])
        #expect(marked("Learn to play the cello").isEmpty)
    }

    /// A colour word in each language, with its modifiers and the preposition
    /// before it: the face is that colour and the caption has none of them.
    static let colours: [(prompt: String, caption: String, hex: String)] = [
        ("Aprender a nadar este verano, en azul marino", "APRENDER A NADAR ESTE VERANO", "#000080"),
        ("Méditer chaque matin en vert foncé", "MÉDITER CHAQUE MATIN", "#006400"),
        ("Jeden Abend lesen, in Rot", "JEDEN ABEND LESEN", "#FF0000"),
        ("Leggere un libro ogni settimana in blu", "LEGGERE UN LIBRO OGNI SETTIMANA", "#0000FF"),
        ("Correr todas as manhãs em verde", "CORRER TODAS AS MANHÃS", "#008000"),
        ("Elke dag wandelen in oranje", "ELKE DAG WANDELEN", "#FFA500"),
        ("Swim every week in navy blue", "SWIM EVERY WEEK", "#000080"),
    ]

    @Test func aColourWordInEachLanguageColoursTheBadgeAndLeavesTheCaption() async throws {
        let generator = ProceduralGenerator(caption: true)
        for (prompt, caption, hex) in Self.colours {
            #expect(PromptReading(prompt).caption == caption, "\(prompt)")
            let (_, data, _) = try await GeneratorConformance.generateOnce(generator, BadgeRequest(prompt: prompt, style: "medal", size: 256, seed: 1))
            let image = try GDImage.decodePNG(data)
            let c = Double(image.width) / 2, limit = Double(image.width) * 0.33
            let face = medianLab(image) { x, y in hypot(Double(x) + 0.5 - c, Double(y) + 0.5 - c) < limit }
            let d = deltaE2000(face, LabColour(hex: hex))
            #expect(d <= 12, "\(prompt): the face is ΔE2000 \(d) from \(hex)")
        }
        // "pastel lavender" and the "in" before it leave the caption; the face is a light lavender.
        #expect(PromptReading("Meditate daily in pastel lavender").caption == "MEDITATE DAILY")
        let look = PromptReading("Meditate daily in pastel lavender").look
        #expect(look.pastel && look.colours.map(\.words) == [["lavender"]])
        // A colour that is the object of a place phrase, or the promise's own, stays.
        #expect(PromptReading("Swim in the blue sea").caption == "SWIM IN THE BLUE SEA")
        #expect(PromptReading("Walk in the forest").caption == "WALK IN THE FOREST")
        #expect(PromptReading("Pintar la valla de rojo").caption == "PINTAR LA VALLA DE ROJO")
    }
}
