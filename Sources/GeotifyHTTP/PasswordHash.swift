import CCrypt

/// Checks a password against a crypt(3) hash with libcrypt's `crypt_r`: the hash names
/// its own method, salt and cost (`$2y$05$...` is bcrypt at cost 5), so files made by
/// `htpasswd -B` or `mkpasswd -m yescrypt` work as they are.
package enum PasswordHash {
    /// Whether `password` hashes to `hash`; false for a hash libcrypt does not know. The
    /// comparison takes the same time wherever the hashes differ.
    package static func verify(_ password: String, against hash: String) -> Bool {
        var data = crypt_data()
        guard let result = crypt_r(password, hash, &data) else { return false }
        let computed = Array(String(cString: result).utf8)
        let expected = Array(hash.utf8)
        guard computed.count == expected.count, computed.first != UInt8(ascii: "*") else { return false }
        var difference: UInt8 = 0
        for index in computed.indices {
            difference |= computed[index] ^ expected[index]
        }
        return difference == 0
    }

    /// A bcrypt hash of a fixed password, checked for unknown users when no user has a
    /// hash to check against instead (`Authenticator.decoy(for:)` prefers a user's own,
    /// so a wrong user name costs what a wrong password costs).
    package static let decoy = "$2y$05$d3xWSPAaQV77jBRR2V9DDOIygq/lggmatpi3c1T9QwYYO0hj/foXq"
}
