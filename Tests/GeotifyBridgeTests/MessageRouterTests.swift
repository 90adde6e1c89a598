@testable import GeotifyBridge
import GeotifyMQTT
import Testing

/// The router's reading of a topic's shape, on strings held inline (up to 15 bytes) and
/// on the heap, and the device names it refuses.
@Suite("Message router")
struct MessageRouterTests {
    @Test func aTopicsLevelsAreItsSlashesAndOne() {
        #expect(MessageRouter.levels(of: "a") == 1)
        #expect(MessageRouter.levels(of: "a/b") == 2)
        #expect(MessageRouter.levels(of: "/") == 2, "empty levels count")
        #expect(MessageRouter.levels(of: "owntracks/alice/phone") == 3)
        let long = Array(repeating: "level", count: 40).joined(separator: "/")
        #expect(MessageRouter.levels(of: long) == 40)
        #expect(MessageRouter.levels(of: String(long.dropLast(5))) == 40, "a trailing slash opens an empty level")
        #expect(MessageRouter.levels(of: "caf\u{E9}/\u{1F600}/x") == 3)
    }

    /// "zo\u{EB}/watch" and "zoe\u{308}/watch" are one string to Swift and two topics to
    /// the broker, whose access rules may give them to two users: the decomposed one is
    /// refused before any lane sees it, so it can neither move the other's presence nor
    /// count as the other's owner. (Found by `LaneCoreHostileInputTests`.)
    @Test func aDeviceNameNotInNormalizationFormCIsRefused() throws {
        let router = try MessageRouter(settings: Settings(), topics: Topics(prefix: "geotify"))
        func outcome(_ topic: String) -> MessageRouter.Outcome {
            router.route(MQTTMessage(topic: topic, payload: Array(#"{"_type":"location","lat":1,"lon":1,"tst":1}"#.utf8), qos: 0, retain: false), arrival: 0)
        }
        guard case .lane(_, let inbound) = outcome("owntracks/zo\u{EB}/watch") else {
            Issue.record("the composed name is a device")
            return
        }
        #expect(Array(inbound.device.utf8) == Array("zo\u{EB}/watch".utf8))
        for topic in ["owntracks/zoe\u{308}/watch", "geotify/location/zoe\u{308}/watch", "geotify/cmd/zoe\u{308}/watch", "owntracks/A\u{30A}/x"] {
            guard case .refused(let error, _) = outcome(topic) else {
                Issue.record("\(topic.debugDescription) is refused")
                continue
            }
            #expect(error.code == .invalidTopic)
            #expect(error.message.contains("normalization form C"), "\(error.message)")
        }
        guard case .lane = outcome("owntracks/alice/\u{301}b") else {
            Issue.record("a combining mark with nothing to compose with is in form C already")
            return
        }
    }

    /// Belt and braces for the settings' refusal of a position filter that matches the
    /// bridge's own topics: a message on `<topicPrefix>/error` is never taken as a
    /// position (refusing it would publish a new error there), even when a filter matches.
    @Test func theBridgesOwnErrorTopicIsNeverAPosition() throws {
        var settings = Settings()
        settings.ownTracksTopic = "+/+"
        let router = try MessageRouter(settings: settings, topics: Topics(prefix: "geotify"))
        let error = MQTTMessage(topic: "geotify/error", payload: Array(#"{"error":"invalid_payload"}"#.utf8), qos: 0, retain: false)
        guard case .unrouted = router.route(error, arrival: 0) else {
            Issue.record("geotify/error was routed as a position")
            return
        }
        let position = MQTTMessage(topic: "geotify/errors", payload: [], qos: 0, retain: false)
        guard case .lane = router.route(position, arrival: 0) else {
            Issue.record("another topic the filter matches is still a position")
            return
        }
        settings.ownTracksTopic = "owntracks/+/+"
        settings.locationTopic = "#"
        let plain = try MessageRouter(settings: settings, topics: Topics(prefix: "geotify"))
        guard case .unrouted = plain.route(error, arrival: 0) else {
            Issue.record("geotify/error was routed as a plain position")
            return
        }
    }
}
