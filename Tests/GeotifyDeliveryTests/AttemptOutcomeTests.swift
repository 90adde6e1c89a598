import Foundation
import GeotifyDelivery
import GeotifyJSON
import Testing

@Suite("Reading answers")
struct AttemptOutcomeTests {
    @Test(arguments: [
        (200, "delivered"), (201, "delivered"), (204, "delivered"), (299, "delivered"),
        (408, "failed"), (409, "failed"), (425, "failed"), (429, "failed"), (500, "failed"), (502, "failed"), (503, "failed"),
        (599, "failed"),
        (301, "rejected"), (400, "rejected"), (401, "rejected"), (403, "rejected"), (404, "rejected"), (410, "rejected"), (422, "rejected"),
        (600, "rejected"),
    ])
    func httpStatusesAreReadAsDeliveredRetryOrGiveUp(status: Int, kind: String) {
        let outcome = AttemptOutcome(.http(status: status, retryAfter: nil, body: Array("{\"error\":\"x\"}".utf8)), now: 0)
        switch outcome {
        case .delivered(let answer): #expect(kind == "delivered" && answer == "HTTP \(status): {\"error\":\"x\"}")
        case .failed: #expect(kind == "failed")
        case .rejected: #expect(kind == "rejected")
        }
    }

    @Test func retryAfterInSecondsOrAsADateIsHonoured() {
        #expect(AttemptOutcome(.http(status: 429, retryAfter: "120", body: []), now: 0) == .failed(reason: "HTTP 429", retryAfter: 120))
        #expect(AttemptOutcome(.http(status: 503, retryAfter: "Tue, 14 Nov 2023 22:15:20 GMT", body: []), now: Samples.now)
            == .failed(reason: "HTTP 503", retryAfter: 120))
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:37 GMT", now: 784_111_700) == 77)
        #expect(RetryAfter.seconds(" 5 ", now: 0) == 5)
        #expect(RetryAfter.seconds("99999999999", now: 0) == RetryAfter.longest)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:37 GMT", now: 2_000_000_000) == 0)
        #expect(RetryAfter.seconds("soon", now: 0) == nil)
        #expect(RetryAfter.seconds("-5", now: 0) == nil)
        #expect(RetryAfter.seconds("Sunday, 06-Nov-94 08:49:37 GMT", now: 0) == nil)
    }

    @Test func retryAfterAtTheEdgesOfItsForms() {
        // Twelve digits are read as the number they write, leading zeros and all; more are
        // a wait past any window.
        #expect(RetryAfter.seconds("000000000120", now: 0) == 120)
        #expect(RetryAfter.seconds("0000000000120", now: 0) == RetryAfter.longest)
        // A leap second, and a time on the first day of 1970, are dates; 1969 is before
        // any the form allows.
        #expect(RetryAfter.seconds("Sat, 31 Dec 2016 23:59:60 GMT", now: 1_483_228_700) == 100)
        #expect(RetryAfter.seconds("Thu, 01 Jan 1970 00:01:40 GMT", now: 0) == 100)
        #expect(RetryAfter.seconds("Wed, 31 Dec 1969 23:59:59 GMT", now: 0) == nil)
    }

    @Test func bodiesAreCutToOneLine() {
        #expect(AttemptOutcome.excerpt(Array("  line one\nline\ttwo  ".utf8)) == "line one line two")
        #expect(AttemptOutcome.excerpt([]) == nil)
        #expect(AttemptOutcome.excerpt(Array(repeating: UInt8(ascii: "x"), count: 1000))?.count == AttemptOutcome.excerptLength + 1)
    }

    @Test func anAnswerOfExactlyTheExcerptsLengthIsKeptWholeAndALongerOneIsMarkedCut() {
        let length = AttemptOutcome.excerptLength
        #expect(AttemptOutcome.excerpt(Array(repeating: UInt8(ascii: "x"), count: length)) == String(repeating: "x", count: length))
        #expect(AttemptOutcome.excerpt(Array(repeating: UInt8(ascii: "x"), count: length + 1)) == String(repeating: "x", count: length) + "…")
    }

    @Test func anAnswerReadOnlyInPartIsCutAtACharacterAndMarkedCut() {
        // An error page indented with a thousand spaces, then text in two-byte letters: the
        // part read (1 200 bytes) ends inside a letter, which is left out whole, not shown
        // as U+FFFD; and the excerpt, though shorter than its length, says there was more.
        let body = Array(String(repeating: " ", count: 1001).utf8) + Array(String(repeating: "é", count: 200).utf8)
        #expect(AttemptOutcome.excerpt(body) == String(repeating: "é", count: 99) + "…")
        // Blank as far as it was read: the mark alone, not nothing.
        #expect(AttemptOutcome.excerpt(Array((String(repeating: " ", count: 1300) + "x").utf8)) == "…")
        #expect(AttemptOutcome.excerpt(Array(String(repeating: " ", count: 1000).utf8)) == nil)
    }

    @Test func transportFailuresAndSMTPRepliesKeepTheirWeight() {
        #expect(AttemptOutcome(.failed(TransportFailure(permanent: false, reply: 0, message: "Connection refused")), now: 0)
            == .failed(reason: "Connection refused", retryAfter: nil))
        #expect(AttemptOutcome(.failed(TransportFailure(permanent: true, reply: 535, message: "Login denied")), now: 0)
            == .rejected(reason: "Login denied (last reply 535)"))
        #expect(AttemptOutcome(.failed(TransportFailure(permanent: false, reply: 550, message: "RCPT failed")), now: 0)
            == .rejected(reason: "RCPT failed (last reply 550)"))
        #expect(AttemptOutcome(.failed(TransportFailure(permanent: false, reply: 451, message: "try later")), now: 0)
            == .failed(reason: "try later (last reply 451)", retryAfter: nil))
        #expect(AttemptOutcome(.failed(TransportFailure(permanent: false, reply: 500, message: "syntax error")), now: 0)
            == .rejected(reason: "syntax error (last reply 500)"))
        #expect(AttemptOutcome(.failed(TransportFailure(permanent: false, reply: 499, message: "odd")), now: 0)
            == .failed(reason: "odd (last reply 499)", retryAfter: nil))
        #expect(AttemptOutcome(.mail(reply: 250), now: 0) == .delivered(answer: "SMTP 250"))
    }

    @Test func telegramFloodControlWaitsWhatTheBodySays() {
        let telegram = TelegramDestination(url: "http://t", token: Secret(value: "1:X", source: "env T"), chat: .number(1), silent: false)
        let flood = #"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 35","parameters":{"retry_after":35}}"#
        #expect(telegram.outcome(of: .http(status: 429, retryAfter: nil, body: Array(flood.utf8)), now: 0)
            == .failed(reason: "HTTP 429: Too Many Requests: retry after 35", retryAfter: 35))
        let blocked = #"{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}"#
        #expect(telegram.outcome(of: .http(status: 403, retryAfter: nil, body: Array(blocked.utf8)), now: 0)
            == .rejected(reason: "HTTP 403: Forbidden: bot was blocked by the user"))
        #expect(telegram.outcome(of: .http(status: 200, retryAfter: nil, body: Array(#"{"ok":true,"result":{}}"#.utf8)), now: 0)
            == .delivered(answer: #"HTTP 200: {"ok":true,"result":{}}"#))
        // A description is an excerpt like any answer: one line, cut.
        let long = #"{"ok":false,"error_code":400,"description":"Bad Request:\n"# + String(repeating: "z", count: 1000) + #""}"#
        #expect(telegram.outcome(of: .http(status: 400, retryAfter: nil, body: Array(long.utf8)), now: 0)
            == .rejected(reason: "HTTP 400: Bad Request: " + String(repeating: "z", count: AttemptOutcome.excerptLength - 13) + "…"))
    }

    @Test func secretsAreBlankedOutOfAnswers() {
        let target = Target(name: "t", destination: .gotify(GotifyDestination(url: "http://g", token: Secret(value: "Asecret.Token", source: "env GOTIFY_TOKEN"), priority: nil)))
        let outcome = target.outcome(of: .http(status: 401, retryAfter: nil, body: Array("bad token Asecret.Token".utf8)), at: 0)
        #expect(outcome == .rejected(reason: "HTTP 401: bad token <secret from env GOTIFY_TOKEN>"))
        #expect("\(Samples.secret)" == "<secret from env TEST_SECRET>")
        #expect(String(reflecting: target).contains("Asecret.Token") == false)
        var dumped = ""
        dump(target, to: &dumped)
        #expect(!dumped.contains("Asecret.Token"))
    }

    @Test func secretsAreBlankedInEveryFormTheyAreSentIn() {
        let password = Secret(value: "s3cr3t/+&=x y", source: "file secret")
        let ntfy = Target(name: "nt", destination: .ntfy(NtfyDestination(
            url: "http://n", topic: "t", token: nil, username: "u", password: password, priority: nil, tags: [])))
        let credential = Data("u:s3cr3t/+&=x y".utf8).base64EncodedString()
        #expect(ntfy.outcome(of: .http(status: 500, retryAfter: nil, body: Array("/echo-nt AUTH Basic \(credential)".utf8)), at: 0)
            == .failed(reason: "HTTP 500: /echo-nt AUTH Basic <secret from file secret>", retryAfter: nil))
        let pushover = Target(name: "po", destination: .pushover(PushoverDestination(
            url: "http://p", token: password, user: Secret(value: "userkey", source: "file user"), priority: nil, sound: nil, device: nil)))
        #expect(pushover.outcome(of: .http(status: 400, retryAfter: nil, body: Array("token=s3cr3t%2F%2B%26%3Dx+y&user=userkey&title=T".utf8)), at: 0)
            == .rejected(reason: "HTTP 400: token=<secret from file secret>&user=<secret from file user>&title=T"))
        #expect(pushover.outcome(of: .http(status: 400, retryAfter: nil, body: Array(#"{"token":"s3cr3t%2f%2b%26%3dx+y","echo":"s3cr3t\/+&=x y"}"#.utf8)), at: 0)
            == .rejected(reason: #"HTTP 400: {"token":"<secret from file secret>","echo":"<secret from file secret>"}"#))
        let mail = Target(name: "m", destination: .email(EmailDestination(
            url: "smtp://m:587", security: .startTLS, username: "me", password: password, from: "a@b", to: ["c@d"])))
        let plain = Data("\0me\0s3cr3t/+&=x y".utf8).base64EncodedString()
        #expect(mail.outcome(of: .failed(TransportFailure(permanent: true, reply: 535, message: "AUTH PLAIN \(plain) refused")), at: 0)
            == .rejected(reason: "AUTH PLAIN <secret from file secret> refused (last reply 535)"))
    }

    @Test func secretsAreBlankedBeforeTheAnswerIsCutSoNoPartOfOneSurvivesTheCut() {
        let token = Secret(value: "Asecret.Token", source: "env GOTIFY_TOKEN")
        let target = Target(name: "g", destination: .gotify(GotifyDestination(url: "http://g", token: token, priority: nil)))
        // The secret across the excerpt's 300th character.
        let filler = String(repeating: "x", count: 295)
        #expect(target.outcome(of: .http(status: 500, retryAfter: nil, body: Array("\(filler) Asecret.Token tail".utf8)), at: 0)
            == .failed(reason: "HTTP 500: \(filler) <sec…", retryAfter: nil))
        // A long secret twice: the first blanked whole, the part of the second that a cut of
        // the body leaves blanked too, and the excerpt marked cut.
        let long = Secret(value: (0..<2000).map { String(UnicodeScalar(UInt8(65 + $0 % 26))) }.joined(), source: "env LONG")
        let hook = Target(name: "h", destination: .webhook(WebhookDestination(url: "http://h", secret: long)))
        let twice = Array("\(long.value) \(long.value)".utf8)
        #expect(hook.outcome(of: .http(status: 500, retryAfter: nil, body: twice), at: 0)
            == .failed(reason: "HTTP 500: <secret from env LONG> <secret from env LONG>…", retryAfter: nil))
        // A body read up to the start of a secret (the read stops past the excerpt's length
        // in bytes, and the spaces before it are trimmed away): that start is blanked, and
        // the excerpt marked cut.
        let start = Array((String(repeating: " ", count: AttemptOutcome.excerptLength * 4 + 5) + "Asecret.Token and more").utf8)
        #expect(target.outcome(of: .http(status: 500, retryAfter: nil, body: start), at: 0)
            == .failed(reason: "HTTP 500: <secret from env GOTIFY_TOKEN>…", retryAfter: nil))
        // Text the excerpt's cut ends in is not taken for a secret because a secret starts
        // with it.
        let innocent = Array((String(repeating: "y", count: 299) + "Apple pie").utf8)
        #expect(target.outcome(of: .http(status: 500, retryAfter: nil, body: innocent), at: 0)
            == .failed(reason: "HTTP 500: \(String(repeating: "y", count: 299))A…", retryAfter: nil))
    }
}
