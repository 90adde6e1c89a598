import GeotifyConsole
import GeotifyCore
import GeotifyHTTP
import Testing

@Suite struct OwnTracksSenderTests {
    @Test func headersWinOverTheQueryWhichWinsOverTheDefaults() throws {
        let anyone = HTTPUser.anonymous
        let headers = HTTPRequest(method: "POST", path: "/pub", query: ["u": "q", "d": "qd"], headers: ["X-Limit-U": "jane", "X-Limit-D": "3s"])
        #expect(try OwnTracksSender(request: headers, login: anyone) == OwnTracksSender(user: "jane", device: "3s"))
        let query = HTTPRequest(method: "POST", path: "/pub", query: ["u": "q", "d": "qd"])
        #expect(try OwnTracksSender(request: query, login: anyone) == OwnTracksSender(user: "q", device: "qd"))
        #expect(try OwnTracksSender(request: HTTPRequest(method: "POST", path: "/pub"), login: anyone) == OwnTracksSender(user: "owntracks", device: "phone"))
    }

    @Test func aLoginIsTheUserAndMayNotNameAnother() throws {
        let login = HTTPUser(name: "jane", roles: [.tracker])
        #expect(try OwnTracksSender(request: HTTPRequest(method: "POST", path: "/pub", headers: ["X-Limit-D": "3s"]), login: login).user == "jane")
        #expect(try OwnTracksSender(request: HTTPRequest(method: "POST", path: "/pub", headers: ["X-Limit-U": "jane"]), login: login).user == "jane")
        #expect(throws: ConsoleRefusal(.notAllowed, "user \"jane\" may not post for user \"john\"")) {
            try OwnTracksSender(request: HTTPRequest(method: "POST", path: "/pub", headers: ["X-Limit-U": "john"]), login: login)
        }
    }

    @Test func namesThatAreNotOneTopicLevelAreRefused() {
        for name in ["a/b", "+", "#", "", "x\u{1}"] {
            #expect(throws: ConsoleRefusal.self) {
                try OwnTracksSender(request: HTTPRequest(method: "POST", path: "/pub", headers: ["X-Limit-D": name]), login: .anonymous)
            }
        }
    }

    @Test func aLoginMayNotNameItselfInAnotherCaseOrThroughTheQuery() {
        let login = HTTPUser(name: "jane", roles: [.tracker])
        #expect(throws: ConsoleRefusal(.notAllowed, "user \"jane\" may not post for user \"Jane\""), "topics are case-sensitive: Jane is another user") {
            try OwnTracksSender(request: HTTPRequest(method: "POST", path: "/pub", headers: ["X-Limit-U": "Jane"]), login: login)
        }
        #expect(throws: ConsoleRefusal(.notAllowed, "user \"jane\" may not post for user \"john\"")) {
            try OwnTracksSender(request: HTTPRequest(method: "POST", path: "/pub", query: ["u": "john"]), login: login)
        }
    }

    @Test func aDeleteCharacterIsAControlCharacter() {
        #expect(throws: ConsoleRefusal.self) {
            try OwnTracksSender(request: HTTPRequest(method: "POST", path: "/pub", headers: ["X-Limit-D": "x\u{7F}"]), login: .anonymous)
        }
    }
}
