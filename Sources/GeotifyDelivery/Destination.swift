import Foundation

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

    /// The secrets the destination holds.
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

    /// What to blank out of anything a service answers: each secret in every form the
    /// destination sends it in (`Secret.redactionForms`), and the composite forms: ntfy's
    /// Basic credential (base64 of `user:password`), Pushover's form encoding, and the
    /// base64 of an SMTP login (AUTH LOGIN's password, AUTH PLAIN's `\0user\0password`).
    /// A base64 form is blanked with and without its `=` padding.
    package var redaction: Redaction {
        var forms = secrets.flatMap(\.redactionForms)
        switch self {
        case .ntfy(let ntfy):
            if let credential = ntfy.basicCredential, let password = ntfy.password {
                forms += Destination.base64Forms(credential, replacement: password.description)
            }
        case .pushover(let pushover):
            forms += [pushover.token, pushover.user].map { Redaction.Form(PushoverDestination.formEncoded($0.value), replacement: $0.description) }
        case .email(let email):
            if let password = email.password {
                let plain = "\0\(email.username ?? "")\0\(password.value)"
                for login in [password.value, plain] {
                    forms += Destination.base64Forms(Data(login.utf8).base64EncodedString(), replacement: password.description)
                }
            }
        case .webhook, .gotify, .telegram:
            break
        }
        return Redaction(forms)
    }

    /// Base64 `text` with and without its `=` padding, to be replaced by `replacement`.
    private static func base64Forms(_ text: String, replacement: String) -> [Redaction.Form] {
        [text, String(text.reversed().drop { $0 == "=" }.reversed())].map { Redaction.Form($0, replacement: replacement) }
    }
}
