import Foundation

// Stands in for swift-crypto's `Crypto` in the intake fuzzer (scripts/fuzz.sh
// compiles it as a module of that name): of the BadgeKit sources the fuzzer
// builds, only `BadgeMetadata.contentID` hashes, and the fuzzer never makes an
// id. Were it ever to, this stops the run instead of hashing wrongly.
public struct SHA256 {
    public init() {}

    public mutating func update<D: DataProtocol>(data: D) {
        fatalError("the intake fuzzer has no SHA-256: Fuzz/CryptoStandIn.swift stands in for swift-crypto")
    }

    public func finalize() -> [UInt8] {
        fatalError("the intake fuzzer has no SHA-256: Fuzz/CryptoStandIn.swift stands in for swift-crypto")
    }
}
