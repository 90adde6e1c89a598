import GeotifyCore
import GeotifyDelivery
import Testing

@Suite("Target filters")
struct FilterTests {
    @Test(arguments: [
        ("alice/#", "alice", true), ("alice/#", "alice/phone", true), ("alice/#", "alice/car/1", true),
        ("alice/#", "bob/phone", false), ("alice/#", "alicea/phone", false),
        ("+/phone", "alice/phone", true), ("+/phone", "alice/car", false), ("+/phone", "alice/phone/2", false),
        ("#", "anything/at/all", true), ("van/7", "van/7", true), ("van/7", "van/70", false), ("van/+", "van", false),
    ])
    func deviceFiltersMatchLikeMQTTSubscriptions(pattern: String, device: String, matches: Bool) throws {
        #expect(try DeviceFilter(pattern).matches(device) == matches)
    }

    @Test(arguments: ["alice/#/phone", "alice/ph#", "al+ce/phone", "", "alice/#\u{308}", "+\u{301}/phone"])
    func badDeviceFiltersAreRefused(pattern: String) {
        #expect(throws: DeliverySettingsError.self) { try DeviceFilter(pattern) }
    }

    /// Levels as MQTT and the bridge's owner rule cut them, at every '/' byte: a level
    /// that begins with a combining mark is still a level of its own.
    @Test func levelsAreCutAtEverySlashByte() throws {
        #expect(try DeviceFilter("alice/#").matches("alice/\u{301}x"))
        #expect(try DeviceFilter("+/phone").matches("\u{301}a/phone"))
        #expect(try !DeviceFilter("+/phone").matches("mallory/\u{301}phone"))
        #expect(try !DeviceFilter("zo\u{EB}/#").matches("zoe\u{308}/watch"), "compared byte by byte")
    }

    @Test func devicesFencesAndEventsAllMustMatch() throws {
        let filter = TargetFilter(devices: [try DeviceFilter("alice/#"), try DeviceFilter("van/+")], fences: ["school"], events: [.enter])
        #expect(filter.matches(device: "alice/phone", fence: "school", kind: .enter))
        #expect(filter.matches(device: "van/7", fence: "school", kind: .enter))
        #expect(!filter.matches(device: "bob/phone", fence: "school", kind: .enter))
        #expect(!filter.matches(device: "alice/phone", fence: "home", kind: .enter))
        #expect(!filter.matches(device: "alice/phone", fence: "school", kind: .exit))
        #expect(TargetFilter().matches(device: "anyone", fence: "anywhere", kind: .dwell))
    }

    @Test func routingQueuesOneEntryPerMatchingTarget() throws {
        var parents = Samples.webhook("parents", url: "http://127.0.0.1:1")
        parents.filter = TargetFilter(devices: [try DeviceFilter("alice/#")], fences: ["school"], events: [.enter])
        let everything = Samples.webhook("everything", url: "http://127.0.0.1:1")
        let routing = DeliveryRouting(targets: [parents, everything])
        let atSchool = Samples.notification(device: "alice/phone", fence: "school", kind: .enter)
        let payload = Samples.payload(atSchool)
        #expect(routing.entries(for: atSchool, payload: payload).map(\.target) == ["parents", "everything"])
        #expect(routing.entries(for: atSchool, payload: payload).allSatisfy { $0.eventID == atSchool.eventID && $0.device == "alice/phone" && $0.payload == payload })
        let leaving = Samples.notification(device: "alice/phone", fence: "school", kind: .exit)
        #expect(routing.entries(for: leaving, payload: Samples.payload(leaving)).map(\.target) == ["everything"])
    }
}
