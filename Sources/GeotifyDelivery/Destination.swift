/// Where a target's notifications go and in which service's terms: one case per target
/// type of the settings.
package enum Destination: Sendable, Equatable {
    case webhook(WebhookDestination)
    case ntfy(NtfyDestination)
    case gotify(GotifyDestination)
    case pushover(PushoverDestination)
    case telegram(TelegramDestination)
    case email(EmailDestination)

    /// The type's name in the settings.
    package var type: String {
        switch self {
        case .webhook: "webhook"
        case .ntfy: "ntfy"
        case .gotify: "gotify"
        case .pushover: "pushover"
        case .telegram: "telegram"
        case .email: "email"
        }
    }

    /// The secrets the destination holds, to blank out of anything a service answers.
    package var secrets: [Secret] {
        switch self {
        case .webhook(let webhook): [webhook.secret]
        case .ntfy(let ntfy): [ntfy.token, ntfy.password].compactMap { $0 }
        case .gotify(let gotify): [gotify.token]
        case .pushover(let pushover): [pushover.token, pushover.user]
        case .telegram(let telegram): [telegram.token]
        case .email(let email): [email.password].compactMap { $0 }
        }
    }
}
