import Synchronization

/// The `maximumDevices` limit across all lanes: how many devices the bridge keeps state
/// for, so a flood of made-up device names cannot exhaust memory or the state database.
final class DeviceAdmission: Sendable {
    private struct Count {
        var devices: Int
        var refusedBefore = false
    }

    private let count: Mutex<Count>
    let maximum: Int

    init(maximum: Int, devices: Int) {
        self.maximum = maximum
        count = Mutex(Count(devices: devices))
    }

    /// Admits one new device; false when the limit is reached. `firstRefusal` tells the
    /// caller to log the limit clearly once rather than on every refused position.
    func admit() -> (admitted: Bool, firstRefusal: Bool) {
        count.withLock { count in
            if count.devices < maximum {
                count.devices += 1
                return (true, false)
            }
            defer { count.refusedBefore = true }
            return (false, !count.refusedBefore)
        }
    }
}
