import Foundation
import GeotifyCore
import GeotifyDelivery
import GeotifyJSON
import GeotifyStore
import GeotifyTestSupport
import Testing

@Suite("Notify settings")
struct DeliverySettingsTests {
    let environment = ["HOOK_SECRET": "whsec_1", "NTFY_TOKEN": "tk_1", "GOTIFY_TOKEN": "A1", "PUSHOVER_TOKEN": "a1", "PUSHOVER_USER": "u1", "TG_TOKEN": "1:X", "SMTP_PASSWORD": "pw", "EMPTY": "",
        "TG_SPACE": "123:abc def", "TG_SLASH": "123:abc/def", "TG_NO_ID": "abc", "NTFY_BREAK": "tk_1\r\nX-Evil: 1",
        "NTFY_SPACE": "tk 1"]

    func parse(_ text: String, file: String = "/etc/geotify/geotify.json") throws -> DeliverySettings {
        try DeliverySettings(parsing: try JSONParser().parse(text), file: file, environment: environment)
    }

    func refusal(_ text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch let error as DeliverySettingsError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func everyTypeReadsWithItsDefaults() throws {
        let settings = try parse("""
            {"retryFor": 3600, "targets": [
              {"name": "backend", "type": "webhook", "url": "https://example.com/hook", "secret": {"env": "HOOK_SECRET"},
               "devices": ["van/#"], "fences": ["depot"], "events": ["enter", "exit"], "concurrency": 4,
               "rateLimit": {"requests": 10, "seconds": 1}, "timeout": 5, "retryFor": 600},
              {"name": "phone", "type": "ntfy", "topic": "kids-7f3a", "token": {"env": "NTFY_TOKEN"}, "priority": 4, "tags": ["school"],
               "title": "{user|capitalized} {action} {fence}", "body": "{note} ({time})"},
              {"name": "gotify", "type": "gotify", "url": "http://gotify.lan", "token": {"env": "GOTIFY_TOKEN"}},
              {"name": "pushover", "type": "pushover", "token": {"env": "PUSHOVER_TOKEN"}, "user": {"env": "PUSHOVER_USER"}, "priority": -1},
              {"name": "telegram", "type": "telegram", "token": {"env": "TG_TOKEN"}, "chat": -1001234, "silent": true},
              {"name": "mail", "type": "email", "url": "smtp://mail.example.com:587", "username": "geotify", "password": {"env": "SMTP_PASSWORD"},
               "from": "geotify@example.com", "to": ["alice@example.com"]}
            ]}
            """)
        #expect(settings.targets.map(\.name) == ["backend", "phone", "gotify", "pushover", "telegram", "mail"])
        #expect(settings.targets.map(\.destination.type) == ["webhook", "ntfy", "gotify", "pushover", "telegram", "email"])
        let backend = settings.targets[0]
        #expect(backend.filter == TargetFilter(devices: [try DeviceFilter("van/#")], fences: ["depot"], events: [.enter, .exit]))
        #expect(backend.limits == TargetLimits(concurrency: 4, rate: RateLimit(requests: 10, seconds: 1)))
        #expect(backend.timeout == 5 && backend.retryFor == 600)
        #expect(backend.destination == .webhook(WebhookDestination(url: "https://example.com/hook", secret: Secret(value: "whsec_1", source: "env HOOK_SECRET"))))
        #expect(settings.targets[1].retryFor == 3600)
        #expect(settings.targets[1].body.source == "{note} ({time})")
        #expect(settings.targets[2].title == MessageTemplate.defaultTitle)
        #expect(settings.targets[2].timeout == 30, "docs/notifications.md's default")
        #expect(settings.targets[2].limits == TargetLimits(concurrency: 2, rate: nil))
        guard case .ntfy(let ntfy) = settings.targets[1].destination else { throw DeliverySettingsError("not ntfy") }
        #expect(ntfy.url == "https://ntfy.sh" && ntfy.topic == "kids-7f3a" && ntfy.priority == 4 && ntfy.tags == ["school"])
        guard case .pushover(let pushover) = settings.targets[3].destination else { throw DeliverySettingsError("not pushover") }
        #expect(pushover.url == PushoverDestination.defaultURL && pushover.priority == -1)
        guard case .telegram(let telegram) = settings.targets[4].destination else { throw DeliverySettingsError("not telegram") }
        #expect(telegram.chat == -1001234 && telegram.silent && telegram.url == TelegramDestination.defaultURL)
        let channel = try parse(#"{"targets": [{"name": "t", "type": "telegram", "token": {"env": "TG_TOKEN"}, "chat": "@geotify_alerts"}]}"#)
        guard case .telegram(let channelTarget)? = channel.targets.first?.destination else { throw DeliverySettingsError("not telegram") }
        #expect(channelTarget.chat == "@geotify_alerts" && !channelTarget.silent, "a public channel by its @username")
        guard case .email(let email) = settings.targets[5].destination else { throw DeliverySettingsError("not email") }
        #expect(email.security == .startTLS && email.username == "geotify" && email.to == ["alice@example.com"])
    }

    @Test func secretsComeFromFilesRelativeToTheSettings() throws {
        let directory = try makeTemporaryDirectory("notify-settings")
        try "s3cret\n".write(to: directory.appendingPathComponent("hook.secret"), atomically: true, encoding: .utf8)
        let settings = try parse(#"{"targets": [{"name": "h", "type": "webhook", "url": "http://x", "secret": {"file": "hook.secret"}}]}"#,
                                 file: directory.appendingPathComponent("geotify.json").path)
        guard case .webhook(let webhook) = settings.targets[0].destination else { throw DeliverySettingsError("not a webhook") }
        #expect(webhook.secret.value == "s3cret")
        #expect(webhook.secret.source == "file \(directory.appendingPathComponent("hook.secret").path)")
    }

    /// A secret file saved with a Windows line break keeps its last character: Swift
    /// reads `\r\n` as one character.
    @Test func aSecretFileWithAWindowsLineBreakKeepsItsLastCharacter() throws {
        let directory = try makeTemporaryDirectory("notify-settings")
        for (name, text) in [("crlf.secret", "s3cret\r\n"), ("lf.secret", "s3cret\n"), ("bare.secret", "s3cret")] {
            try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
            let settings = try parse(#"{"targets": [{"name": "h", "type": "webhook", "url": "http://x", "secret": {"file": "\#(name)"}}]}"#,
                                     file: directory.appendingPathComponent("geotify.json").path)
            guard case .webhook(let webhook) = settings.targets[0].destination else { throw DeliverySettingsError("not a webhook") }
            #expect(webhook.secret.value == "s3cret", "\(name)")
        }
    }

    @Test func noNotifySectionOrNoTargetsMeansNoTargets() throws {
        #expect(try parse("{}").targets.isEmpty)
        let directory = try makeTemporaryDirectory("notify-settings")
        let file = directory.appendingPathComponent("geotify.json")
        try #"{"broker": "mqtt://127.0.0.1:1883"}"#.write(to: file, atomically: true, encoding: .utf8)
        #expect(try DeliverySettings.load(settingsFile: file.path).targets.isEmpty)
    }

    /// A secret file saved with a byte order mark (Notepad) would send the mark as part of
    /// the token, and every delivery would be refused by the service.
    @Test func aByteOrderMarkAtTheStartOfASecretFileIsNotPartOfTheSecret() throws {
        let directory = try makeTemporaryDirectory("notify-secret")
        let path = directory.appendingPathComponent("token").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data("\u{FEFF}t0ken\n".utf8)))
        #expect(try Secret.file(path).value == "t0ken")
    }

    @Test func aSettingsFileOrSecretFileThatIsNotARegularFileIsRefusedUnread() throws {
        let directory = try makeTemporaryDirectory("notify-settings")
        let fifo = directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in ["/dev/null", fifo] {
            #expect {
                _ = try DeliverySettings.load(settingsFile: path)
            } throws: { error in
                "\(error)".contains("\(path): cannot read the settings file: not a regular file")
            }
            #expect {
                _ = try Secret.file(path)
            } throws: { error in
                "\(error)".contains("cannot read the file \(path): not a regular file")
            }
        }
    }

    /// A target's `caFile` was checked only to be readable (`access`), so a FIFO passed
    /// and libcurl blocked on it in the first delivery; it is now read as every file an
    /// operator names is, regular files only, within the certificate limit.
    @Test func aCAFileThatIsNotARegularFileIsRefusedUnread() throws {
        let directory = try makeTemporaryDirectory("notify-ca")
        let fifo = directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        for (path, kind) in [("/dev/null", "a character device"), (fifo, "a FIFO"), (directory.path, "a directory")] {
            #expect(refusal(#"{"targets": [{\#(Self.hook), "caFile": "\#(path)"}]}"#)
                == #"/etc/geotify/geotify.json: notify.targets[0] ("h").caFile cannot be read: \#(path): not a regular file (\#(kind)); only regular files are read"#)
        }
        let authorities = directory.appendingPathComponent("ca.pem").path
        #expect(FileManager.default.createFile(atPath: authorities, contents: Data("authorities".utf8)))
        let settings = try parse(#"{"targets": [{\#(Self.hook), "caFile": "\#(authorities)"}]}"#)
        #expect(settings.targets.first?.caFile == authorities)
    }

    @Test(arguments: [
        ("TG_SPACE", "telegram", "abc def"), ("TG_SLASH", "telegram", "abc/def"), ("TG_NO_ID", "telegram", "abc"),
        ("NTFY_BREAK", "ntfy", "X-Evil"), ("NTFY_BREAK", "gotify", "X-Evil"),
    ])
    func aTokenThatCannotGoInTheRequestAsItIsIsRefusedNamingTheTargetNotTheToken(variable: String, type: String, value: String) {
        let extra = switch type {
        case "telegram": #""chat": 1"#
        case "ntfy": #""topic": "t""#
        default: #""url": "http://g""#
        }
        let message = refusal(#"{"targets": [{"name": "x", "type": "\#(type)", "token": {"env": "\#(variable)"}, \#(extra)}]}"#)
        let expected = type == "telegram"
            ? #"notify.targets[0] ("x").token (<secret from env \#(variable)>) is not a Telegram bot token"#
            : #"notify.targets[0] ("x").token (<secret from env \#(variable)>) must be printable ASCII without spaces"#
        #expect(message?.contains(expected) == true, "\(message ?? "accepted")")
        #expect(message?.contains(value) == false)
    }

    @Test func anNtfyUserNameWithAColonIsRefused() {
        let message = refusal(#"{"targets": [{"name": "n", "type": "ntfy", "topic": "t", "username": "a:b", "password": {"env": "NTFY_TOKEN"}}]}"#)
        #expect(message?.contains(#"("n").username cannot hold ':' or control characters"#) == true, "\(message ?? "accepted")")
    }
    @Test func theBoundsComeFromTheTargetThenNotifyThenTheDefaults() throws {
        let settings = try parse("""
            {"maximumQueued": 5000, "maximumDeadLetters": 50, "targets": [
              {\(DeliverySettingsTests.hook), "maximumQueuedPerDevice": 20, "maximumDeadLetters": 7},
              {"name": "n", "type": "ntfy", "topic": "t"}
            ]}
            """)
        #expect(settings.targets[0].bound == DeliveryBound(maximumQueued: 5000, maximumQueuedPerDevice: 20, maximumDeadLetters: 7))
        #expect(settings.targets[1].bound == DeliveryBound(maximumQueued: 5000, maximumQueuedPerDevice: 1000, maximumDeadLetters: 50))
        #expect(try parse(#"{"targets": [{\#(DeliverySettingsTests.hook)}]}"#).targets[0].bound
            == DeliveryBound(maximumQueued: 100_000, maximumQueuedPerDevice: 1_000, maximumDeadLetters: 1_000))
    }

    static let hook = #""name": "h", "type": "webhook", "url": "http://x", "secret": {"env": "HOOK_SECRET"}"#

    /// Each limit's own edge is inside it: a name and an ntfy topic of 64 bytes, a rate of
    /// 100 000 requests in a day or one in a millisecond, a Telegram chat id just under
    /// 10^15, an address of 254 bytes (RFC 5321's path limit). Past each, the refusals
    /// below.
    @Test func theEdgesOfEachLimitAreAccepted() throws {
        let name = String(repeating: "n", count: 64)
        let topic = String(repeating: "t", count: 64)
        let address = String(repeating: "a", count: 64) + "@" + String(repeating: "b", count: 189)
        #expect(address.utf8.count == 254)
        let settings = try parse("""
            {"targets": [
              {"name": "\(name)", "type": "webhook", "url": "http://x", "secret": {"env": "HOOK_SECRET"},
               "rateLimit": {"requests": 100000, "seconds": 86400}},
              {"name": "fast", "type": "webhook", "url": "http://x", "secret": {"env": "HOOK_SECRET"},
               "rateLimit": {"requests": 1, "seconds": 0.001}},
              {"name": "n", "type": "ntfy", "topic": "\(topic)"},
              {"name": "t", "type": "telegram", "token": {"env": "TG_TOKEN"}, "chat": -999999999999999},
              {"name": "m", "type": "email", "url": "smtp://mail", "from": "\(address)", "to": ["\(address)"]}
            ]}
            """)
        #expect(settings.targets.map(\.name) == [name, "fast", "n", "t", "m"])
        #expect(settings.targets[0].limits.rate == RateLimit(requests: 100_000, seconds: 86_400))
        #expect(settings.targets[1].limits.rate == RateLimit(requests: 1, seconds: 0.001))
    }

    @Test(arguments: [
        (#"[]"#, "notify must be an object"),
        (#"{"target": []}"#, #"notify has an unknown key "target""#),
        (#"{"retryFor": -1}"#, "notify.retryFor must be from 0 to 2592000, not -1"),
        (#"{"targets": {}}"#, "notify.targets must be an array of targets, not an object"),
        (#"{"targets": [3]}"#, "notify.targets[0] must be an object, not a number"),
        (#"{"targets": [{"name": "x"}]}"#, #"notify.targets[0] ("x") needs "type""#),
        (#"{"targets": [{"name": "x", "type": "sms"}]}"#, #"notify.targets[0] ("x").type must be one of email, gotify, ntfy, pushover, telegram, webhook, not "sms""#),
        (#"{"targets": [{"type": "webhook", "url": "http://x", "secret": {"env": "HOOK_SECRET"}}]}"#, #"notify.targets[0] needs "name""#),
        (#"{"targets": [{"name": "all", "type": "webhook", "url": "http://x", "secret": {"env": "HOOK_SECRET"}}]}"#, #"("all").name must be 1 to 64 letters"#),
        (#"{"targets": [{"name": "a b", "type": "webhook", "url": "http://x", "secret": {"env": "HOOK_SECRET"}}]}"#, #".name must be 1 to 64 letters"#),
        (#"{"targets": [{\#(hook)}, {\#(hook)}]}"#, #"notify.targets[1]: another target is already named "h""#),
        (#"{"targets": [{\#(hook), "topic": "t"}]}"#, #"("h") has an unknown key "topic""#),
        (#"{"targets": [{\#(hook), "url": "http://y"}]}"#, #"("h") has the key "url" twice"#),
        (#"{"targets": [{"name": "h", "type": "webhook", "url": "ftp://x", "secret": {"env": "HOOK_SECRET"}}]}"#, #"("h").url must be an http:// or https:// URL with a host, not "ftp://x""#),
        (#"{"targets": [{"name": "h", "type": "webhook", "url": "http://x"}]}"#, #"("h") needs "secret" ({"file": PATH} or {"env": NAME})"#),
        (#"{"targets": [{"name": "h", "type": "webhook", "url": "http://x", "secret": "inline"}]}"#, "secrets are not written in the settings file"),
        (#"{"targets": [{"name": "h", "type": "webhook", "url": "http://x", "secret": {"env": "UNSET"}}]}"#, "the environment variable UNSET is not set"),
        (#"{"targets": [{"name": "h", "type": "webhook", "url": "http://x", "secret": {"env": "EMPTY"}}]}"#, "the environment variable EMPTY is empty"),
        (#"{"targets": [{"name": "h", "type": "webhook", "url": "http://x", "secret": {"file": "/nonexistent/secret"}}]}"#, "cannot read the file /nonexistent/secret"),
        (#"{"targets": [{\#(hook), "title": "x"}]}"#, #"a webhook posts the notification JSON; "title" and "body" do not apply"#),
        (#"{"targets": [{\#(hook), "devices": ["a/#/b"]}]}"#, #"("h").devices has a bad filter: in the device filter "a/#/b""#),
        (#"{"targets": [{\#(hook), "devices": "alice"}]}"#, #"("h").devices must be an array of strings, not a string"#),
        (#"{"targets": [{\#(hook), "fences": [""]}]}"#, #"("h").fences must hold only non-empty strings, not an empty one"#),
        (#"{"targets": [{\#(hook), "events": ["onEntry"]}]}"#, #"("h").events may hold enter, exit and dwell, not "onEntry""#),
        (#"{"targets": [{\#(hook), "events": []}]}"#, #"("h").events must name at least one"#),
        (#"{"targets": [{\#(hook), "concurrency": 0}]}"#, #"("h").concurrency must be a whole number from 1 to 64, not 0"#),
        (#"{"targets": [{\#(hook), "concurrency": 1.5}]}"#, #"("h").concurrency must be a whole number from 1 to 64, not 1.5"#),
        (#"{"targets": [{\#(hook), "rateLimit": {"requests": 5}}]}"#, #"("h").rateLimit needs "requests" and "seconds""#),
        (#"{"targets": [{\#(hook), "rateLimit": {"requests": 5, "seconds": 1, "burst": 2}}]}"#, #"("h").rateLimit has an unknown key "burst""#),
        (#"{"targets": [{\#(hook), "timeout": 0}]}"#, #"("h").timeout must be from 0.1 to 600, not 0"#),
        (#"{"targets": [{\#(hook), "caFile": "/nonexistent/ca.pem"}]}"#, #"("h").caFile cannot be read: /nonexistent/ca.pem"#),
        (#"{"targets": [{"name": "n", "type": "ntfy", "title": "{nope}", "topic": "t"}]}"#, #"("n").title is not a valid template: the template "{nope}" names an unknown field {nope}"#),
        (#"{"targets": [{"name": "n", "type": "ntfy"}]}"#, #"("n") needs "topic""#),
        (#"{"targets": [{"name": "n", "type": "ntfy", "topic": "a/b"}]}"#, #"("n").topic must be 1 to 64 letters, digits, '_' or '-'"#),
        (#"{"targets": [{"name": "n", "type": "ntfy", "topic": "t", "priority": 6}]}"#, #"("n").priority must be a whole number from 1 to 5, not 6"#),
        (#"{"targets": [{"name": "n", "type": "ntfy", "topic": "t", "username": "u"}]}"#, #""username" and "password" go together"#),
        (#"{"targets": [{"name": "n", "type": "ntfy", "topic": "t", "token": {"env": "NTFY_TOKEN"}, "username": "u", "password": {"env": "NTFY_TOKEN"}}]}"#, #"give "token" or "username" and "password", not both"#),
        (#"{"targets": [{"name": "g", "type": "gotify", "token": {"env": "GOTIFY_TOKEN"}}]}"#, #"("g") needs "url""#),
        (#"{"targets": [{"name": "g", "type": "gotify", "url": "http://g", "token": {"env": "GOTIFY_TOKEN"}, "priority": 11}]}"#, #"("g").priority must be a whole number from 0 to 10, not 11"#),
        (#"{"targets": [{"name": "p", "type": "pushover", "token": {"env": "PUSHOVER_TOKEN"}}]}"#, #"("p") needs "user""#),
        (#"{"targets": [{"name": "p", "type": "pushover", "token": {"env": "PUSHOVER_TOKEN"}, "user": {"env": "PUSHOVER_USER"}, "priority": 2}]}"#, #"("p").priority must be a whole number from -2 to 1, not 2"#),
        (#"{"targets": [{"name": "t", "type": "telegram", "token": {"env": "TG_TOKEN"}}]}"#, #"("t") needs "chat""#),
        (#"{"targets": [{"name": "t", "type": "telegram", "token": {"env": "TG_TOKEN"}, "chat": "friends"}]}"#, #"("t").chat must be a chat id (a whole number) or @channelusername, not "friends""#),
        (#"{"targets": [{"name": "t", "type": "telegram", "token": {"env": "TG_TOKEN"}, "chat": 1, "silent": "yes"}]}"#, #"("t").silent must be true or false, not a string"#),
        (#"{"targets": [{"name": "m", "type": "email", "url": "http://mail", "from": "a@b.c", "to": ["d@e.f"]}]}"#, #"("m").url must be smtp://HOST:PORT (STARTTLS) or smtps://HOST:PORT (TLS), not "http://mail""#),
        (#"{"targets": [{"name": "m", "type": "email", "url": "smtps://mail", "tls": "starttls", "from": "a@b.c", "to": ["d@e.f"]}]}"#, #"("m").tls must be implicit (the default) with smtps://, not "starttls""#),
        (#"{"targets": [{"name": "m", "type": "email", "url": "smtp://mail", "tls": "none", "username": "u", "password": {"env": "SMTP_PASSWORD"}, "from": "a@b.c", "to": ["d@e.f"]}]}"#, #"("m").tls cannot be none with a password"#),
        (#"{"targets": [{"name": "m", "type": "email", "url": "smtp://mail", "from": "a@b.c"}]}"#, #"("m") needs "to": an array of one or more addresses"#),
        (#"{"targets": [{"name": "m", "type": "email", "url": "smtp://mail", "username": "u", "from": "a@b.c", "to": ["d@e.f"]}]}"#, #"("m"): "username" and "password" go together"#),
        (#"{"targets": [{"name": "t", "type": "telegram", "token": {"env": "TG_TOKEN"}, "chat": "@"}]}"#, #"("t").chat must be a chat id (a whole number) or @channelusername, not "@""#),
        (#"{"targets": [{"name": "m", "type": "email", "url": "smtp://mail", "from": "a@b.c", "to": ["x@y.z>\r\nRCPT TO:<evil@example.com"]}]}"#, #"("m").to must hold plain addresses like name@example.com"#),
        (#"{"targets": [{"name": "m", "type": "email", "url": "smtp://mail", "from": "nobody", "to": ["d@e.f"]}]}"#, #"("m").from must hold plain addresses like name@example.com, not "nobody""#),
        (#"{"targets": [{\#(hook), "retryFor": 1e9}]}"#, #"("h").retryFor must be from 0 to 2592000, not 1000000000"#),
        (#"{"maximumQueued": 0}"#, "notify.maximumQueued must be a whole number from 1 to 10000000, not 0"),
        (#"{"targets": [{"name": "\#(String(repeating: "n", count: 65))", "type": "webhook", "url": "http://x", "secret": {"env": "HOOK_SECRET"}}]}"#, #".name must be 1 to 64 letters"#),
        (#"{"targets": [{\#(hook), "rateLimit": {"requests": 100001, "seconds": 1}}]}"#, "requests must be a whole number from 1 to 100000, not 100001"),
        (#"{"targets": [{"name": "n", "type": "ntfy", "topic": "\#(String(repeating: "t", count: 65))"}]}"#, #"("n").topic must be 1 to 64 letters"#),
        (#"{"targets": [{"name": "n", "type": "ntfy", "topic": "t", "token": {"env": "NTFY_SPACE"}}]}"#, #"("n").token (<secret from env NTFY_SPACE>) must be printable ASCII without spaces"#),
        (#"{"targets": [{"name": "t", "type": "telegram", "token": {"env": "TG_TOKEN"}, "chat": 1e15}]}"#, #"("t").chat must be a chat id (a whole number) or @channelusername, not 1000000000000000.0"#),
        (#"{"targets": [{"name": "m", "type": "email", "url": "smtp://mail", "from": "a@b.c", "to": ["\#(String(repeating: "a", count: 65))@\#(String(repeating: "b", count: 189))"]}]}"#, #"("m").to must hold plain addresses like name@example.com"#),
        (#"{"targets": [{\#(hook), "maximumQueuedPerDevice": 2.5}]}"#, #"("h").maximumQueuedPerDevice must be a whole number from 1 to 10000000, not 2.5"#),
        (#"{"targets": [{\#(hook), "maximumDeadLetters": 1e8}]}"#, #"("h").maximumDeadLetters must be a whole number from 1 to 10000000, not 100000000"#),
    ])
    func everyBadValueIsRefusedWithTheFileTheTargetAndTheKey(text: String, reason: String) {
        let message = refusal(text)
        #expect(message?.hasPrefix("/etc/geotify/geotify.json: ") == true, "\(message ?? "accepted")")
        #expect(message?.contains(reason) == true, "\(message ?? "accepted")")
    }
}
