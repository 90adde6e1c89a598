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
        probe.advance(59.5)
        #expect(authenticator.authenticate(alice) == .success(user))
        #expect(probe.checked == 1, "remembered for just under the 60 s")
        probe.advance(0.5)
        #expect(authenticator.authenticate(alice) == .success(user))
        #expect(probe.checked == 2, "checked again once the 60 s are up")
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

    /// Users whose hashes differ in cost answer a wrong password in different times; the
    /// unknown user's decoy is the costliest hash of the method most users have, so a wrong
    /// user name is never cheaper to try than a wrong password, and a file whose costs
    /// differ is warned about.
    @Test func theDecoyIsTheCostliestHashAndMixedCostsAreWarnedAbout() {
        let cheap = "$2y$05$abcdefghijklmnopqrstuu5K5FdJ0oP6hQ1hY5y0i6yYjB8Q9u1nK"
        let dear = "$2y$12$abcdefghijklmnopqrstuu5K5FdJ0oP6hQ1hY5y0i6yYjB8Q9u1nK"
        let other = "$2y$12$zyxwvutsrqponmlkjihgfeY5K5FdJ0oP6hQ1hY5y0i6yYjB8Q9u1nK"
        let sha = "$6$rounds=900000$saltsalt$abc"
        let mixed = UsersFile(hashes: ["alice": cheap, "bob": dear, "carol": other, "dave": sha])
        #expect(Authenticator.decoy(for: mixed) == dear, "the costliest bcrypt hash, the first by name of equals")
        #expect(Authenticator.decoy(for: UsersFile(hashes: ["alice": sha, "bob": cheap])) == sha, "a tie of methods: the first user's")
        let warning = mixed.costWarning
        #expect(warning?.contains("SHA-512-crypt rounds=900000: dave; bcrypt cost 05: alice; bcrypt cost 12: bob, carol") == true)
        #expect(warning?.contains("htpasswd -B -C 12") == true)
        #expect(UsersFile(hashes: ["alice": dear, "bob": other]).costWarning == nil)
        #expect(PasswordCost(hash: "$6$saltsalt$abc") == PasswordCost(hash: "$6$rounds=5000$saltsalt$abc"))
        #expect(PasswordCost(hash: "$y$j9T$salt$hash")?.description == "yescrypt j9T")
    }

    /// An scrypt hash (`$7$`) writes its parameters (N, r and p: 11 characters) and then
    /// its salt in one field: two users with the same parameters and their own salts
    /// cost the same, and no warning tells them apart.
    @Test func scryptHashesOfOneCostWithTheirOwnSaltsCostTheSame() {
        let first = "$7$CU..../....saltsaltsalt$hashhashhashhashhashhashhashhashhashhashhas"
        let second = "$7$CU..../....pepperpepper$hashhashhashhashhashhashhashhashhashhashhas"
        #expect(PasswordCost(hash: first) == PasswordCost(hash: second))
        #expect(PasswordCost(hash: first)?.description == "scrypt CU..../....")
        #expect(UsersFile(hashes: ["alice": first, "bob": second]).costWarning == nil)
        #expect(PasswordCost(hash: "$7$DU..../....saltsaltsalt$hash") != PasswordCost(hash: first), "N is the first character")
    }
}
