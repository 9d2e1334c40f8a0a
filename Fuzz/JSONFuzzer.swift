import Foundation

// libFuzzer entry point over badge's JSON parser (configs up to 8 MiB,
// manifests up to 64 MiB, plugin results): every input must end in a value
// or a BadgeError, never a trap, and in time linear in its length:
// scripts/fuzz.sh runs it with a per-input time limit, so an input that makes
// the parser quadratic (a long line of many values) is reported as a hang.

@_cdecl("LLVMFuzzerTestOneInput")
public func jsonFuzzerTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let bytes, count > 0 else { return 0 }
    let data = Data(bytes: bytes, count: count)
    _ = try? JSONParser.parse(data, file: "fuzz.json")
    // A slice whose startIndex is not 0.
    if count > 1 { _ = try? JSONParser.parse(data.dropFirst(), file: nil) }
    // A string written back by JSONWriter must parse to the same string.
    if let node = try? JSONParser.parse(data), case let .string(text) = node.value {
        guard case let .string(back)? = (try? JSONParser.parse(JSONWriter.quote(text)))?.value, back == text else {
            fatalError("JSONWriter.quote does not round-trip \(text.unicodeScalars.map(\.value))")
        }
    }
    return 0
}
