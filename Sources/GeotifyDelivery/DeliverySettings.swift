import Foundation
import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// The `notify` part of the settings file: the targets notifications are delivered to.
///
/// ```json
/// "notify": {
///   "retryFor": 86400,
///   "maximumDeadLetters": 1000,
///   "targets": [
///     {"name": "parents", "type": "ntfy", "topic": "kids-school-7f3a", "devices": ["alice/#"],
///      "fences": ["school"], "events": ["enter"], "token": {"env": "NTFY_TOKEN"}}
///   ]
/// }
/// ```
///
/// Every value is checked, and every secret read, when the settings load: a target that
/// cannot work is refused at startup with the file, the target and the key, instead of
/// failing at its first delivery. docs/notifications.md describes each type's keys.
package struct DeliverySettings: Sendable, Equatable {
    package var targets: [Target] = []

    package init(targets: [Target] = []) {
        self.targets = targets
    }

    /// The keys of the `notify` object.
    package static let keys = ["retryFor"] + boundKeys + ["targets"]
    /// The keys of a `DeliveryBound`, taken by the `notify` object and by each target.
    package static let boundKeys = boundFields.map(\.key)
    /// Each `DeliveryBound` key and the field it sets: the one list the keys and the
    /// reading come from.
    private static let boundFields: [(key: String, set: @Sendable (inout DeliveryBound, Int) -> Void)] = [
        ("maximumQueued", { $0.maximumQueued = $1 }),
        ("maximumQueuedPerDevice", { $0.maximumQueuedPerDevice = $1 }),
        ("maximumDeadLetters", { $0.maximumDeadLetters = $1 }),
    ]
    /// The keys every target takes.
    package static let commonKeys = [
        "name", "type", "devices", "fences", "events", "title", "body", "concurrency", "rateLimit", "timeout", "caFile", "retryFor",
    ] + boundKeys
    /// The keys of each type, besides the common ones.
    package static let typeKeys: [String: [String]] = [
        "webhook": ["url", "secret"],
        "ntfy": ["url", "topic", "token", "username", "password", "priority", "tags"],
        "gotify": ["url", "token", "priority"],
        "pushover": ["url", "token", "user", "priority", "sound", "device"],
        "telegram": ["url", "token", "chat", "silent"],
        "email": ["url", "tls", "username", "password", "from", "to"],
    ]
    /// The longest retry window: 30 days.
    package static let longestRetryWindow: Double = 30 * 86_400
    /// The largest value of each of the `DeliveryBound` keys.
    package static let largestBound = 10_000_000

    /// Reads the value of the `notify` key of the settings file `file`; relative paths
    /// (secret files, `caFile`) are relative to the file; secrets named by environment
    /// variable are looked up in `environment`.
    package init(parsing value: JSON, file: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(DeliverySettingsError) {
        guard case .object(let object) = value else {
            throw DeliverySettingsError("\(file): notify must be an object like {\"targets\": [...]}, not \(value.kindDescription)")
        }
        let notify = SettingsObject(object: object, file: file, place: "notify")
        try notify.checkKeys(DeliverySettings.keys)
        let retryFor = try notify.number("retryFor", in: 0...DeliverySettings.longestRetryWindow) ?? 86_400
        let bound = try DeliverySettings.bound(notify, default: DeliveryBound())
        guard let list = object["targets"] else { return }
        guard case .array(let items) = list else {
            throw DeliverySettingsError("\(file): notify.targets must be an array of targets, not \(list.kindDescription)")
        }
        var names = Set<String>()
        for (index, item) in items.enumerated() {
            guard case .object(let target) = item else {
                throw DeliverySettingsError("\(file): notify.targets[\(index)] must be an object, not \(item.kindDescription)")
            }
            let name = target["name"]?.stringValue.map { " (\"\($0)\")" } ?? ""
            let reader = SettingsObject(object: target, file: file, place: "notify.targets[\(index)]\(name)")
            let parsed = try DeliverySettings.target(reader, retryFor: retryFor, bound: bound, environment: environment)
            guard names.insert(parsed.name).inserted else {
                throw DeliverySettingsError("\(file): notify.targets[\(index)]: another target is already named \"\(parsed.name)\"")
            }
            targets.append(parsed)
        }
    }

    /// Reads the `notify` key of the settings file at `path` (no targets when it has
    /// none), leaving the other keys to `Settings`.
    package static func load(settingsFile path: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(DeliverySettingsError) -> DeliverySettings {
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, within: .settings)
        } catch {
            throw DeliverySettingsError("\(path): cannot read the settings file: \(error.reason)")
        }
        guard let bytes else { throw DeliverySettingsError("\(path): cannot read the settings file: no such file") }
        let json: JSON
        do {
            json = try JSONParser().parse(bytes)
        } catch {
            throw DeliverySettingsError("\(path):\(error.line): not valid JSON: \(error.reason) (column \(error.column))")
        }
        guard let notify = json["notify"] else { return DeliverySettings() }
        return try DeliverySettings(parsing: notify, file: path, environment: environment)
    }

    private static func target(
        _ reader: SettingsObject, retryFor: Double, bound: DeliveryBound, environment: [String: String]
    ) throws(DeliverySettingsError) -> Target {
        let type = try reader.requiredString("type")
        guard let keys = typeKeys[type] else {
            throw reader.error("type", "must be one of \(typeKeys.keys.sorted().joined(separator: ", ")), not \"\(type)\"")
        }
        try reader.checkKeys(commonKeys + keys)
        let name = try reader.requiredString("name")
        guard name != "all", name.utf8.allSatisfy({ isNameByte($0) }), name.utf8.count <= 64 else {
            throw reader.error("name", "must be 1 to 64 letters, digits, '.', '_' or '-', and not \"all\" (which `geotify notify retry` means every target by), not \"\(name)\"")
        }
        var target = Target(name: name, destination: try destination(type, reader, environment: environment))
        target.filter = try filter(reader)
        if let title = try reader.string("title") { target.title = try template(title, "title", reader) }
        if let body = try reader.string("body") { target.body = try template(body, "body", reader) }
        if case .webhook = target.destination, reader.object["title"] != nil || reader.object["body"] != nil {
            throw DeliverySettingsError("\(reader.file): \(reader.place): a webhook posts the notification JSON; \"title\" and \"body\" do not apply")
        }
        if let concurrency = try reader.integer("concurrency", in: 1...64) { target.limits.concurrency = concurrency }
        if let rate = try reader.nested("rateLimit") {
            try rate.checkKeys(["requests", "seconds"])
            guard let requests = try rate.integer("requests", in: 1...100_000), let seconds = try rate.number("seconds", in: 0.001...86_400) else {
                throw DeliverySettingsError("\(reader.file): \(reader.place).rateLimit needs \"requests\" and \"seconds\", like {\"requests\": 30, \"seconds\": 60}")
            }
            target.limits.rate = RateLimit(requests: requests, seconds: seconds)
        }
        if let timeout = try reader.number("timeout", in: 0.1...600) { target.timeout = timeout }
        if let caFile = try reader.path("caFile") {
            // Read as every file an operator names is, so a FIFO or a device is refused
            // here, not left for libcurl to block on in a delivery.
            let read: [UInt8]?
            do {
                read = try AtomicFile.read(caFile, within: .certificate)
            } catch {
                throw reader.error("caFile", "cannot be read: \(caFile): \(error.reason)")
            }
            guard read != nil else { throw reader.error("caFile", "cannot be read: \(caFile): no such file") }
            target.caFile = caFile
        }
        target.retryFor = try reader.number("retryFor", in: 0...longestRetryWindow) ?? retryFor
        target.bound = try DeliverySettings.bound(reader, default: bound)
        return target
    }

    /// The `DeliveryBound` keys of `reader` (the `notify` object or a target), each
    /// `default`'s where left out.
    private static func bound(_ reader: SettingsObject, default bound: DeliveryBound) throws(DeliverySettingsError) -> DeliveryBound {
        var bound = bound
        let range = 1...largestBound
        for field in boundFields {
            if let maximum = try reader.integer(field.key, in: range) { field.set(&bound, maximum) }
        }
        return bound
    }

    private static func filter(_ reader: SettingsObject) throws(DeliverySettingsError) -> TargetFilter {
        var filter = TargetFilter()
        for pattern in try reader.strings("devices") ?? [] {
            do {
                filter.devices.append(try DeviceFilter(pattern))
            } catch {
                throw reader.error("devices", "has a bad filter: \(error.message)")
            }
        }
        if let fences = try reader.strings("fences") { filter.fences = Set(fences) }
        if let events = try reader.strings("events") {
            var kinds = Set<TransitionKind>()
            for event in events {
                guard let kind = TransitionKind(rawValue: event) else {
                    throw reader.error("events", "may hold enter, exit and dwell, not \"\(event)\"")
                }
                kinds.insert(kind)
            }
            guard !kinds.isEmpty else { throw reader.error("events", "must name at least one of enter, exit, dwell (leave it out for all)") }
            filter.events = kinds
        }
        return filter
    }

    private static func template(_ source: String, _ key: String, _ reader: SettingsObject) throws(DeliverySettingsError) -> MessageTemplate {
        do {
            return try MessageTemplate(source)
        } catch {
            throw reader.error(key, "is not a valid template: \(error.message)")
        }
    }

    private static func destination(_ type: String, _ reader: SettingsObject, environment: [String: String]) throws(DeliverySettingsError) -> Destination {
        switch type {
        case "webhook":
            return .webhook(WebhookDestination(url: try reader.httpURL("url"), secret: try reader.requiredSecret("secret", environment: environment)))
        case "ntfy":
            let token = try reader.secret("token", environment: environment)
            if let token { _ = try headerToken(token, "token", reader) }
            let username = try reader.string("username")
            if let username, username.unicodeScalars.contains(where: { $0 == ":" || $0.properties.generalCategory == .control }) {
                throw reader.error("username", "cannot hold ':' or control characters (it is sent as user:password in a Basic credential), not \"\(username)\"")
            }
            let password = try reader.secret("password", environment: environment)
            guard (username == nil) == (password == nil) else {
                throw DeliverySettingsError("\(reader.file): \(reader.place): \"username\" and \"password\" go together")
            }
            guard token == nil || username == nil else {
                throw DeliverySettingsError("\(reader.file): \(reader.place): give \"token\" or \"username\" and \"password\", not both")
            }
            return .ntfy(NtfyDestination(
                url: try reader.httpURL("url", default: "https://ntfy.sh"), topic: try topic(reader), token: token,
                username: username, password: password, priority: try reader.integer("priority", in: 1...5),
                tags: try reader.strings("tags") ?? []))
        case "gotify":
            return .gotify(GotifyDestination(
                url: try reader.httpURL("url"), token: try headerToken(reader.requiredSecret("token", environment: environment), "token", reader),
                priority: try reader.integer("priority", in: 0...10)))
        case "pushover":
            return .pushover(PushoverDestination(
                url: try reader.httpURL("url", default: PushoverDestination.defaultURL),
                token: try reader.requiredSecret("token", environment: environment),
                user: try reader.requiredSecret("user", environment: environment),
                priority: try reader.integer("priority", in: -2...1), sound: try reader.string("sound"), device: try reader.string("device")))
        case "telegram":
            return .telegram(TelegramDestination(
                url: try reader.httpURL("url", default: TelegramDestination.defaultURL),
                token: try telegramToken(reader.requiredSecret("token", environment: environment), reader), chat: try chat(reader),
                silent: try reader.bool("silent") ?? false))
        default:
            return .email(try email(reader, environment: environment))
        }
    }

    /// `token` when it is a Telegram bot token, `<digits>:<letters, digits, '_' or '-'>` as
    /// BotFather gives it: it goes into the path of every request's URL unescaped, so
    /// anything else (a space, a '/') would make every delivery fail. The message names
    /// the secret's source, never its value.
    private static func telegramToken(_ token: Secret, _ reader: SettingsObject) throws(DeliverySettingsError) -> Secret {
        let parts = token.value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
              parts[0].utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              parts[1].utf8.allSatisfy({ isNameByte($0) && $0 != UInt8(ascii: ".") })
        else {
            throw reader.error("token", "(\(token)) is not a Telegram bot token: it must be digits, ':' and letters, digits, '_' or '-' (123456:ABC-def_1), as BotFather gives it")
        }
        return token
    }

    /// `token` when it can be sent in a header as it is: printable ASCII without spaces
    /// (an access token's form); a line break from an environment variable would
    /// otherwise end the header. The message names the secret's source, never its value.
    private static func headerToken(_ token: Secret, _ key: String, _ reader: SettingsObject) throws(DeliverySettingsError) -> Secret {
        guard token.value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw reader.error(key, "(\(token)) must be printable ASCII without spaces: it is sent in a request header as it is")
        }
        return token
    }

    private static func topic(_ reader: SettingsObject) throws(DeliverySettingsError) -> String {
        let topic = try reader.requiredString("topic")
        guard topic.utf8.count <= 64, topic.utf8.allSatisfy({ isNameByte($0) && $0 != UInt8(ascii: ".") }) else {
            throw reader.error("topic", "must be 1 to 64 letters, digits, '_' or '-' (ntfy's topic names), not \"\(topic)\"")
        }
        return topic
    }

    private static func chat(_ reader: SettingsObject) throws(DeliverySettingsError) -> JSON {
        switch reader.object["chat"] {
        case .number(let id) where id == id.rounded() && abs(id) < 1e15:
            return .number(id)
        case .string(let username) where username.hasPrefix("@") && username.count > 1 && username.utf8.allSatisfy({ $0 == UInt8(ascii: "@") || isNameByte($0) }):
            return .string(username)
        case nil:
            throw DeliverySettingsError("\(reader.file): \(reader.place) needs \"chat\": a chat id (a number) or @channelusername")
        case let value?:
            throw reader.error("chat", "must be a chat id (a whole number) or @channelusername, not \(JSONWriter().string(value))")
        }
    }

    private static func email(_ reader: SettingsObject, environment: [String: String]) throws(DeliverySettingsError) -> EmailDestination {
        let url = try reader.requiredString("url")
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "smtp" || scheme == "smtps", let host = components.host, !host.isEmpty
        else { throw reader.error("url", "must be smtp://HOST:PORT (STARTTLS) or smtps://HOST:PORT (TLS), not \"\(url)\"") }
        var security: MailMessage.Security = scheme == "smtps" ? .implicitTLS : .startTLS
        switch (scheme, try reader.string("tls")) {
        case (_, nil), ("smtp", "starttls"), ("smtps", "implicit"):
            break
        case ("smtp", "none"):
            security = .none
        case (_, let tls?):
            throw reader.error("tls", "must be \(scheme == "smtp" ? "starttls (the default) or none" : "implicit (the default) with smtps://"), not \"\(tls)\"")
        }
        let username = try reader.string("username")
        let password = try reader.secret("password", environment: environment)
        guard (username == nil) == (password == nil) else {
            throw DeliverySettingsError("\(reader.file): \(reader.place): \"username\" and \"password\" go together")
        }
        guard security != .none || password == nil else {
            throw reader.error("tls", "cannot be none with a password: it would cross the network in the clear")
        }
        let from = try address(try reader.requiredString("from"), "from", reader)
        guard let recipients = try reader.strings("to"), !recipients.isEmpty else {
            throw DeliverySettingsError("\(reader.file): \(reader.place) needs \"to\": an array of one or more addresses")
        }
        var to: [String] = []
        for recipient in recipients { to.append(try address(recipient, "to", reader)) }
        return EmailDestination(url: url, security: security, username: username, password: password, from: from, to: to)
    }

    /// A bare address (`name@example.com`): one `@` with text on both sides, no spaces,
    /// angle brackets or line breaks that could change the SMTP dialogue or the headers.
    private static func address(_ text: String, _ key: String, _ reader: SettingsObject) throws(DeliverySettingsError) -> String {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, text.utf8.count <= 254,
              !text.unicodeScalars.contains(where: { $0.properties.isWhitespace || "<>,;\"()".unicodeScalars.contains($0) || $0.value < 0x20 })
        else { throw reader.error(key, "must hold plain addresses like name@example.com, not \"\(text)\"") }
        return text
    }

    /// Letters, digits, `.`, `_` and `-`: what names and topics may be made of.
    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}
