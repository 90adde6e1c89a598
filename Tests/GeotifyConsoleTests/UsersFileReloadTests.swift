@testable import GeotifyConsole
import GeotifyHTTP
import Testing

/// The users file is read again when it changes (the console looks every
/// `Console.usersCheckInterval` seconds): a user taken out loses access at once, one
/// added gains it, and a changed file that is not valid is refused with an error line
/// while the users in force stay, so a typo cannot lock everyone out. docs/http.md.
@Suite("Users file read again")
struct UsersFileReloadTests {
    @Test func aChangedUsersFileTakesEffectAndABadOneKeepsTheUsersInForce() throws {
        let harness = try ConsoleHarness(logins: true)
        func status(_ user: String) -> Int { harness.call("GET", "/api/state", as: user).status }
        #expect(status("bob") == 200)

        try harness.writeUsers(["alice", "alice-phone", "prometheus"])
        harness.console.checkUsers()
        #expect(status("bob") == 401, "bob, taken out of the file, has no access")
        #expect(status("alice") == 200)
        #expect(harness.logged.last == "info http: read 3 users from \(harness.directory.appendingPathComponent("users").path)")

        try harness.writeUsers(["alice", "bob"], extra: ["carol has no hash"])
        harness.console.checkUsers()
        harness.console.checkUsers()
        #expect(status("alice") == 200 && status("bob") == 401, "the users in force stay")
        let refused = harness.logged.filter { $0.hasPrefix("error http: the users file changed and is not valid, the previous users stay: ") }
        #expect(refused.count == 1, "said once for that version of the file: \(harness.logged)")

        try harness.writeUsers(["alice", "bob"])
        harness.console.checkUsers()
        #expect(status("bob") == 200, "bob, back in a valid file, has access again")
    }

    /// docs/http.md's "within two seconds": the started console's own timer reads the
    /// changed file, driven by the harness's manual clock (no socket is needed for the
    /// requests, but `start` binds one, on a loopback port of the system's choosing).
    @Test func theStartedConsoleReadsAChangedFileWithinTwoSeconds() throws {
        let harness = try ConsoleHarness(logins: true, settings: ["listen": "127.0.0.1:0"])
        _ = try harness.console.start()
        defer { harness.console.stop() }
        func status(_ user: String) -> Int { harness.call("GET", "/api/state", as: user).status }
        #expect(status("bob") == 200)

        try harness.writeUsers(["alice", "alice-phone", "prometheus"])
        harness.scheduler.advance(by: Console.usersCheckInterval - 0.5)
        #expect(status("bob") == 200, "not looked at before the interval has passed")
        harness.scheduler.advance(by: 0.5)
        #expect(status("bob") == 401, "bob, taken out of the file, has no access once the timer has looked")
        #expect(status("alice") == 200)
        #expect(Console.usersCheckInterval == 2, "docs/http.md says two seconds")
    }
}
