import Foundation
@testable import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import Testing

/// What a lane answers a position someone in the process waits for (the web console's
/// OwnTracks HTTP mode), through the pure core: taken when it was evaluated or dropped by
/// the fix rules, refused with the code the bridge counts when the device may not have
/// state, whether the refusal comes from decoding or from admission.
@Suite("Lane core: answers to positions posted over HTTP")
struct LaneCoreAnswerTests {
    static let fences = """
        { "devices": { "alice/phone": [
            { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "note": "", "eventType": "onEntry" } ] } }
        """

    /// The single answer to one OwnTracks position of `device` taken at `tst`.
    func answer(_ lane: inout LaneFixture, _ device: String, tst: Double? = nil, payload: String? = nil) -> LaneAnswer.Outcome? {
        let body = payload ?? #"{"_type":"location","lat":52.52,"lon":13.405,"acc":5,"tst":\#(tst ?? lane.now)}"#
        var inbound = lane.inbound(device, topic: "owntracks/\(device)", payload: Array(body.utf8), route: .location(.ownTracks))
        inbound.requester = 7
        let answers = lane.handle([inbound]).answers
        #expect(answers.count == 1, "answered exactly once")
        #expect(answers.first?.requester == 7)
        return answers.first?.outcome
    }

    func code(_ outcome: LaneAnswer.Outcome?) -> ErrorCode? {
        if case .refused(let error) = outcome { return error.code }
        return nil
    }

    func isAccepted(_ outcome: LaneAnswer.Outcome?) -> Bool {
        if case .accepted = outcome { return true }
        return false
    }

    @Test func anEvaluatedFixADroppedOneAndAnotherMessageAreTaken() throws {
        var lane = try LaneFixture(fences: Self.fences)
        #expect(isAccepted(answer(&lane, "alice/phone")))
        #expect(isAccepted(answer(&lane, "alice/phone", tst: lane.now - 10 * 86_400)), "too old: dropped by the rules, not refused")
        #expect(isAccepted(answer(&lane, "alice/phone", payload: #"{"_type":"card","name":"Alice"}"#)))
    }

    @Test func anUndecodableBodyIsRefusedWithItsCode() throws {
        var lane = try LaneFixture(fences: Self.fences)
        #expect(code(answer(&lane, "alice/phone", payload: "{nope")) == .invalidJSON)
    }

    @Test func anUnknownDeviceUnderStrictDevicesIsRefused() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.strictDevices = true }
        #expect(code(answer(&lane, "stranger/phone")) == .unknownDevice)
        #expect(isAccepted(answer(&lane, "alice/phone")))
    }

    @Test func aNewDeviceBeyondTheLimitsIsRefused() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.maximumDevicesPerOwner = 1 }
        #expect(isAccepted(answer(&lane, "carol/phone")))
        #expect(code(answer(&lane, "carol/watch")) == .tooManyDevices)
        #expect(isAccepted(answer(&lane, "alice/phone")), "a device the fence file names is always admitted")
    }
}
