import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// Builds the OwnTracks `setWaypoints` command that installs a device's fences on the
/// phone as OwnTracks regions, so the app shows them and monitors them itself
/// (https://owntracks.org/booklet/tech/json/, `_type=cmd`):
///
/// ```json
/// {"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":[
///   {"_type":"waypoint","desc":"home","lat":52.52,"lon":13.405,"rad":100,
///    "tst":1325519872,"rid":"home"}]}}
/// ```
///
/// on `owntracks/<user>/<device>/cmd`, QoS 1, not retained: a retained command would be
/// replayed at every reconnection of the app, and the apps merge what they receive. The
/// phone must allow remote commands (the app's `cmd` setting).
///
/// Each waypoint is `FenceExport.ownTracksWaypoint`: `desc` the fence's name (else its
/// identifier), `rid` its region ID (else its identifier), the circle's centre and
/// radius, and a stable stand-in `tst`. The apps key waypoints by `rid` (`tst` or `desc`
/// in older versions), all stable per fence, so pushing an edited fence updates its
/// region instead of adding one. Fences that are not circles have no OwnTracks
/// equivalent and are left out.
package struct OwnTracksWaypoints: Sendable {
    package let topics: OwnTracksTopics

    /// The latitude and longitude of a waypoint that tells the iOS app to delete it: an
    /// invalid position removes the waypoint of that `desc`.
    package static let deletedPosition = -1_000_000.0

    package init(topics: OwnTracksTopics) {
        self.topics = topics
    }

    /// The `setWaypoints` command for `device` with `fences` (its circular fences, in
    /// order), plus a deletion entry for each fence in `removed`, under the name and region
    /// id the app knows it by; nil when the device does not fit the OwnTracks filter or
    /// there is nothing to send.
    package func command(for device: String, fences: [Fence], removed: [Fence] = []) -> OutboxMessage? {
        guard let topic = topics.command(of: device) else { return nil }
        var waypoints = fences.compactMap(FenceExport.ownTracksWaypoint)
        for fence in removed {
            waypoints.append([
                "_type": "waypoint",
                "desc": .string(fence.name ?? fence.identifier),
                "lat": .number(OwnTracksWaypoints.deletedPosition),
                "lon": .number(OwnTracksWaypoints.deletedPosition),
                "rad": 0,
                "tst": .number(Double(FenceExport.ownTracksCreationTime(of: fence.identifier))),
                "rid": .string(fence.regionID ?? fence.identifier),
            ])
        }
        guard !waypoints.isEmpty else { return nil }
        let command: JSON = [
            "_type": "cmd",
            "action": "setWaypoints",
            "waypoints": ["_type": "waypoints", "waypoints": .array(waypoints)],
        ]
        return OutboxMessage(topic: topic, payload: JSONWriter().bytes(command), qos: 1, retain: false)
    }
}
