import GeotifyJSON
import GeotifyStore

/// One of the retained topics the bridge keeps for each device (`Settings.deviceTopics`).
/// The state document says what the three others say, so a deployment whose
/// subscribers read only it can leave them out: the broker then handles three messages
/// a transition instead of six (with the notification and the OwnTracks transition),
/// and one instead of one a fence for a device's first fix. What is left out is cleared
/// after each connection (`PresenceMessages.clearances`).
package enum DeviceTopic: String, CaseIterable, Sendable {
    /// `geotify/state/<device>`: the state document (`PresenceMessages.state`).
    case state
    /// `geotify/presence/<device>/<fence>`: `inside` or `outside`, one topic a fence.
    case presence
    /// `geotify/tracker/<device>`: the fence the device is in, or `not_home`.
    case tracker
    /// `geotify/badge/<device>`: the badge count.
    case badge

    /// The topic's bit in a set of topics kept as bits (`LaneConfiguration.keeps`).
    package var bit: UInt8 {
        switch self {
        case .state: 1
        case .presence: 2
        case .tracker: 4
        case .badge: 8
        }
    }

    /// The bits of `topics`.
    package static func bits(of topics: some Sequence<DeviceTopic>) -> UInt8 {
        topics.reduce(0) { $0 | $1.bit }
    }

    /// The topics Home Assistant's discovered entities read: the tracker reads the state
    /// document, each presence sensor its fence's presence topic, the badge sensor the
    /// badge topic (`HomeAssistantDiscovery`).
    package static let readByHomeAssistant: [DeviceTopic] = [.state, .presence, .badge]

    /// The topics listed in `value`, a JSON array of their names, in this type's order
    /// (a name given twice counts once); a name that is none of them is refused as any
    /// other choice is (`JSONField.choice`), naming its place in the array.
    package static func list(_ value: JSON, key: String) throws(FenceIssue) -> [DeviceTopic] {
        let choices = allCases.map { ($0.rawValue, $0) }
        var chosen = Set<DeviceTopic>()
        for (index, name) in try JSONField.strings(value, key: key).enumerated() {
            chosen.insert(try JSONField.choice(.string(name), key: "\(key)[\(index)]", among: choices))
        }
        return allCases.filter(chosen.contains)
    }
}
