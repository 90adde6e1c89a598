import GeotifyHTTP

/// Who an OwnTracks HTTP-mode post is from: the user and device whose topic
/// `owntracks/<user>/<device>` it stands for, found as the OwnTracks Recorder finds them.
///
/// The Recorder takes `X-Limit-U` / `X-Limit-D` (what the apps send), else the `u` / `d`
/// query parameters, else `owntracks` / `phone`. With a login, the user defaults to the
/// login's name and may not be another user's: a tracker credential posts only for its
/// own devices (as mosquitto's `pattern write owntracks/%u/#`). Each part must be one
/// topic level. Unlike the Recorder, names keep their case, as MQTT topics do. Pure.
package struct OwnTracksSender: Sendable, Equatable {
    package var user: String
    package var device: String

    package init(user: String, device: String) {
        self.user = user
        self.device = device
    }

    /// The sender of `request` made by `login`, or the refusal.
    package init(request: HTTPRequest, login: HTTPUser) throws(ConsoleRefusal) {
        let named = request.header("x-limit-u") ?? request.query["u"]
        let user: String
        if let login = login.name {
            if let named, named != login {
                throw ConsoleRefusal(.notAllowed, "user \"\(login)\" may not post for user \"\(named)\"")
            }
            user = login
        } else {
            user = named ?? "owntracks"
        }
        let device = request.header("x-limit-d") ?? request.query["d"] ?? "phone"
        for (what, value) in [("user", user), ("device", device)] {
            if value.isEmpty || value.unicodeScalars.contains(where: { "/+#".unicodeScalars.contains($0) || $0.value < 0x20 || $0.value == 0x7F }) {
                throw ConsoleRefusal(.invalidTopic, "the \(what) \"\(value)\" must be one topic level (no /, +, # or control characters)")
            }
        }
        self.user = user
        self.device = device
    }
}
