import Synchronization

/// Who a request's `Authorization` header says it is, checked against the users file,
/// with the roles the settings give that user.
///
/// A checked header is remembered for `cacheSeconds` (bcrypt is slow on purpose, and a
/// page makes many requests), at most `cacheLimit` of them; replacing the users drops
/// them all. An unknown user costs a hash check too, against one of the users' own
/// hashes (`decoy(for:)`), so it costs what a wrong password costs, whatever algorithm
/// and cost the users file uses, and timing does not tell which names exist. Passwords
/// are never logged or kept beyond the cache's key.
package final class Authenticator: Sendable {
    /// Why a request is not authenticated (never saying what was sent).
    package enum Failure: Error, Sendable, Equatable {
        case missing
        case malformed
        case wrongCredentials
    }

    private struct Remembered {
        var user: HTTPUser
        var expires: Double
    }

    private struct State {
        var users: UsersFile
        /// What an unknown user's password is checked against.
        var decoy: String
        var cache: [String: Remembered] = [:]

        init(users: UsersFile) {
            self.users = users
            decoy = Authenticator.decoy(for: users)
        }
    }

    /// The roles of users the settings do not name.
    package let defaultRoles: Set<Role>
    /// Roles by user name.
    package let roles: [String: Set<Role>]
    package let cacheSeconds: Double
    package let cacheLimit: Int
    private let uptime: @Sendable () -> Double
    private let verify: @Sendable (_ password: String, _ hash: String) -> Bool
    private let state: Mutex<State>

    /// `uptime` is the monotonic clock the cache expires by; `verify` checks a password
    /// against a hash (libcrypt's, unless a test counts the checks).
    package init(
        users: UsersFile, roles: [String: Set<Role>], defaultRoles: Set<Role> = [.read],
        cacheSeconds: Double = 300, cacheLimit: Int = 1024, uptime: @escaping @Sendable () -> Double,
        verify: @escaping @Sendable (_ password: String, _ hash: String) -> Bool = { PasswordHash.verify($0, against: $1) }
    ) {
        self.roles = roles
        self.defaultRoles = defaultRoles
        self.cacheSeconds = cacheSeconds
        self.cacheLimit = cacheLimit
        self.uptime = uptime
        self.verify = verify
        state = Mutex(State(users: users))
    }

    /// Replaces the users (the file changed); remembered checks are dropped.
    package func replace(_ users: UsersFile) {
        state.withLock { state in
            state = State(users: users)
        }
    }

    /// The user `authorization` (the header's value) proves, or why not.
    package func authenticate(_ authorization: String?) -> Result<HTTPUser, Failure> {
        let credentials: BasicCredentials
        do {
            credentials = try BasicCredentials(authorization: authorization)
        } catch {
            return .failure(error == .missing ? .missing : .malformed)
        }
        let now = uptime()
        let key = authorization ?? ""
        let (hash, decoy, remembered) = state.withLock { state in
            (state.users.hashes[credentials.user], state.decoy, state.cache[key].flatMap { $0.expires > now ? $0.user : nil })
        }
        if let remembered { return .success(remembered) }
        guard verify(credentials.password, hash ?? decoy), hash != nil else {
            return .failure(.wrongCredentials)
        }
        let user = HTTPUser(name: credentials.user, roles: roles[credentials.user] ?? defaultRoles)
        state.withLock { state in
            guard state.users.hashes[credentials.user] == hash else { return }
            if state.cache.count >= cacheLimit { state.cache = [:] }
            state.cache[key] = Remembered(user: user, expires: now + cacheSeconds)
        }
        return .success(user)
    }

    /// The hash an unknown user's password is checked against: the costliest hash of the
    /// method most users' hashes have (ties: the first user's by name), so the check has
    /// that method and the highest of its costs (`PasswordCost`), and a wrong user name is
    /// never cheaper to try than a wrong password of any user of that method (a match
    /// means nothing: the user is still unknown); `PasswordHash.decoy` when there is none.
    /// Costs of different methods cannot be compared; `UsersFile.costWarning` says when
    /// the hashes differ at all.
    package static func decoy(for users: UsersFile) -> String {
        let costed = users.hashes.sorted { $0.key < $1.key }.compactMap { name, hash in
            PasswordCost(hash: hash).map { (name: name, hash: hash, cost: $0) }
        }
        var byMethod: [String: Int] = [:]
        for entry in costed { byMethod[entry.cost.method, default: 0] += 1 }
        let most = byMethod.values.max() ?? 0
        guard let method = costed.first(where: { byMethod[$0.cost.method] == most })?.cost.method else {
            return PasswordHash.decoy
        }
        let candidates = costed.filter { $0.cost.method == method }
        let dearest = candidates.map { $0.cost.level ?? 0 }.max() ?? 0
        return candidates.first { ($0.cost.level ?? 0) == dearest }?.hash ?? PasswordHash.decoy
    }
}
