import GeotifyStore
import Testing

@Suite("Delivery bound")
struct DeliveryBoundTests {
    let bound = DeliveryBound(maximumQueued: 10, maximumQueuedPerDevice: 3, maximumDeadLetters: 5)
    let entry = DeliveryEntry(target: "hook", device: "alice/phone", eventID: "alice/phone/home/enter/1", payload: [])

    @Test func aDeliveryIsTakenWhileBothItsDeviceAndItsTargetAreUnderTheirBounds() {
        #expect(bound.refusal(of: entry, queued: 0, queuedForDevice: 0) == nil)
        #expect(bound.refusal(of: entry, queued: 9, queuedForDevice: 2) == nil)
    }

    @Test func theDeviceBoundRefusesTheNewestOfOneDeviceFirst() {
        let refusal = bound.refusal(of: entry, queued: 10, queuedForDevice: 3)
        #expect(refusal == DeliveryRefusal(entry: entry, bound: .maximumQueuedPerDevice, maximum: 3))
        #expect(refusal?.reason == "3 notifications of alice/phone are already waiting for hook (maximumQueuedPerDevice)")
    }

    @Test func theTargetBoundRefusesWhatManyDevicesTogetherWouldAdd() {
        let refusal = bound.refusal(of: entry, queued: 10, queuedForDevice: 0)
        #expect(refusal == DeliveryRefusal(entry: entry, bound: .maximumQueued, maximum: 10))
        #expect(refusal?.reason == "10 notifications are already waiting for hook (maximumQueued)")
    }

    /// What a lane holds in memory while its commits fail: the oldest of each device and
    /// target within the bounds, in order, the newest refused; a target without a bound
    /// holds everything.
    @Test func heldInMemoryTheNewestPastABoundAreRefusedInOrder() {
        func entry(_ target: String, _ device: String, _ number: Int) -> DeliveryEntry {
            DeliveryEntry(target: target, device: device, eventID: "\(device)/home/enter/\(number)", payload: [])
        }
        let flood = (1...5).map { entry("hook", "alice/phone", $0) }
        let others = (1...9).map { entry("hook", "user\($0)/phone", 1) }
        let unbounded = (1...20).map { entry("log", "alice/phone", $0) }
        let entries = flood + others + unbounded
        let (held, refused) = DeliveryBound.hold(entries, within: ["hook": bound])
        #expect(held == Array(flood.prefix(3)) + Array(others.prefix(7)) + unbounded)
        #expect(refused.map(\.entry) == Array(flood.suffix(2)) + Array(others.suffix(2)))
        #expect(refused.map(\.bound) == [.maximumQueuedPerDevice, .maximumQueuedPerDevice, .maximumQueued, .maximumQueued])
        #expect(DeliveryBound.hold(held, within: ["hook": bound]).refused.isEmpty, "what was held is held again on the next failure")
    }

    /// What the other lanes hold for a target counts against its `maximumQueued`; the
    /// bound per device counts `entries` alone (a device's deliveries are all on one lane).
    @Test func heldInMemoryWhatOthersHoldCountsAgainstTheTargetsBound() {
        let entries = (1...4).map { DeliveryEntry(target: "hook", device: "alice/phone", eventID: "alice/phone/home/enter/\($0)", payload: []) }
        let (held, refused) = DeliveryBound.hold(entries, within: ["hook": bound], alreadyHeld: ["hook": 8, "log": 50])
        #expect(held == Array(entries.prefix(2)))
        #expect(refused.map(\.entry) == Array(entries.suffix(2)))
        #expect(refused.map(\.bound) == [.maximumQueued, .maximumQueued])
        #expect(DeliveryBound.hold(entries, within: ["hook": bound], alreadyHeld: ["hook": 10]).held.isEmpty)
    }
}
