/// What checking a password against a crypt(3) hash costs, as the hash states it: its
/// method and that method's cost parameters (`$2y$12$...` is bcrypt at cost 12,
/// `$6$rounds=10000$...` SHA-512-crypt at 10 000 rounds, `$y$j9T$...` yescrypt with the
/// parameters `j9T`).
///
/// Two hashes with equal costs take the same time to check; with different ones a wrong
/// password for one user is answered sooner than for another, which tells them apart by
/// timing (`UsersFile.costWarning`). Costs of one method are ordered by `level`; costs of
/// different methods are not comparable.
package struct PasswordCost: Sendable, Hashable, CustomStringConvertible {
    /// The method's name: `bcrypt`, `yescrypt`, `gost-yescrypt`, `scrypt`, `SHA-512-crypt`
    /// or `SHA-256-crypt`.
    package var method: String
    /// The cost parameters as the hash writes them (`12`, `rounds=10000`, `j9T`).
    package var parameters: String
    /// The cost as a number that grows with the work, within the method (bcrypt's cost,
    /// SHA-crypt's rounds); nil when the parameters are not read as a number (yescrypt,
    /// scrypt).
    package var level: Int?

    /// The crypt(3) methods accepted (`UsersFile.strongPrefixes`): each one's identifier,
    /// between the hash's first two `$`, and name.
    package static let methods: [(identifier: String, name: String)] = [
        ("2y", "bcrypt"), ("2b", "bcrypt"), ("2a", "bcrypt"), ("y", "yescrypt"), ("7", "scrypt"),
        ("gy", "gost-yescrypt"), ("6", "SHA-512-crypt"), ("5", "SHA-256-crypt"),
    ]

    /// The cost `hash` states; nil for a hash of none of the accepted methods.
    package init?(hash: String) {
        let fields = hash.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 3, fields[0].isEmpty,
              let name = Self.methods.first(where: { $0.identifier == fields[1] })?.name else { return nil }
        switch name {
        case "bcrypt":
            guard let cost = Int(fields[2]) else { return nil }
            (method, parameters, level) = (name, fields[2], cost)
        case "SHA-512-crypt", "SHA-256-crypt":
            if fields[2].hasPrefix("rounds="), let rounds = Int(fields[2].dropFirst("rounds=".count)) {
                (method, parameters, level) = (name, "rounds=\(rounds)", rounds)
            } else {
                (method, parameters, level) = (name, "rounds=5000", 5000)
            }
        case "scrypt":
            (method, parameters, level) = (name, String(fields[2].prefix(11)), nil)
        default:
            (method, parameters, level) = (name, fields[2], nil)
        }
    }

    package var description: String {
        method == "bcrypt" ? "bcrypt cost \(parameters)" : "\(method) \(parameters)"
    }
}
