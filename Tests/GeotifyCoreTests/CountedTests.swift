import GeotifyCore
import Testing

/// The noun of a count is singular at one only: at zero, two and minus one it is plural,
/// and an irregular plural is used as given.
@Suite struct CountedTests {
    @Test(arguments: [(0, "0 devices"), (1, "1 device"), (2, "2 devices"), (-1, "-1 devices")])
    func theNounIsSingularAtOneOnly(count: Int, expected: String) {
        #expect("\(Counted(count, "device"))" == expected)
    }

    @Test func anIrregularPluralIsUsedAsGiven() {
        #expect(Counted(1, "entry", plural: "entries").description == "1 entry")
        #expect(Counted(3, "entry", plural: "entries").description == "3 entries")
    }
}
