import GeotifyConsole
import GeotifyCore

extension LaneCore {
    /// What the web console is told of the devices `observed` (`LaneEffects.observed`)
    /// after the batch that observed them: each device once, in the order first
    /// observed, with its state as it is now (`device`), or as forgotten
    /// (`deviceForgotten`) when the lane keeps it no longer. The state after the batch
    /// stands for every change of the device in it, so a position and then the
    /// forgetting come as the forgetting, and the forgetting and then a position (a new
    /// device of the same name) as that position: neither overtakes the other.
    package func liveUpdates(of observed: [String]) -> [ConsoleUpdate] {
        var seen: Set<String> = []
        return observed.compactMap { device in
            guard seen.insert(device).inserted else { return nil }
            return state(of: device).map { .device(Self.snapshot(of: device, $0)) } ?? .deviceForgotten(device)
        }
    }

    /// `device` with `state` as the web console shows it.
    static func snapshot(of device: String, _ state: DeviceState) -> DeviceSnapshot {
        DeviceSnapshot(
            device: device,
            position: state.lastFix.map {
                DeviceSnapshot.Position(
                    latitude: $0.coordinate.latitude, longitude: $0.coordinate.longitude, accuracy: $0.accuracy,
                    timestamp: $0.timestamp)
            },
            badge: state.badge, inside: state.fences.filter(\.inside).map(\.fence))
    }
}
