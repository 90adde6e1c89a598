import GeotifyCore
import Testing

/// A lane tells a changed book from the one it timed by its edition (`FenceBookEdition`):
/// copies share one, every change makes a new one, and equality ignores it.
@Suite("Fence book editions")
struct FenceBookEditionTests {
    static let fence = Fence(identifier: "home", region: .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100), note: "", eventType: [.onEntry])

    @Test func copiesShareTheEditionAndEveryChangeMakesANewOne() {
        let book = FenceBook(devices: ["alice/phone": [Self.fence]])
        let copy = book
        #expect(copy.edition.isSame(as: book.edition))
        let replaced = book.replacing(devices: ["alice/phone": [Self.fence]])
        #expect(!replaced.edition.isSame(as: book.edition), "replacing makes another, even with the same fences")
        #expect(replaced == book, "and the books are still equal: the edition is not part of what they hold")
        let revised = FenceBook(devices: ["alice/phone": [Self.fence]]).revised(from: book)
        #expect(!revised.edition.isSame(as: book.edition))
        #expect(!FenceBook().edition.isSame(as: FenceBook().edition), "two books built apart are two editions")
    }
}
