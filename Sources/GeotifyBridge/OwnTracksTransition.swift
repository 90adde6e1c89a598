import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// Builds an OwnTracks `transition` message from a notification, so that the OwnTracks
/// apps and Home Assistant's OwnTracks integration show Geotify's entries and exits as
/// their own region events (https://owntracks.org/booklet/tech/json/, `_type=transition`):
///
/// ```json
/// {"_type":"transition","event":"enter","desc":"home","rid":"home","wtst":1325519872,
///  "lat":52.52,"lon":13.405,"acc":12,"tst":1700000060,"tid":"ne","t":"c"}
/// ```
///
/// on `owntracks/<user>/<device>/event`, QoS 1, not retained (the apps publish
/// transitions unretained). The fields:
/// - `event`: `enter`, or `leave` for an exit. OwnTracks has no dwell event, so a dwell
///   notification gives no message.
/// - `desc` and `rid`: as the fence's waypoint has them (`FenceExport.ownTracksWaypoint`):
///   `desc` the fence's name, else its identifier; `rid` its OwnTracks region ID, else
///   its identifier. `desc` is the region's name; Home Assistant's OwnTracks integration
///   looks the zone up by it (`home` is its home; `homeassistant/components/owntracks/
///   messages.py`, `async_handle_transition_message`).
/// - `wtst`: the region's creation time, which Geotify does not know: a stable stand-in
///   derived from the fence identifier (`FenceExport.ownTracksCreationTime(of:)`), the
///   same `tst` the fence has when pushed to the phone with `setWaypoints`.
/// - `lat`, `lon`, `acc`, `tst`: the fix that decided the transition, times as whole
///   seconds; `acc` only when the fix had one (the apps leave out unknown values).
/// - `tid`: the tracker id, by OwnTracks' own default the last two characters of the
///   topic, that is of the device identifier.
/// - `t`: `c`, a circular region's trigger.
package struct OwnTracksTransition: Sendable {
    package let topics: OwnTracksTopics

    /// The OwnTracks event of each transition kind that has one.
    private static let events: [TransitionKind: String] = [.enter: "enter", .exit: "leave"]

    package init(topics: OwnTracksTopics) {
        self.topics = topics
    }

    /// The transition message of `notification`, or nil when its kind has no OwnTracks
    /// event (dwell) or its device does not fit the OwnTracks filter.
    package func message(_ notification: Notification) -> OutboxMessage? {
        guard let event = OwnTracksTransition.events[notification.kind],
              let topic = topics.event(of: notification.device)
        else { return nil }
        let fix = notification.transition.fix
        var object = JSONObjectWriter()
        object.string("_type", "transition")
        object.string("event", event)
        let fence = notification.transition.fence
        object.string("desc", fence.name ?? fence.identifier)
        object.string("rid", fence.regionID ?? fence.identifier)
        object.number("wtst", Double(FenceExport.ownTracksCreationTime(of: fence.identifier)))
        object.number("lat", fix.coordinate.latitude)
        object.number("lon", fix.coordinate.longitude)
        if let accuracy = fix.accuracy { object.number("acc", accuracy) }
        object.number("tst", fix.timestamp.rounded(.down))
        object.string("tid", OwnTracksTransition.trackerID(of: notification.device))
        object.string("t", "c")
        return OutboxMessage(topic: topic, payload: object.bytes(), qos: 1, retain: false)
    }

    /// The tracker id shown for `device`: its last two characters, as the OwnTracks apps
    /// default it from their topic (https://owntracks.org/booklet/tech/json/, `_type=location` notes).
    package static func trackerID(of device: String) -> String {
        String(device.suffix(2))
    }
}
