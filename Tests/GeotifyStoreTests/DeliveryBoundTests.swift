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
}
