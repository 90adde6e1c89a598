import Foundation
@testable import GeotifyDelivery
import GeotifyJSON
import Testing

/// Each service's request, built without I/O, as its API documentation describes it.
@Suite("Requests per service")
struct DestinationRequestTests {
    let event: DeliveryEvent
    let content = MessageContent(title: "Alice entered home", body: "Welcome home")
    let token = Secret(value: "tk_abc123", source: "env TOKEN")

    init() throws {
        event = try Samples.event()
    }

    @Test func aWebhookPostsTheNotificationJSONWithIdempotencyKeyAndSignature() throws {
        let request = try #require(WebhookDestination(url: "https://example.com/hook", secret: Samples.secret).request(for: event, at: 1_700_000_123.9))
        #expect(request.url == "https://example.com/hook")
        #expect(request.body == event.payload)
        #expect(request.header("content-type") == "application/json")
        #expect(request.header("Idempotency-Key") == "alice/phone/home/enter/1700000000")
        let mac = try #require(Digest.hmacSHA256(key: Array(Samples.secret.value.utf8), message: Array("1700000123.".utf8) + event.payload))
        #expect(request.header("Geotify-Signature") == "t=1700000123,v1=\(Digest.hex(mac))")
    }

    @Test func anIdempotencyKeyCannotBreakTheHeader() {
        #expect(HTTPRequest.headerValue("a/b c") == "a/b c")
        #expect(HTTPRequest.headerValue("x\r\nEvil: 1") == "x%0D%0AEvil: 1")
        #expect(HTTPRequest.headerValue("café 100%") == "caf%C3%A9 100%25")
    }

    @Test func ntfyPublishesJSONToTheRootURLWithABearerToken() throws {
        let ntfy = NtfyDestination(url: "https://ntfy.example.com", topic: "kids", token: token, username: nil, password: nil, priority: 4, tags: ["round_pushpin"])
        let request = ntfy.request(for: content)
        #expect(request.url == "https://ntfy.example.com/")
        #expect(request.header("Authorization") == "Bearer tk_abc123")
        #expect(String(decoding: request.body, as: UTF8.self)
            == #"{"topic":"kids","title":"Alice entered home","message":"Welcome home","priority":4,"tags":["round_pushpin"]}"#)
        let basic = NtfyDestination(url: "https://ntfy.sh/", topic: "kids", token: nil, username: "phil", password: Secret(value: "mypass", source: "env P"), priority: nil, tags: [])
        #expect(basic.request(for: content).url == "https://ntfy.sh/")
        #expect(basic.request(for: content).header("Authorization") == "Basic cGhpbDpteXBhc3M=")
        #expect(String(decoding: basic.request(for: content).body, as: UTF8.self) == #"{"topic":"kids","title":"Alice entered home","message":"Welcome home"}"#)
    }

    @Test func gotifyPostsToMessageWithTheAppTokenHeader() {
        let request = GotifyDestination(url: "https://gotify.example.com/", token: token, priority: 5).request(for: content)
        #expect(request.url == "https://gotify.example.com/message")
        #expect(request.header("X-Gotify-Key") == "tk_abc123")
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"title":"Alice entered home","message":"Welcome home","priority":5}"#)
    }

    @Test func pushoverPostsAFormWithTokenUserAndTheFixTime() {
        let pushover = PushoverDestination(
            url: PushoverDestination.defaultURL, token: token, user: Secret(value: "uQiRzpo4DXghDmr9QzzfQu27cmVRsG", source: "env U"),
            priority: 1, sound: "siren", device: nil)
        let request = pushover.request(for: MessageContent(title: "Alice & Bob", body: "Ça va? 100%"), event: event)
        #expect(request.url == "https://api.pushover.net/1/messages.json")
        #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(String(decoding: request.body, as: UTF8.self)
            == "token=tk_abc123&user=uQiRzpo4DXghDmr9QzzfQu27cmVRsG&title=Alice+%26+Bob&message=%C3%87a+va%3F+100%25&timestamp=1700000000&priority=1&sound=siren")
        let long = pushover.request(for: MessageContent(title: String(repeating: "t", count: 300), body: String(repeating: "m", count: 2000)), event: event)
        let fields = String(decoding: long.body, as: UTF8.self).split(separator: "&")
        #expect(fields.first { $0.hasPrefix("title=") }?.count == "title=".count + 249 + "%E2%80%A6".count)
        #expect(fields.first { $0.hasPrefix("message=") }?.count == "message=".count + 1023 + "%E2%80%A6".count)
    }

    @Test func telegramSendsTitleAndBodyAsOneText() {
        let telegram = TelegramDestination(url: TelegramDestination.defaultURL, token: Secret(value: "123:ABC", source: "env T"), chat: .number(-1001234), silent: true)
        let request = telegram.request(for: content)
        #expect(request.url == "https://api.telegram.org/bot123:ABC/sendMessage")
        #expect(String(decoding: request.body, as: UTF8.self)
            == #"{"chat_id":-1001234,"text":"Alice entered home\nWelcome home","disable_notification":true}"#)
        let channel = TelegramDestination(url: "http://127.0.0.1:8081/", token: Secret(value: "1:X", source: "env T"), chat: .string("@geofences"), silent: false)
        #expect(channel.request(for: content).url == "http://127.0.0.1:8081/bot1:X/sendMessage")
        #expect(String(decoding: channel.request(for: content).body, as: UTF8.self).hasPrefix(#"{"chat_id":"@geofences","#))
    }

    @Test func anEmailIsUTF8WithAStableMessageID() throws {
        let email = EmailDestination(
            url: "smtp://mail.example.com:587", security: .startTLS, username: "geotify", password: token,
            from: "geotify@example.com", to: ["alice@example.com", "bob@example.com"])
        let message = email.message(for: MessageContent(title: "Alice a quitté l’école", body: "Ça y est\nà bientôt"), event: event, target: "family", at: 1_700_000_060)
        #expect(message.from == "geotify@example.com")
        #expect(message.recipients == ["alice@example.com", "bob@example.com"])
        let text = String(decoding: message.data, as: UTF8.self)
        let (head, body) = try #require(text.split(separator: "\r\n\r\n", maxSplits: 1).map(String.init).pair)
        let headers = head.components(separatedBy: "\r\n")
        #expect(headers[0] == "Date: Tue, 14 Nov 2023 22:14:20 +0000")
        #expect(headers[1] == "From: <geotify@example.com>")
        #expect(headers[2] == "To: <alice@example.com>, <bob@example.com>")
        #expect(headers[3] == "Subject: =?UTF-8?B?\(Data("Alice a quitté l’école".utf8).base64EncodedString())?=")
        #expect(headers.contains("Content-Type: text/plain; charset=utf-8"))
        #expect(headers.contains("Content-Transfer-Encoding: base64"))
        #expect(Data(base64Encoded: body.replacingOccurrences(of: "\r\n", with: "")) == Data("Ça y est\nà bientôt".utf8))
        let again = email.message(for: content, event: event, target: "family", at: 1_700_009_999)
        let messageID = { (data: [UInt8]) in String(decoding: data, as: UTF8.self).components(separatedBy: "\r\n").first { $0.hasPrefix("Message-ID:") } }
        #expect(messageID(again.data) == messageID(message.data))
        #expect(messageID(message.data)?.hasSuffix(".family@geotify>") == true)
    }

    @Test func anEmailSubjectCannotInjectHeaders() {
        let message = EmailDestination(url: "smtp://m:25", security: .none, username: nil, password: nil, from: "a@b.c", to: ["d@e.f"])
            .message(for: MessageContent(title: "Hi\r\nBcc: victim@example.com", body: "x"), event: event, target: "t", at: 0)
        let headers = String(decoding: message.data, as: UTF8.self).components(separatedBy: "\r\n")
        #expect(headers.contains("Subject: Hi Bcc: victim@example.com"))
        #expect(!headers.contains { $0.hasPrefix("Bcc:") })
    }

    @Test func aLongNonASCIISubjectIsFoldedIntoShortEncodedWords() {
        let subject = EmailDestination.encodedHeader(String(repeating: "é", count: 60))
        let words = subject.components(separatedBy: "\r\n ")
        #expect(words.count == 3)
        #expect(words.allSatisfy { $0.hasPrefix("=?UTF-8?B?") && $0.hasSuffix("?=") && $0.count <= 75 })
    }
}

extension Array where Element == String {
    /// The two elements of a two-element array.
    fileprivate var pair: (String, String)? { count == 2 ? (self[0], self[1]) : nil }
}
