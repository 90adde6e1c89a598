import GeotifyJSON

/// The web console's users: an Apache `htpasswd` file, `name:hash` per line, as
/// `htpasswd -B -c users alice` writes it (bcrypt), or any other crypt(3) hash libcrypt
/// verifies that is not weak.
///
/// Accepted: bcrypt (`$2y$`, `$2b$`, `$2a$`), yescrypt (`$y$`), scrypt (`$7$`),
/// gost-yescrypt (`$gy$`), SHA-512 and SHA-256 crypt (`$6$`, `$5$`). Refused, naming the
/// line: Apache's MD5 (`$apr1$`), MD5 crypt (`$1$`), SHA-1 (`{SHA}`), DES and plain
/// text, which are fast to crack or not hashes at all. Blank lines and `#` comments are
/// skipped, and a byte order mark at the start of the file. Parsing is pure: the file's text in, the users or every problem out.
package struct UsersFile: Sendable, Equatable {
    /// Each user's password hash.
    package var hashes: [String: String]

    /// The hash prefixes accepted: one per method `PasswordCost` knows.
    package static let strongPrefixes = PasswordCost.methods.map { "$\($0.identifier)$" }

    package init(hashes: [String: String]) {
        self.hashes = hashes
    }

    /// Reads `text`; `file` names it in errors, which list every bad line.
    package init(parsing text: String, file: String) throws(HTTPSettingsError) {
        var hashes: [String: String] = [:]
        var problems: [String] = []
        // A leading byte order mark would be part of the first user's name.
        let lines = ByteOrderMark.dropped(from: text).split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (index, line) in lines.enumerated() {
            if String(line).trimmingSpaces.isEmpty || line.hasPrefix("#") { continue }
            let where_ = "\(file):\(index + 1)"
            guard let colon = line.firstIndex(of: ":") else {
                problems.append("\(where_): not \"name:hash\"")
                continue
            }
            let name = String(line[..<colon])
            let hash = String(line[line.index(after: colon)...])
            if name.isEmpty {
                problems.append("\(where_): the user name is empty")
            } else if hashes[name] != nil {
                problems.append("\(where_): user \"\(name)\" appears twice")
            } else if !UsersFile.strongPrefixes.contains(where: hash.hasPrefix) {
                problems.append("\(where_): user \"\(name)\": \(UsersFile.describeWeak(hash)); make it with htpasswd -B")
            } else {
                hashes[name] = hash
            }
        }
        guard problems.isEmpty else { throw HTTPSettingsError(problems.joined(separator: "\n")) }
        self.hashes = hashes
    }

    /// A warning when the users' hashes do not all have one method and cost: a wrong
    /// password for a user with a cheaper hash is answered sooner than for one with a
    /// dearer hash, so timing tells the users apart (and an unknown user, checked against
    /// one of the hashes, apart from some of them). Nil when they are alike.
    package var costWarning: String? {
        var users: [PasswordCost: [String]] = [:]
        for (name, hash) in hashes {
            guard let cost = PasswordCost(hash: hash) else { continue }
            users[cost, default: []].append(name)
        }
        guard users.count > 1 else { return nil }
        let groups = users.map { cost, names in
            let sorted = names.sorted()
            let shown = sorted.prefix(3).joined(separator: ", ") + (sorted.count > 3 ? " and \(sorted.count - 3) more" : "")
            return "\(cost): \(shown)"
        }.sorted()
        let dearest = users.keys.filter { $0.method == "bcrypt" }.compactMap(\.level).max()
        let advice = dearest.map { "make them all with htpasswd -B -C \($0)" } ?? "make them all with one method and cost"
        return "the users' password hashes differ in method or cost (\(groups.joined(separator: "; "))): a wrong password for a user with a cheaper hash is answered sooner, which tells users apart by timing; \(advice)"
    }

    /// What a refused hash is, without repeating it.
    private static func describeWeak(_ hash: String) -> String {
        if hash.hasPrefix("$apr1$") { return "Apache MD5 ($apr1$) hashes are weak" }
        if hash.hasPrefix("$1$") { return "MD5 crypt ($1$) hashes are weak" }
        if hash.hasPrefix("{SHA}") { return "SHA-1 ({SHA}) hashes are weak" }
        if hash.isEmpty { return "the password hash is empty" }
        return "not a supported password hash (DES crypt or plain text?)"
    }
}
