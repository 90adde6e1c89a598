/// How much of the state database one delivery target may take: deliveries waiting in
/// all, deliveries waiting for one device, and dead letters kept.
///
/// Why: a tracker causes notifications at will (hopping in and out of its fence), and
/// each is queued for every matching target and kept until it is delivered or dies; a
/// target that is slow, rate limited or down, or that refuses everything, would let one
/// tracker fill the disk (4 000 positions against a webhook limited to 10 a second left
/// 3 885 deliveries waiting, 10 000 against one answering 400 left 9 999 dead letters).
/// The bound per device keeps one device's flood from taking the whole queue of its
/// target; the bound per target keeps many devices from doing it together. A fleet's
/// notifications stay far below either: 1 000 waiting for one device is a notification a
/// minute for more than 16 hours of a target being down.
package struct DeliveryBound: Sendable, Equatable {
    /// The most deliveries waiting (pending or retrying) for the target.
    package var maximumQueued = 100_000
    /// The most deliveries waiting for the target from one device.
    package var maximumQueuedPerDevice = 1_000
    /// The most dead letters kept for the target; the oldest beyond it are deleted.
    package var maximumDeadLetters = 1_000

    package init(maximumQueued: Int = 100_000, maximumQueuedPerDevice: Int = 1_000, maximumDeadLetters: Int = 1_000) {
        self.maximumQueued = maximumQueued
        self.maximumQueuedPerDevice = maximumQueuedPerDevice
        self.maximumDeadLetters = maximumDeadLetters
    }

    /// Whether `entry` may be queued while `queued` deliveries wait for its target,
    /// `queuedForDevice` of them for its device: nil when it may, else the refusal. The
    /// newest is refused, never an older one dropped: what is queued was already promised
    /// to the target, in order, and one under way cannot be taken back.
    package func refusal(of entry: DeliveryEntry, queued: Int, queuedForDevice: Int) -> DeliveryRefusal? {
        if queuedForDevice >= maximumQueuedPerDevice {
            return DeliveryRefusal(entry: entry, bound: .maximumQueuedPerDevice, maximum: maximumQueuedPerDevice)
        }
        if queued >= maximumQueued {
            return DeliveryRefusal(entry: entry, bound: .maximumQueued, maximum: maximumQueued)
        }
        return nil
    }

    /// `entries` in order, each within its target's bound in `bounds` (a target left out
    /// has none) counted among `entries` and the `alreadyHeld` others hold for each target
    /// (the other lanes; a device's deliveries are all in `entries`, its lane's): those
    /// held and those refused. For what the lanes keep in memory while their commits fail
    /// (a full disk, `HeldDeliveries`), so that an outage bounds memory as the queue bounds
    /// the disk: without it, every notification of the outage waited in memory for a
    /// commit. The store applies the bounds again, against what it holds, when those held
    /// are committed.
    package static func hold(
        _ entries: [DeliveryEntry], within bounds: [String: DeliveryBound], alreadyHeld: [String: Int] = [:]
    ) -> (held: [DeliveryEntry], refused: [DeliveryRefusal]) {
        var held: [DeliveryEntry] = []
        var refused: [DeliveryRefusal] = []
        var queued = alreadyHeld
        var queuedForDevice: [DeliveryKey: Int] = [:]
        for entry in entries {
            let key = DeliveryKey(target: entry.target, device: entry.device)
            if let bound = bounds[entry.target],
               let refusal = bound.refusal(of: entry, queued: queued[entry.target] ?? 0, queuedForDevice: queuedForDevice[key] ?? 0) {
                refused.append(refusal)
                continue
            }
            held.append(entry)
            queued[entry.target, default: 0] += 1
            queuedForDevice[key, default: 0] += 1
        }
        return (held, refused)
    }

    /// One device's deliveries to one target.
    private struct DeliveryKey: Hashable {
        var target: String
        var device: String
    }
}
