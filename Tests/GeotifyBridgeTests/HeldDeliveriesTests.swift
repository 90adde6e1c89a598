@testable import GeotifyBridge
import GeotifyStore
import Testing

/// The deliveries the lanes keep in memory while their commits fail keep to each
/// target's `maximumQueued` together, not once a lane.
@Suite("Deliveries held across the lanes")
struct HeldDeliveriesTests {
    let held = HeldDeliveries(bounds: ["hook": DeliveryBound(maximumQueued: 5, maximumQueuedPerDevice: 4)])

    func entries(_ device: String, _ numbers: ClosedRange<Int>, target: String = "hook") -> [DeliveryEntry] {
        numbers.map { DeliveryEntry(target: target, device: device, eventID: "\(device)/home/enter/\($0)", payload: []) }
    }

    @Test func whatOneLaneHoldsLeavesTheOthersOnlyTheRestOfTheBound() {
        let alice = entries("alice/phone", 1...3)
        #expect(held.hold(alice, replacing: []).held == alice)
        let bob = entries("bob/phone", 1...3)
        let (bobHeld, bobRefused) = held.hold(bob, replacing: [])
        #expect(bobHeld == Array(bob.prefix(2)))
        #expect(bobRefused.map(\.entry) == [bob[2]])
        #expect(bobRefused.first?.reason == "5 notifications are already waiting for hook (maximumQueued)")
        #expect(held.count(for: "hook") == 5)
    }

    /// A lane holding again gives back what it held first: its held ones are held again
    /// (they come first in what it holds next), never counted twice.
    @Test func aLaneHoldingAgainCountsWhatItHeldOnce() {
        let first = entries("alice/phone", 1...2)
        #expect(held.hold(first, replacing: []).held == first)
        let next = entries("alice/phone", 1...4)
        let (again, refused) = held.hold(next, replacing: first)
        #expect(again == next && refused.isEmpty)
        #expect(held.count(for: "hook") == 4)
        let more = entries("alice/phone", 1...6)
        let (most, refusedPerDevice) = held.hold(more, replacing: again)
        #expect(most == next, "the device's own bound of 4")
        #expect(refusedPerDevice.map(\.bound) == [.maximumQueuedPerDevice, .maximumQueuedPerDevice])
    }

    /// What a commit wrote is given back, and the bound is whole again; a target without
    /// a bound holds everything.
    @Test func whatACommitWroteIsGivenBack() {
        let alice = entries("alice/phone", 1...4)
        #expect(held.hold(alice, replacing: []).held == alice)
        #expect(held.hold(entries("bob/phone", 1...4), replacing: []).held.count == 1)
        held.release(alice)
        #expect(held.count(for: "hook") == 1)
        let carol = entries("carol/phone", 1...4)
        #expect(held.hold(carol, replacing: []).held == carol)
        let unbounded = entries("carol/phone", 1...50, target: "log")
        #expect(held.hold(unbounded, replacing: []).held == unbounded)
    }
}
