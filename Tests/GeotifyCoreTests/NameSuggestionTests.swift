@testable import GeotifyCore
import Testing

@Suite("Name suggestions")
struct NameSuggestionTests {
    @Test(arguments: [
        ("fence", ["run", "check", "fences", "status"], "fences"),
        ("onEnter", ["onEntry", "onExit", "onDwell", "onEntryAndExit"], "onEntry"),
        ("statsIntervall", ["statsInterval", "stateDir"], "statsInterval"),
        ("brocker", ["broker", "clientId"], "broker"),
        ("clientID", ["clientId", "broker"], "clientId"),
        ("simulat", ["simulate", "status"], "simulate"),
        ("lgo-level", ["log-level", "fences"], "log-level"),
        ("state", ["state-dir", "fences"], "state-dir"),
    ])
    func aNearNameIsSuggested(word: String, names: [String], expected: String) {
        #expect(NameSuggestion.nearest(to: word, in: names) == expected)
    }

    @Test func farShortKnownAndHugeWordsGetNone() {
        #expect(NameSuggestion.nearest(to: "nonsense", in: ["run", "check", "fences"]) == nil)
        #expect(NameSuggestion.nearest(to: "rn", in: ["run"]) == nil)
        #expect(NameSuggestion.nearest(to: "fences", in: ["fences"]) == nil)
        #expect(NameSuggestion.nearest(to: String(repeating: "a", count: 100_000), in: ["a"]) == nil)
        #expect(NameSuggestion.nearest(to: "st", in: ["state-dir", "status"]) == nil)
        #expect(NameSuggestion.nearest(to: "sta", in: ["state-dir", "status"]) == nil)
    }

    @Test func theCloserNameWinsAndTiesGoToTheEarlier() {
        #expect(NameSuggestion.nearest(to: "onExi", in: ["onEntry", "onExit"]) == "onExit")
        #expect(NameSuggestion.nearest(to: "cat", in: ["bat", "hat"]) == "bat")
    }

    @Test func theHintIsReadyToAppend() {
        #expect(NameSuggestion.hint(for: "brocker", in: ["broker"]) == #" (did you mean "broker"?)"#)
        #expect(NameSuggestion.hint(for: "brocker", in: ["broker"]) { "--\($0)" } == " (did you mean --broker?)")
        #expect(NameSuggestion.hint(for: "xyzzy", in: ["broker"]) == "")
    }

    @Test func swapsOfNeighboursCostOneEdit() {
        #expect(NameSuggestion.editDistance(Array("ab".unicodeScalars), Array("ba".unicodeScalars)) == 1)
        #expect(NameSuggestion.editDistance(Array("kitten".unicodeScalars), Array("sitting".unicodeScalars)) == 3)
        #expect(NameSuggestion.editDistance([], Array("abc".unicodeScalars)) == 3)
    }
}
