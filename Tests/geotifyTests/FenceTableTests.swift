import GeotifyStore
import Testing
@testable import geotify

/// What `geotify fences list` prints, without running the binary: rows sorted by device,
/// several event types joined by commas, and a note kept on its line.
@Suite("Fence table")
struct FenceTableTests {
    @Test func rowsAreSortedByDeviceAndKeepTheFileOrderWithin() throws {
        let devices = ["e/5", "b/2", "d/4", "a/1", "c/3", "f/6"]
        let lists = devices.map { #""\#($0)": [{"identifier": "x", "latitude": 1, "longitude": 2, "radius": 10, "eventType": "onEntry"},"#
            + #" {"identifier": "w", "latitude": 1, "longitude": 2, "radius": 10, "eventType": ["onExit", "onDwell"]}]"# }
        let book = try #require(FenceFile(path: "fences.json").parse(Array(#"{"devices": {\#(lists.joined(separator: ", "))}}"#.utf8)).book)
        let table = FenceTable(book: book)
        #expect(table.rows.map { $0[0] } == devices.sorted().flatMap { [$0, $0] })
        #expect(table.rows.prefix(2).map { $0[1] } == ["x", "w"])
        #expect(table.rows[1][2] == "onExit,onDwell")
    }

    /// A note's line breaks and tabs are shown as escapes, so each fence stays one row.
    @Test func aNoteStaysOnItsLine() {
        #expect(FenceTable.visible("a\tb\rc\nd é") == #"a\tb\rc\nd é"#)
    }
}
