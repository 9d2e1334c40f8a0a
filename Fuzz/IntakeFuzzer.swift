import Foundation

// libFuzzer entry point over badge's header reader: every input must end in a
// header or a BadgeError, never a trap. Built by scripts/fuzz.sh together with
// only the BadgeKit sources the reader needs, so it is not a SwiftPM target
// (libFuzzer brings its own `main`).

// Every format at once: the reader must stay safe on paths the product
// reaches only when a caller accepts more than PNG.
private let everyFormat = Set(ImageFormat.allCases)
// Tight limits as well as the defaults, so the limit checks (and their
// arithmetic) run on the small images a fuzzer makes, not only on rare giants.
private let intakes = [ImageIntake(limits: .default), ImageIntake(limits: ImageLimits(maxFileBytes: 1 << 20, maxSide: 64, maxPixels: 1024))]

@_cdecl("LLVMFuzzerTestOneInput")
public func intakeFuzzerTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let bytes, count > 0 else { return 0 }
    let data = Data(bytes: bytes, count: count)
    for intake in intakes {
        _ = try? intake.inspect(data, accepting: everyFormat, source: "fuzz")
    }
    _ = ImageIntake.sniff(data)
    _ = ImageIntake.jpegOrientation(data)
    // A slice whose startIndex is not 0: the readers index from startIndex,
    // and an off-by-base error would show only here.
    if count > 1 {
        let slice = data.dropFirst()
        _ = try? intakes[0].inspect(slice, accepting: everyFormat)
        _ = ImageIntake.jpegOrientation(slice)
    }
    // The text-chunk reader, over chunks read without CRC checks so the
    // fuzzer reaches it without having to forge a CRC for every mutation.
    for verify in [true, false] {
        guard let chunks = try? PNG.chunks(in: data, verifyCRC: verify) else { continue }
        let entries = chunks.compactMap(PNG.textEntry)
        _ = BadgeMetadata(entries: entries)
    }
    // And every input as one chunk's payload, so textEntry sees arbitrary bytes.
    for type in ["tEXt", "iTXt"] {
        _ = PNG.textEntry(PNGChunk(type: type, data: data))
    }
    return 0
}
