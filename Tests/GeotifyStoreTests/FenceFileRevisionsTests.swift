import GeotifyCore
import GeotifyStore
import Testing

/// The fence file read with persisted revisions gives each fence its revision as it is
/// decoded: the same book as reading it without and revising it afterwards, which held
/// every fence twice.
@Suite("Fence file revisions")
struct FenceFileRevisionsTests {
    static let text = #"""
        {"devices": {"alice/phone": [
            {"identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "note": "", "eventType": "onEntry"},
            {"identifier": "gym", "latitude": 52.50, "longitude": 13.40, "radius": 80, "note": "", "eventType": "onExit"}],
          "bob/phone": [
            {"identifier": "home", "latitude": 48.85, "longitude": 2.35, "radius": 60, "note": "", "eventType": "onEntry"}]},
         "groups": {"family": ["alice/phone", "bob/phone"]},
         "shared": [
            {"identifier": "school", "latitude": 52.53, "longitude": 13.41, "radius": 200, "note": "", "eventType": "onEntry", "group": "family"},
            {"identifier": "station", "latitude": 52.525, "longitude": 13.369, "radius": 150, "note": "", "eventType": "onEntry"}]}
        """#

    static let file = FenceFile(path: "fences.json")

    static func revisions(of book: FenceBook) -> [String: [String: Int]] {
        var table = book.devices.mapValues { Dictionary(uniqueKeysWithValues: $0.map { ($0.identifier, $0.addedRevision) }) }
        for (owner, set) in book.shared {
            table[FenceBook.scope(ofShared: owner)] = Dictionary(uniqueKeysWithValues: set.fences.map { ($0.identifier, $0.addedRevision) })
        }
        return table
    }

    @Test func knownIdentifiersKeepTheirRevisionAndNewOnesGetTheNext() throws {
        let known = ["alice/phone": ["home": 2], "bob/phone": ["home": 3], "#shared": ["station": 1]]
        let book = try #require(Self.file.parse(Array(Self.text.utf8), revisions: FenceRevisions(known: known, current: 3)).book)
        #expect(Self.revisions(of: book) == [
            "alice/phone": ["home": 2, "gym": 4], "bob/phone": ["home": 3],
            "#family": ["school": 4], "#shared": ["station": 1],
        ])
        #expect(book.revision == 4)
    }

    @Test func noNewIdentifierKeepsTheBookRevision() throws {
        let known = ["alice/phone": ["home": 2, "gym": 2], "bob/phone": ["home": 3], "#family": ["school": 1], "#shared": ["station": 1]]
        let book = try #require(Self.file.parse(Array(Self.text.utf8), revisions: FenceRevisions(known: known, current: 5)).book)
        #expect(book.revision == 5)
        #expect(Self.revisions(of: book) == known)
    }

    @Test func revisingWhileDecodingGivesTheBookThatRevisingAfterwardsGives() throws {
        let previous = try #require(Self.file.parse(Array(Self.text.utf8)).book).revised(knownRevisions: [:], currentRevision: 0)
        let edited = Self.text.replacingOccurrences(of: #""gym""#, with: #""pool""#)
        let afterwards = try #require(Self.file.parse(Array(edited.utf8)).book).revised(from: previous)
        let whileDecoding = try #require(Self.file.parse(Array(edited.utf8), revisions: FenceRevisions(of: previous)).book)
        #expect(whileDecoding == afterwards)
        #expect(Self.revisions(of: whileDecoding) == Self.revisions(of: afterwards))
        #expect(whileDecoding.revision == 2)
        #expect(whileDecoding.fences(of: "alice/phone").map(\.addedRevision) == [1, 2])
    }

    @Test func withoutRevisionsEveryFenceIsAtRevisionZero() throws {
        let book = try #require(Self.file.parse(Array(Self.text.utf8)).book)
        #expect(Self.revisions(of: book).values.allSatisfy { $0.values.allSatisfy { $0 == 0 } })
        #expect(book.revision == 0)
    }
}
