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
/// Each waypoint (https://owntracks.org/booklet/tech/json/, `_type=waypoint`) has `desc` and
/// `rid` = the fence identifier, the circle's centre and radius (`rad` in whole metres),
/// and `tst` = `creationTime(of:)`. The apps key waypoints by `desc` (iOS) or `tst`, both
/// stable per identifier, so pushing an edited fence updates its region instead of
/// adding one. Fences that are not circles have no OwnTracks equivalent and are left out.
public struct OwnTracksWaypoints: Sendable {
    public let topics: OwnTracksTopics

    /// The latitude and longitude of a waypoint that tells the iOS app to delete it: an
    /// invalid position removes the waypoint of that `desc`.
    public static let deletedPosition = -1_000_000.0

    public init(topics: OwnTracksTopics) {
        self.topics = topics
    }

    /// The `setWaypoints` command for `device` with `fences` (its circular fences, in
    /// order), plus a deletion entry for each identifier in `removed`; nil when the device
    /// does not fit the OwnTracks filter or there is nothing to send.
    public func command(for device: String, fences: [Fence], removed: [String] = []) -> OutboxMessage? {
        guard let topic = topics.command(of: device) else { return nil }
        var waypoints: [JSON] = []
        for fence in fences {
            guard case .circle(let center, let radius) = fence.region else { continue }
            waypoints.append(OwnTracksWaypoints.waypoint(
                fence.identifier, latitude: center.latitude, longitude: center.longitude, radius: radius.rounded()))
        }
        for identifier in removed {
            waypoints.append(OwnTracksWaypoints.waypoint(
                identifier, latitude: OwnTracksWaypoints.deletedPosition, longitude: OwnTracksWaypoints.deletedPosition, radius: 0))
        }
        guard !waypoints.isEmpty else { return nil }
        let command: JSON = [
            "_type": "cmd",
            "action": "setWaypoints",
            "waypoints": ["_type": "waypoints", "waypoints": .array(waypoints)],
        ]
        return OutboxMessage(topic: topic, payload: JSONWriter().bytes(command), qos: 1, retain: false)
    }

    /// The stand-in creation time of the fence `identifier`, in seconds since 1970: a
    /// stable hash of the identifier mapped into 2001-09-09 ... 2017-07-14, a plausible
    /// past date that is the same on every run and every device. OwnTracks uses it as the
    /// waypoint's `tst` and the transition's `wtst`; Geotify records no real creation time.
    public static func creationTime(of identifier: String) -> Int {
        1_000_000_000 + Int(StableHash.fnv1a(identifier) % 500_000_000)
    }

    private static func waypoint(_ identifier: String, latitude: Double, longitude: Double, radius: Double) -> JSON {
        [
            "_type": "waypoint",
            "desc": .string(identifier),
            "lat": .number(latitude),
            "lon": .number(longitude),
            "rad": .number(radius),
            "tst": .number(Double(creationTime(of: identifier))),
            "rid": .string(identifier),
        ]
    }
}
