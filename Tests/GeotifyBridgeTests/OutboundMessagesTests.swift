import Testing
import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// The notification document on `geotify/event/<device>`, key by key: Home Assistant's
/// event entity reads `event_type`, and the webhooks and push services get the same
/// payload, so a key left out is a feature gone for every subscriber.
@Suite("Outbound messages")
struct OutboundMessagesTests {
    let messages = OutboundMessages(topics: Topics())

    static func notification(_ kind: TransitionKind, name: String?, accuracy: Double? = 12) -> Notification {
        let fence = Fence(
            identifier: "shop", region: .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100),
            note: "Shopping", eventType: [.onEntry, .onExit], name: name)
        let fix = Fix(device: "alice/phone", coordinate: Coordinate(latitude: 52.52, longitude: 13.405), accuracy: accuracy, timestamp: 1_700_000_060)
        return Notification(transition: Transition(fence: fence, kind: kind, fix: fix), badge: 2)
    }

    @Test func theEventDocumentCarriesEveryKeyAndTheFencesName() {
        let message = messages.event(Self.notification(.enter, name: "Supermarket"))
        #expect(message.topic == "geotify/event/alice/phone")
        #expect(message.qos == 1 && !message.retain)
        #expect(String(decoding: message.payload, as: UTF8.self) ==
            #"{"id":"alice/phone/shop/enter/1700000060","device":"alice/phone","fence":"shop","event":"enter","event_type":"enter","note":"Shopping","name":"Supermarket","badge":2,"lat":52.52,"lon":13.405,"acc":12,"tst":1700000060}"#)
    }

    @Test func anUnnamedFenceAndAFixWithoutAccuracyLeaveTheirKeysOut() {
        let message = messages.event(Self.notification(.exit, name: nil, accuracy: nil))
        #expect(String(decoding: message.payload, as: UTF8.self) ==
            #"{"id":"alice/phone/shop/exit/1700000060","device":"alice/phone","fence":"shop","event":"exit","event_type":"exit","note":"Shopping","badge":2,"lat":52.52,"lon":13.405,"tst":1700000060}"#)
    }

    /// What goes to `geotify/error` and to a device's reply topic is said once, to whoever
    /// listens then: never retained, or every later subscriber would be greeted with a
    /// refusal or a reply long past.
    @Test func refusalsFailuresAndRepliesAreNotRetained() {
        let refusal = messages.error(InputError(.outOfRange, "lat 95 is outside -90...90"), topic: "geotify/location/alice/phone", device: "alice/phone")
        #expect(refusal.topic == "geotify/error" && refusal.qos == 0 && !refusal.retain)
        #expect(String(decoding: refusal.payload, as: UTF8.self) ==
            #"{"error":"out_of_range","message":"lat 95 is outside -90...90","topic":"geotify/location/alice/phone","device":"alice/phone"}"#)
        let failure = messages.failure(.fenceFile, "the fence file cannot be read")
        #expect(failure.topic == "geotify/error" && failure.qos == 0 && !failure.retain)
        var ok = JSONObject()
        ok["ok"] = .bool(true)
        let reply = messages.reply(ok, to: "alice/phone")
        #expect(reply.topic == "geotify/reply/alice/phone" && reply.qos == 1 && !reply.retain)
    }
}
