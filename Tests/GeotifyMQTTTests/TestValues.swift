import Foundation

/// Random bytes of the given length, for binary payloads.
func randomBytes(_ count: Int) -> [UInt8] {
    // Eight bytes a draw: a byte a draw took 2 s of CPU for the 1 MiB payloads, unoptimised.
    var generator = SystemRandomNumberGenerator()
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 7)
    while bytes.count < count {
        withUnsafeBytes(of: generator.next()) { bytes.append(contentsOf: $0) }
    }
    return Array(bytes.prefix(count))
}

/// A topic no other test uses.
func uniqueTopic(_ prefix: String) -> String {
    "geotify-test/\(prefix)/\(UUID().uuidString)"
}
