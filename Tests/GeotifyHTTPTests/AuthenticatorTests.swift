import GeotifyHTTP
import Synchronization
import Testing

@Suite struct AuthenticatorTests {
    /// bcrypt of "s3cret" at cost 5 (htpasswd -nbB -C 5 alice s3cret).
    static let hash = "$2y$05$jKatOKD8jNmQpD8fiHOkJuB7w8EYgxGGPqGi88HMdtTpszAJE9QCS"

    /// The cache's clock, and how many passwords were checked against a hash.
    final class Probe: Sendable {
        let clock = Mutex(0.0)
        let checks = Mutex(0)
        func advance(_ seconds: Double) { clock.withLock { $0 += seconds } }
        var checked: Int { checks.withLock { $0 } }
    }

    func authenticator(probe: Probe = Probe()) -> Authenticator {
        Authenticator(
            users: UsersFile(hashes: ["alice": Self.hash, "bob": Self.hash]),
            roles: ["alice": [.manage], "bob": [.tracker]],
            cacheSeconds: 60, uptime: { probe.clock.withLock { $0 } },
            verify: { password, hash in
                probe.checks.withLock { $0 += 1 }
                return PasswordHash.verify(password, against: hash)
            })
    }

    func header(_ user: String, _ password: String) -> String {
        BasicCredentials(user: user, password: password).authorization
    }

    @Test func theRightPasswordGivesTheUserWithTheirRoles() {
        let result = authenticator().authenticate(header("alice", "s3cret"))
        #expect(result == .success(HTTPUser(name: "alice", roles: [.manage, .read])))
        #expect(authenticator().authenticate(header("bob", "s3cret")) == .success(HTTPUser(name: "bob", roles: [.tracker])))
    }

    @Test func usersTheSettingsDoNotNameMayRead() {
        let authenticator = Authenticator(users: UsersFile(hashes: ["carol": Self.hash]), roles: [:], uptime: { 0 })
        #expect(authenticator.authenticate(header("carol", "s3cret")) == .success(HTTPUser(name: "carol", roles: [.read])))
    }

    @Test func wrongPasswordsUnknownUsersAndMissingHeadersAreRefused() {
        let probe = Probe()
        let authenticator = authenticator(probe: probe)
        #expect(authenticator.authenticate(header("alice", "wrong")) == .failure(.wrongCredentials))
        #expect(authenticator.authenticate(header("mallory", "s3cret")) == .failure(.wrongCredentials))
        #expect(probe.checked == 2, "an unknown user costs a hash check too")
        #expect(authenticator.authenticate(nil) == .failure(.missing))
        #expect(authenticator.authenticate("Basic ###") == .failure(.malformed))
    }

    @Test func aCheckedHeaderIsRememberedUntilItExpires() {
        let probe = Probe()
        let authenticator = authenticator(probe: probe)
        let alice = header("alice", "s3cret")
        let user = HTTPUser(name: "alice", roles: [.manage])
        #expect(authenticator.authenticate(alice) == .success(user))
        #expect(authenticator.authenticate(alice) == .success(user))
        #expect(probe.checked == 1)
        probe.advance(61)
        #expect(authenticator.authenticate(alice) == .success(user))
        #expect(probe.checked == 2)
    }

    @Test func replacingTheUsersForgetsWhatWasRemembered() {
        let authenticator = authenticator()
        let alice = header("alice", "s3cret")
        #expect(authenticator.authenticate(alice) == .success(HTTPUser(name: "alice", roles: [.manage])))
        authenticator.replace(UsersFile(hashes: ["alice": PasswordHash.decoy]))
        #expect(authenticator.authenticate(alice) == .failure(.wrongCredentials))
    }

    @Test func manageGrantsRead() {
        let user = HTTPUser(name: "a", roles: [.manage])
        #expect(user.has(.read) && user.has(.manage) && !user.has(.tracker) && !user.has(.metrics))
        #expect(HTTPUser.anonymous.has(.tracker) && HTTPUser.anonymous.has(.metrics))
    }

    @Test func aRememberedLoginDoesNotLetAWrongPasswordIn() {
        let probe = Probe()
        let authenticator = authenticator(probe: probe)
        #expect(authenticator.authenticate(header("alice", "s3cret")) == .success(HTTPUser(name: "alice", roles: [.manage])))
        #expect(authenticator.authenticate(header("alice", "wrong")) == .failure(.wrongCredentials))
        #expect(probe.checked == 2, "another header for the same user is checked against the hash")
    }

    @Test func aFullCacheIsEmptiedBeforeTheNextLoginIsRemembered() {
        let probe = Probe()
        let authenticator = Authenticator(
            users: UsersFile(hashes: ["alice": Self.hash, "bob": Self.hash, "carol": Self.hash]), roles: [:],
            cacheSeconds: 60, cacheLimit: 2, uptime: { probe.clock.withLock { $0 } },
            verify: { password, hash in
                probe.checks.withLock { $0 += 1 }
                return PasswordHash.verify(password, against: hash)
            })
        for name in ["alice", "bob", "carol"] {
            #expect(authenticator.authenticate(header(name, "s3cret")) == .success(HTTPUser(name: name, roles: [.read])))
        }
        #expect(probe.checked == 3)
        #expect(authenticator.authenticate(header("carol", "s3cret")) == .success(HTTPUser(name: "carol", roles: [.read])))
        #expect(probe.checked == 3, "the login that found the cache full is remembered")
        #expect(authenticator.authenticate(header("alice", "s3cret")) == .success(HTTPUser(name: "alice", roles: [.read])))
        #expect(probe.checked == 4, "the cache was emptied when it held cacheLimit logins")
    }

    /// Holds the authenticator a test's `verify` changes the users of while it checks.
    final class Later: Sendable {
        let authenticator = Mutex<Authenticator?>(nil)
        let replaced = Mutex(false)
    }

    @Test func aCheckTheUsersChangedDuringIsNotRemembered() {
        let later = Later()
        let authenticator = Authenticator(
            users: UsersFile(hashes: ["alice": Self.hash]), roles: [:], uptime: { 0 },
            verify: { password, hash in
                let first = later.replaced.withLock { replaced in
                    defer { replaced = true }
                    return !replaced
                }
                if first {
                    later.authenticator.withLock { $0 }?.replace(UsersFile(hashes: ["alice": PasswordHash.decoy]))
                }
                return PasswordHash.verify(password, against: hash)
            })
        later.authenticator.withLock { $0 = authenticator }
        #expect(authenticator.authenticate(header("alice", "s3cret")) == .success(HTTPUser(name: "alice", roles: [.read])))
        #expect(authenticator.authenticate(header("alice", "s3cret")) == .failure(.wrongCredentials), "the new users file decides the next request")
    }

    /// A wrong user name costs what a wrong password costs: its check is against a real
    /// user's hash (same algorithm and cost), not a fixed cheaper one.
    @Test func anUnknownUserIsCheckedAgainstAUsersOwnHash() {
        let costly = "$2y$10$abcdefghijklmnopqrstuu5K5FdJ0oP6hQ1hY5y0i6yYjB8Q9u1nK"
        let checked = Mutex<[String]>([])
        let authenticator = Authenticator(
            users: UsersFile(hashes: ["alice": costly, "bob": Self.hash]), roles: [:], uptime: { 0 },
            verify: { _, hash in
                checked.withLock { $0.append(hash) }
                return true
            })
        #expect(authenticator.authenticate(header("mallory", "anything")) == .failure(.wrongCredentials), "a match with the decoy proves nothing")
        #expect(checked.withLock { $0 } == [costly])
        #expect(Authenticator.decoy(for: UsersFile(hashes: [:])) == PasswordHash.decoy)
    }
}
