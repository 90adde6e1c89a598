import Testing

@testable import GeotifyCore

/// Identifiers of up to 15 UTF-8 bytes have a key; equal keys mean equal identifiers,
/// and identifiers that differ in any byte or in length have different keys.
@Suite("Identifier keys")
struct IdentifierKeyTests {
    @Test("keys are equal exactly when the bytes are")
    func keysFollowTheBytes() {
        let identifiers = ["", "a", "a\0", "f1", "f12", "f21", "home", "homE", "café", "cafe\u{301}", "12345678", "123456789", "fifteen-bytes-x"]
        for first in identifiers {
            for second in identifiers {
                let firstKey = IdentifierKey(first)
                let secondKey = IdentifierKey(second)
                #expect(firstKey != nil && secondKey != nil)
                #expect((firstKey == secondKey) == first.utf8.elementsEqual(second.utf8))
            }
        }
    }

    @Test("identifiers longer than 15 bytes have no key; a key survives its words")
    func longIdentifiersHaveNoKey() throws {
        #expect(IdentifierKey("sixteen-bytes-xy") == nil)
        #expect(IdentifierKey("ünïcödé-äccënts") == nil)
        let key = try #require(IdentifierKey("Büro"))
        #expect(IdentifierKey(words: IdentifierKey.words(key)) == key)
        #expect(IdentifierKey(words: IdentifierKey.words(nil)) == nil)
    }
}
