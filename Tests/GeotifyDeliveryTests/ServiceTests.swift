import Foundation
import GeotifyDelivery
import GeotifyJSON
import GeotifyTestSupport
import Testing

/// Each type against a local server that speaks the service's API as documented: the
/// server checks the request the way the service would and answers as the service does.
@Suite("Delivery to local fake services", .waiting)
struct ServiceTests {
    let transport = CurlTransport()
    let payload = Samples.payload(Samples.notification())

    @Test func aWebhookArrivesSignedAndThePythonHMACAgrees() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let target = Samples.webhook(url: server.url + "/geotify")
        #expect(target.attempt(payload, at: Samples.now + 5, through: transport) == .delivered(answer: "HTTP 200: {}"))
        let request = try #require(server.requests.first)
        #expect(request.method == "POST" && request.path == "/geotify")
        #expect(request.body == payload)
        #expect(request.headers["idempotency-key"] == "alice/phone/home/enter/1700000000")
        #expect(request.headers["content-type"] == "application/json")
        #expect(request.headers["expect"] == nil)
        let signature = try #require(request.headers["geotify-signature"])
        #expect(signature.hasPrefix("t=1700000005,v1="))
        let bodyFile = try makeTemporaryDirectory("webhook").appendingPathComponent("body")
        try Data(request.body).write(to: bodyFile)
        let verdict = try runCommand(testPython, ["-c", """
            import hashlib, hmac, sys
            secret, header, path = sys.argv[1:4]
            fields = dict(part.split("=", 1) for part in header.split(","))
            body = open(path, "rb").read()
            expected = hmac.new(secret.encode(), fields["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
            print("valid" if hmac.compare_digest(expected, fields["v1"]) else "invalid")
            """, Samples.secret.value, signature, bodyFile.path])
        #expect(verdict == "valid\n")
        let forged = try runCommand(testPython, ["-c", """
            import hashlib, hmac, sys
            print(hmac.new(b"wrong secret", b"1700000005." + open(sys.argv[1], "rb").read(), hashlib.sha256).hexdigest())
            """, bodyFile.path])
        #expect(!signature.hasSuffix(forged.trimmingCharacters(in: .newlines)))
    }

    @Test func ntfyGetsTheTopicAsJSONAtItsRoot() throws {
        let server = try TestHTTPServer { request in
            guard request.path == "/" else { return .init(status: 404, body: #"{"code":40401,"http":404,"error":"page not found"}"#) }
            guard request.headers["authorization"] == "Bearer tk_ntfy" else {
                return .init(status: 403, body: #"{"code":40301,"http":403,"error":"forbidden"}"#)
            }
            return .init(body: #"{"id":"sPs71M8A2T","time":1700000005,"event":"message","topic":"kids"}"#)
        }
        defer { server.stop() }
        let target = Target(name: "phone", destination: .ntfy(NtfyDestination(
            url: server.url, topic: "kids", token: Secret(value: "tk_ntfy", source: "env T"), username: nil, password: nil, priority: 4, tags: [])))
        guard case .delivered = target.attempt(payload, at: Samples.now, through: transport) else {
            Issue.record("ntfy did not accept the message")
            return
        }
        let message = try JSONParser().parse(try #require(server.requests.first).body)
        #expect(message["topic"] == "kids")
        #expect(message["title"] == "Alice entered home")
        #expect(message["message"] == "Welcome home")
        #expect(message["priority"] == 4)
    }

    @Test func gotifyGetsTheMessageWithTheAppToken() throws {
        let server = try TestHTTPServer { request in
            guard request.path == "/message", request.headers["x-gotify-key"] == "AppToken.1" else {
                return .init(status: 401, body: #"{"error":"Unauthorized","errorCode":401,"errorDescription":"you need to provide a valid access token or user credentials to access this api"}"#)
            }
            return .init(body: #"{"id":25,"appid":5,"message":"Welcome home","title":"Alice entered home","priority":5,"date":"2023-11-14T22:13:20Z"}"#)
        }
        defer { server.stop() }
        let good = Target(name: "g", destination: .gotify(GotifyDestination(url: server.url, token: Secret(value: "AppToken.1", source: "env G"), priority: 5)))
        guard case .delivered = good.attempt(payload, at: Samples.now, through: transport) else {
            Issue.record("gotify did not accept the message")
            return
        }
        #expect(try JSONParser().parse(try #require(server.requests.first).body) == ["title": "Alice entered home", "message": "Welcome home", "priority": 5])
        let wrong = Target(name: "g", destination: .gotify(GotifyDestination(url: server.url, token: Secret(value: "wrong", source: "env G"), priority: nil)))
        guard case .rejected(let reason) = wrong.attempt(payload, at: Samples.now, through: transport) else {
            Issue.record("a 401 from gotify must not be retried")
            return
        }
        #expect(reason.hasPrefix("HTTP 401: {\"error\":\"Unauthorized\""))
    }

    @Test func pushoverGetsAFormAndA429IsRetriedWhileA400IsNot() throws {
        let server = try TestHTTPServer { request in
            let fields = Dictionary(uniqueKeysWithValues: request.text.split(separator: "&").map { field in
                let pair = field.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
                return (pair[0], pair.count > 1 ? pair[1] : "")
            })
            if fields["user"] == "limited" { return .init(status: 429, body: #"{"status":0,"errors":["message limit reached"],"request":"r2"}"#) }
            guard request.path == "/1/messages.json", fields["token"] == "azGDORePK8gMaC0QOYAMyEEuzJnyUi", fields["user"] == "uQiRzpo4DXghDmr9QzzfQu27cmVRsG",
                  fields["message"] == "Welcome home", fields["title"] == "Alice entered home", fields["timestamp"] == "1700000000"
            else { return .init(status: 400, body: #"{"user":"invalid","errors":["user identifier is invalid"],"status":0,"request":"r1"}"#) }
            return .init(body: #"{"status":1,"request":"647d2300-702c-4b38-8b2f-d56326ae460b"}"#)
        }
        defer { server.stop() }
        func target(user: String) -> Target {
            Target(name: "p", destination: .pushover(PushoverDestination(
                url: server.url + "/1/messages.json", token: Secret(value: "azGDORePK8gMaC0QOYAMyEEuzJnyUi", source: "env T"),
                user: Secret(value: user, source: "env U"), priority: nil, sound: nil, device: nil)))
        }
        #expect(target(user: "uQiRzpo4DXghDmr9QzzfQu27cmVRsG").attempt(payload, at: Samples.now, through: transport)
            == .delivered(answer: #"HTTP 200: {"status":1,"request":"647d2300-702c-4b38-8b2f-d56326ae460b"}"#))
        guard case .failed = target(user: "limited").attempt(payload, at: Samples.now, through: transport) else {
            Issue.record("a 429 from Pushover must be retried")
            return
        }
        guard case .rejected(let reason) = target(user: "someone-else").attempt(payload, at: Samples.now, through: transport) else {
            Issue.record("Pushover asks that a 4xx is not retried")
            return
        }
        #expect(reason.contains("user identifier is invalid"))
        #expect(!reason.contains("<secret") || reason.contains("<secret from env U>"))
    }

    @Test func telegramGetsSendMessageAtTheBotsPath() throws {
        let server = try TestHTTPServer { request in
            guard request.path == "/bot123456:ABC-DEF/sendMessage" else {
                return .init(status: 404, body: #"{"ok":false,"error_code":404,"description":"Not Found"}"#)
            }
            return .init(body: #"{"ok":true,"result":{"message_id":42,"chat":{"id":-1001234,"type":"channel"},"date":1700000000,"text":"x"}}"#)
        }
        defer { server.stop() }
        let target = Target(name: "tg", destination: .telegram(TelegramDestination(
            url: server.url, token: Secret(value: "123456:ABC-DEF", source: "env TG"), chat: .number(-1001234), silent: false)))
        guard case .delivered = target.attempt(payload, at: Samples.now, through: transport) else {
            Issue.record("telegram did not accept the message")
            return
        }
        #expect(try JSONParser().parse(try #require(server.requests.first).body) == ["chat_id": -1001234, "text": "Alice entered home\nWelcome home"])
        let wrong = Target(name: "tg", destination: .telegram(TelegramDestination(
            url: server.url, token: Secret(value: "999:WRONG", source: "env TG"), chat: .number(1), silent: false)))
        guard case .rejected(let reason) = wrong.attempt(payload, at: Samples.now, through: transport) else {
            Issue.record("a 404 from the Bot API is not worth retrying")
            return
        }
        #expect(reason == "HTTP 404: Not Found")
    }

    @Test func anUnreachableServerIsRetriedNotDropped() throws {
        let closed = try ClosedPort()
        defer { withExtendedLifetime(closed) {} }
        guard case .failed(let reason, nil) = Samples.webhook(url: "http://127.0.0.1:\(closed.port)/").attempt(payload, at: Samples.now, through: transport) else {
            Issue.record("a refused connection must be retried")
            return
        }
        #expect(reason.contains("127.0.0.1"))
    }

    @Test func emailGoesOverSTARTTLSWithALogin() throws {
        let directory = try makeTemporaryDirectory("smtp-certs")
        let certificates = try TestCertificates(in: directory)
        let server = try TestSMTPServer(security: .startTLS, certificates: certificates, login: "geotify:s3cret")
        var target = Target(name: "family", destination: .email(EmailDestination(
            url: "smtp://127.0.0.1:\(server.port)", security: .startTLS, username: "geotify", password: Secret(value: "s3cret", source: "env P"),
            from: "geotify@example.com", to: ["alice@example.com", "bob@example.com"])))
        target.caFile = certificates.caFile
        #expect(target.attempt(payload, at: Samples.now, through: transport) == .delivered(answer: "SMTP 250"), "\(server.log)")
        let message = try #require(server.messages.first)
        #expect(message.from == "geotify@example.com")
        #expect(message.to == ["alice@example.com", "bob@example.com"])
        #expect(message.tls)
        #expect(message.login == "geotify")
        let text = String(decoding: message.data, as: UTF8.self)
        #expect(text.contains("Subject: Alice entered home\r\n"))
        #expect(text.contains("\r\n\r\n\(Data("Welcome home".utf8).base64EncodedString())"))

        var wrongPassword = target
        wrongPassword.destination = .email(EmailDestination(
            url: "smtp://127.0.0.1:\(server.port)", security: .startTLS, username: "geotify", password: Secret(value: "guess", source: "env P"),
            from: "geotify@example.com", to: ["alice@example.com"]))
        guard case .rejected = wrongPassword.attempt(payload, at: Samples.now, through: transport) else {
            Issue.record("a refused login is not worth retrying")
            return
        }
        #expect(server.messages.count == 1)
    }

    @Test func emailGoesOverImplicitTLSAndAnUntrustedCertificateIsRefused() throws {
        let directory = try makeTemporaryDirectory("smtps-certs")
        let certificates = try TestCertificates(in: directory)
        let server = try TestSMTPServer(security: .implicitTLS, certificates: certificates)
        var target = Target(name: "mail", destination: .email(EmailDestination(
            url: "smtps://127.0.0.1:\(server.port)", security: .implicitTLS, username: nil, password: nil,
            from: "geotify@example.com", to: ["alice@example.com"])))
        guard case .failed(let reason, _) = target.attempt(payload, at: Samples.now, through: transport) else {
            Issue.record("a certificate from an unknown authority must not be accepted")
            return
        }
        #expect(reason.lowercased().contains("certificate"))
        #expect(server.messages.isEmpty)
        target.caFile = certificates.caFile
        #expect(target.attempt(payload, at: Samples.now, through: transport) == .delivered(answer: "SMTP 250"), "\(server.log)")
        #expect(server.messages.first?.tls == true)
    }
}
