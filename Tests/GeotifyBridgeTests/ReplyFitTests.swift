@testable import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyMQTT
import GeotifyStore
import Testing

/// A command's reply larger than the broker takes (`maximumPacketBytes`) is never
/// published as it is: a `list` or `get` is refused as `message_too_large`, any other
/// reply goes without the fences it held, keeping what says what was done.
@Suite("Replies made to fit the broker's packets")
struct ReplyFitTests {
    let messages = OutboundMessages(topics: Topics())

    /// A fence whose `note` is `bytes` long, as a reply holds it.
    static func fence(_ identifier: String, noteBytes bytes: Int) -> JSON {
        ["identifier": .string(identifier), "latitude": 52.52, "longitude": 13.405, "radius": 100,
         "note": .string(String(repeating: "n", count: bytes)), "eventType": "onEntry"]
    }

    static func reply(_ action: String, _ members: [(String, JSON)]) -> JSONObject {
        var reply = JSONObject()
        reply["id"] = "7"
        reply["action"] = .string(action)
        reply["ok"] = true
        for (key, value) in members { reply[key] = value }
        return reply
    }

    static func request(_ action: String, responseTopic: String? = nil, correlationData: [UInt8]? = nil) -> CommandRequest {
        CommandRequest(
            device: "alice/phone", topic: "geotify/cmd/alice/phone", id: "7", action: action, responseTopic: responseTopic,
            correlationData: correlationData)
    }

    /// The size of the packet `reply` goes in on the device's reply topic.
    func packet(_ reply: JSONObject) -> Int {
        let message = messages.reply(reply, to: "alice/phone")
        return PublishPacketSize.of(topicBytes: message.topic.utf8.count, payloadBytes: message.payload.count, qos: 1)
    }

    @Test func aReplyThatFitsGoesAsItIs() {
        let reply = Self.reply("get", [("fence", Self.fence("home", noteBytes: 100))])
        let fit = ReplyFit(maximumPacketBytes: packet(reply), messages: messages)
        #expect(fit.fit(reply, to: Self.request("get")) == .fits, "a packet of exactly the limit fits")
    }

    @Test func aListOrGetTooLargeIsRefused() {
        for action in ["list", "get"] {
            let reply = Self.reply(action, [("fences", [Self.fence("home", noteBytes: 3_000)])])
            let size = packet(reply)
            let fit = ReplyFit(maximumPacketBytes: size - 1, messages: messages)
            guard case .refused(let error) = fit.fit(reply, to: Self.request(action)) else {
                Issue.record("\(action) not refused")
                continue
            }
            #expect(error.code == .messageTooLarge)
            #expect(error.message.hasPrefix("the reply would be a packet of \(size) bytes, more than the \(size - 1) the broker takes (maximumPacketBytes); nothing was changed"))
        }
    }

    @Test func aChangeTooLargeKeepsWhatWasDoneWithoutItsFences() {
        let reply = Self.reply("edit", [
            ("fence", Self.fence("home", noteBytes: 3_000)), ("previous", Self.fence("home", noteBytes: 2_000)),
            ("warnings", ["radius raised to 1 m"]),
        ])
        let fit = ReplyFit(maximumPacketBytes: 2_048, messages: messages)
        guard case .trimmed(let trimmed) = fit.fit(reply, to: Self.request("edit")) else {
            Issue.record("not trimmed")
            return
        }
        #expect(trimmed.keys == ["id", "action", "ok", "omitted", "warnings"])
        #expect(trimmed["ok"] == true)
        #expect(trimmed["omitted"] == ["fence", "previous"])
        let warnings = trimmed["warnings"]?.arrayValue ?? []
        #expect(warnings.count == 2 && warnings.first == "radius raised to 1 m")
        #expect(warnings.last?.stringValue?.hasSuffix("so it goes without the members in \"omitted\"; the command was carried out") == true)
        #expect(packet(trimmed) <= 2_048)
    }

    @Test func aPreviewTooLargeKeepsItsTokenWithoutItsFencesAndNotification() {
        let preview: JSON = [
            "change": "edit", "fence": Self.fence("home", noteBytes: 3_000), "previous": Self.fence("home", noteBytes: 3_000),
            "relation": ["state": "inside"], "notification": ["note": .string(String(repeating: "n", count: 3_000))],
            "warnings": [],
        ]
        let reply = Self.reply("preview", [("preview", preview), ("token", "7a14"), ("expires", 1_795_982_768)])
        guard case .trimmed(let trimmed) = ReplyFit(maximumPacketBytes: 2_048, messages: messages).fit(reply, to: Self.request("preview")) else {
            Issue.record("not trimmed")
            return
        }
        #expect(trimmed.keys == ["id", "action", "ok", "preview", "token", "expires", "omitted", "warnings"])
        #expect(trimmed["preview"]?.objectValue?.keys == ["change", "relation", "warnings"])
        #expect(trimmed["token"] == "7a14")
        #expect(trimmed["omitted"] == ["preview.fence", "preview.previous", "preview.notification"])
    }

    /// The copy on an MQTT 5 response topic carries the correlation data: its packet is
    /// the one that must fit.
    @Test func theResponseTopicsPacketWithItsCorrelationDataMustFitToo() {
        let reply = Self.reply("get", [("fence", Self.fence("home", noteBytes: 100))])
        let fit = ReplyFit(maximumPacketBytes: packet(reply), messages: messages)
        let answered = Self.request("get", responseTopic: "geotify/reply/alice/phone/app", correlationData: Array(repeating: 1, count: 16))
        guard case .refused(let error) = fit.fit(reply, to: answered) else {
            Issue.record("not refused")
            return
        }
        #expect(error.code == .messageTooLarge)
    }

    /// The correlation data counts in the response topic's packet: on a response topic
    /// shorter than the reply topic, the reply fits without it and is refused with 64
    /// bytes of it.
    @Test func theCorrelationDataCountsInTheResponsePacket() {
        let reply = Self.reply("get", [("fence", Self.fence("home", noteBytes: 100))])
        let fit = ReplyFit(maximumPacketBytes: packet(reply), messages: messages)
        #expect(fit.fit(reply, to: Self.request("get", responseTopic: "app/7")) == .fits)
        let answered = Self.request("get", responseTopic: "app/7", correlationData: Array(repeating: 1, count: 64))
        guard case .refused(let error) = fit.fit(reply, to: answered) else {
            Issue.record("not refused")
            return
        }
        #expect(error.code == .messageTooLarge)
    }

    /// A `delete` too large keeps what says it was done and goes without the fence it
    /// deleted.
    @Test func aDeleteTooLargeGoesWithoutTheDeletedFence() {
        let reply = Self.reply("delete", [("deleted", Self.fence("home", noteBytes: 3_000))])
        guard case .trimmed(let trimmed) = ReplyFit(maximumPacketBytes: 2_048, messages: messages).fit(reply, to: Self.request("delete")) else {
            Issue.record("not trimmed")
            return
        }
        #expect(trimmed.keys == ["id", "action", "ok", "omitted", "warnings"])
        #expect(trimmed["omitted"] == ["deleted"])
        #expect(packet(trimmed) <= 2_048)
    }
}
