import Foundation

/// A mosquitto password file (`password_file`) made with `mosquitto_passwd -b`, for tests
/// of username/password authentication. mosquitto reads it when it starts, so a test
/// changes a password and then restarts the broker, as an operator would.
package struct BrokerPasswordFile: Sendable {
    /// Where the file is.
    package let path: String

    /// Writes a file at `path` holding `users` (user name → password).
    package init(path: String, users: [String: String]) throws {
        self.path = path
        try Data().write(to: URL(fileURLWithPath: path))
        for (user, password) in users.sorted(by: { $0.key < $1.key }) {
            try set(user, password: password)
        }
    }

    /// Adds `user` with `password`, or changes the password of an existing one.
    package func set(_ user: String, password: String) throws {
        try runCommand("mosquitto_passwd", ["-b", path, user, password])
    }

    /// The mosquitto options that require a user name and password from this file, for
    /// `TestBroker(extraConfig:)`.
    package var brokerConfig: String {
        "allow_anonymous false\npassword_file \(path)\n"
    }
}
