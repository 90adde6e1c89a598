import Foundation

/// Random bytes of the given length, for binary payloads.
func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
}

/// A topic no other test uses.
func uniqueTopic(_ prefix: String) -> String {
    "geotify-test/\(prefix)/\(UUID().uuidString)"
}
