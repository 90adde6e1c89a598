import Testing
import GeotifyBridge
import GeotifyJSON

@Suite("Command decoding")
struct CommandTests {
    func decode(_ text: String) -> Command.Decoded {
        Command.decode(Array(text.utf8), maximumBytes: 1_000)
    }

    func refusal(_ text: String) -> InputError? {
        if case .failure(let error) = decode(text).result { return error }
        return nil
    }

    @Test func everyAction() throws {
        let cases: [(String, Command.Action)] = [
            (#"{"action":"resetBadge"}"#, .resetBadge),
            (#"{"action":"list"}"#, .list),
            (#"{"action":"get","fence":"home"}"#, .get(fence: "home")),
            (#"{"action":"add","fence":{"identifier":"gym"}}"#, .add(fence: ["identifier": "gym"])),
            (#"{"action":"edit","fence":"home","changes":{"radius":150}}"#, .edit(fence: "home", changes: JSONObject([.init(key: "radius", value: 150)]))),
            (#"{"action":"delete","fence":"home"}"#, .delete(fence: "home", confirm: false)),
            (#"{"action":"delete","fence":"home","confirm":true}"#, .delete(fence: "home", confirm: true)),
            (#"{"action":"preview","change":{"action":"delete","fence":"home"}}"#, .preview(.delete(fence: "home"))),
            (#"{"action":"commit","token":"ab12"}"#, .commit(token: "ab12")),
            (#"{"action":"cancel","token":"ab12"}"#, .cancel(token: "ab12")),
        ]
        for (text, action) in cases {
            #expect(try decode(text).result.get() == Command(action: action), "\(text)")
        }
        #expect(decode(#"{"action":"list","id":"r-7"}"#).id == "r-7")
    }

    @Test func badCommandsGetSpecificErrorsAndKeepTheirCorrelationId() {
        #expect(refusal("")?.code == .emptyPayload)
        #expect(refusal("{")?.code == .invalidJSON)
        #expect(refusal("[]")?.code == .notAnObject)
        #expect(refusal("{}") == InputError(.missingField, "missing \"action\" (one of list, get, add, edit, delete, preview, commit, cancel, resetBadge)"))
        #expect(refusal(#"{"action":"explode"}"#) == InputError(.unknownAction, "unknown action \"explode\" (one of list, get, add, edit, delete, preview, commit, cancel, resetBadge)"))
        #expect(refusal(#"{"action":1}"#)?.code == .wrongType)
        #expect(refusal(#"{"action":"get"}"#) == InputError(.missingField, "missing \"fence\" (the identifier of the fence)"))
        #expect(refusal(#"{"action":"edit","fence":"home","changes":[1]}"#) == InputError(.wrongType, "\"changes\" must be an object, not an array"))
        #expect(refusal(#"{"action":"delete","fence":"home","confirm":"yes"}"#)?.code == .wrongType)
        #expect(refusal(#"{"action":"preview","change":{"action":"rename"}}"#)?.code == .unknownAction)
        #expect(refusal(#"{"action":"list","id":7}"#) == InputError(.wrongType, "\"id\" must be a string, not a number"))
        #expect(refusal(String(repeating: " ", count: 1_001))?.code == .payloadTooLarge)
        let list = #"{"action":"list"}"#
        #expect(refusal(list + String(repeating: " ", count: 1_000 - list.utf8.count)) == nil, "exactly the limit is taken")
        let decoded = decode(#"{"action":"get","id":"q1"}"#)
        #expect(decoded.id == "q1")
        #expect(decoded.actionName == "get")
    }

    @Test func unknownFieldsAreRefusedNotIgnored() {
        #expect(refusal(#"{"action":"delete","fnece":"home","fence":"home","confirm":true}"#)
            == InputError(.unknownKey, #"unknown field "fnece" in a delete command, which has only "action", "id", "fence", "confirm""#))
        #expect(refusal(#"{"action":"list","fence":"home"}"#)
            == InputError(.unknownKey, #"unknown field "fence" in a list command, which has only "action", "id""#))
        #expect(refusal(#"{"action":"commit","token":"ab12","confirm":true}"#)?.code == .unknownKey)
        #expect(refusal(#"{"action":"preview","change":{"action":"delete","fence":"home","confirm":true}}"#)
            == InputError(.unknownKey, #"unknown field "confirm" in the "change" of a preview (delete), which has only "action", "fence""#))
        #expect(refusal(#"{"action":"explode","fence":"home"}"#)?.code == .unknownAction)
        let refused = decode(#"{"action":"get","id":"q2","fence":"home","extra":1}"#)
        #expect(refused.id == "q2")
        #expect(refused.actionName == "get")
    }

    @Test func aFieldGivenTwiceAnywhereIsRefused() {
        #expect(refusal(#"{"action":"delete","fence":"home","fence":"office","confirm":true}"#)
            == InputError(.duplicateField, #"the field "fence" is given more than once (line 1, column 35); give each field once"#))
        #expect(refusal(#"{"action":"edit","fence":"home","changes":{"radius":150,"radius":5}}"#)?.message
            == #"the field "radius" is given more than once (line 1, column 57); give each field once"#)
        #expect(refusal(#"{"action":"add","fence":{"identifier":"gym","identifier":"home"}}"#)?.code == .duplicateField)
    }

    @Test func theFieldsOfEveryActionAreAccepted() throws {
        let text = #"{"action":"preview","id":"p","change":{"action":"edit","fence":"home","changes":{"radius":9}}}"#
        #expect(try decode(text).result.get().action == .preview(.edit(fence: "home", changes: JSONObject([.init(key: "radius", value: 9)]))))
    }
}
