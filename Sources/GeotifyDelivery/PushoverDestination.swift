import Foundation

/// A `pushover` target: a form POST to Pushover's messages API with the application's
/// token and the user (or group) key, the fix's time as the message's `timestamp`.
/// Pushover refuses titles over 250 and messages over 1024 characters, so longer ones are
/// cut; it asks clients not to retry a 4xx, which `AttemptOutcome` does not (but 429).
package struct PushoverDestination: Sendable, Equatable {
    /// `https://api.pushover.net/1/messages.json` unless the settings say otherwise.
    package var url: String
    /// The application's API token.
    package var token: Secret
    /// The user or group key.
    package var user: Secret
    /// -2 to 1 (2, emergency, needs acknowledgement settings Geotify does not have).
    package var priority: Int?
    package var sound: String?
    /// Only this device of the user, instead of all.
    package var device: String?

    package static let defaultURL = "https://api.pushover.net/1/messages.json"
    package static let titleLimit = 250
    package static let messageLimit = 1024

    package init(url: String, token: Secret, user: Secret, priority: Int?, sound: String?, device: String?) {
        self.url = url
        self.token = token
        self.user = user
        self.priority = priority
        self.sound = sound
        self.device = device
    }

    package func request(for content: MessageContent, event: DeliveryEvent) -> HTTPRequest {
        var fields = [
            ("token", token.value), ("user", user.value),
            ("title", MessageContent.truncated(content.title, to: PushoverDestination.titleLimit)),
            ("message", MessageContent.truncated(content.body, to: PushoverDestination.messageLimit)),
            ("timestamp", String(Int64(max(0, min(event.timestamp, 1e12)).rounded(.down)))),
        ]
        if let priority { fields.append(("priority", String(priority))) }
        if let sound { fields.append(("sound", sound)) }
        if let device { fields.append(("device", device)) }
        let body = fields.map { "\(PushoverDestination.formEncoded($0.0))=\(PushoverDestination.formEncoded($0.1))" }.joined(separator: "&")
        return HTTPRequest(url: url, headers: [.init("Content-Type", "application/x-www-form-urlencoded")], body: Array(body.utf8))
    }

    /// `text` encoded for an `application/x-www-form-urlencoded` body: letters, digits and
    /// `*-._` as they are, a space as `+`, every other byte as `%XX`.
    static func formEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                out += "+"
            default:
                out += "%" + Digest.hex([byte]).uppercased()
            }
        }
        return out
    }
}
