import Testing
import GeotifyBridge

@Suite("Commands")
struct CommandTests {
    func refusal(_ text: String) -> InputError? {
        do {
            _ = try Command(payload: Array(text.utf8), maximumBytes: 1_000)
            return nil
        } catch {
            return error
        }
    }

    @Test func resetBadge() throws {
        #expect(try Command(payload: Array(#"{"action":"resetBadge"}"#.utf8), maximumBytes: 1_000) == .resetBadge)
    }

    @Test func badCommandsGetSpecificErrors() {
        #expect(refusal("")?.kind == .emptyPayload)
        #expect(refusal("{")?.kind == .invalidJSON)
        #expect(refusal("[]")?.kind == .notAnObject)
        #expect(refusal("{}") == InputError(.missingField, "missing \"action\" (one of resetBadge)"))
        #expect(refusal(#"{"action":"explode"}"#) == InputError(.unknownAction, "unknown action \"explode\" (one of resetBadge)"))
        #expect(refusal(#"{"action":1}"#)?.kind == .wrongType)
        #expect(refusal(String(repeating: " ", count: 1_001))?.kind == .payloadTooLarge)
    }
}
