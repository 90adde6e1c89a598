@testable import GeotifyBridge
import Testing

/// The router's reading of a topic's shape, on strings held inline (up to 15 bytes) and
/// on the heap.
@Suite("Message router")
struct MessageRouterTests {
    @Test func aTopicsLevelsAreItsSlashesAndOne() {
        #expect(MessageRouter.levels(of: "a") == 1)
        #expect(MessageRouter.levels(of: "a/b") == 2)
        #expect(MessageRouter.levels(of: "/") == 2, "empty levels count")
        #expect(MessageRouter.levels(of: "owntracks/alice/phone") == 3)
        let long = Array(repeating: "level", count: 40).joined(separator: "/")
        #expect(MessageRouter.levels(of: long) == 40)
        #expect(MessageRouter.levels(of: String(long.dropLast(5))) == 40, "a trailing slash opens an empty level")
        #expect(MessageRouter.levels(of: "caf\u{E9}/\u{1F600}/x") == 3)
    }
}
