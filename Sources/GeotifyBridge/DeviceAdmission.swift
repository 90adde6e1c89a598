import GeotifyCore
import Synchronization

/// Which devices the fence file does not name may have state, across all lanes, so that
/// a tracker inventing device ids can neither exhaust memory and the state database nor
/// lock everybody else out:
///
/// - devices the fence file names are always admitted and not counted here;
/// - any other device counts against its owner (the first level of its id: the OwnTracks
///   user) and against the bridge: at most `perOwner` each owner, at most `maximum` in all;
/// - when the bridge is full, a lane may make room by evicting one of its own unnamed
///   devices that has not sent a position for a while (`LaneCore` picks the least
///   recently seen) and releasing it here.
///
/// It is the one piece of lane decision state shared between lanes, and is only asked
/// about devices never seen before, so the lock is off the per-message path.
package final class DeviceAdmission: Sendable {
    /// The outcome of asking to admit a device.
    package enum Decision: Sendable, Equatable {
        case admitted
        /// Its owner has `perOwner` devices already.
        case ownerFull
        /// The bridge has `maximum` unnamed devices already.
        case full
    }

    private struct Count {
        var total = 0
        var owners: [Substring: Int] = [:]
    }

    private let count = Mutex(Count())
    package let maximum: Int
    package let perOwner: Int

    /// An admission with these limits, counting the unnamed devices already kept.
    package init(maximum: Int, perOwner: Int, devices: [String] = []) {
        self.maximum = maximum
        self.perOwner = perOwner
        count.withLock { count in
            for device in devices {
                count.total += 1
                count.owners[Self.owner(of: device), default: 0] += 1
            }
        }
    }

    /// The owner of a device: the first level of its id (`alice` of `alice/phone`), as
    /// MQTT cuts levels (`TopicLevels`), so a combining mark after the slash
    /// (`alice/\u{301}x`, whose characters hold no lone '/') does not make a new owner.
    package static func owner(of device: String) -> Substring {
        TopicLevels.first(of: device)
    }

    /// Admits the unnamed `device`, or says which limit stops it.
    package func admit(_ device: String) -> Decision {
        let owner = Self.owner(of: device)
        return count.withLock { count in
            if count.owners[owner, default: 0] >= perOwner { return .ownerFull }
            if count.total >= maximum { return .full }
            count.total += 1
            count.owners[owner, default: 0] += 1
            return .admitted
        }
    }

    /// Gives back the place of an unnamed device whose state was dropped.
    package func release(_ device: String) {
        let owner = Self.owner(of: device)
        count.withLock { count in
            count.total -= 1
            if let held = count.owners[owner], held > 1 {
                count.owners[owner] = held - 1
            } else {
                count.owners[owner] = nil
            }
        }
    }

    /// The unnamed devices admitted now.
    package var admitted: Int { count.withLock { $0.total } }

    /// The owners counted now: those with an unnamed device admitted (read by tests).
    package var ownersCounted: Int { count.withLock { $0.owners.count } }
}
