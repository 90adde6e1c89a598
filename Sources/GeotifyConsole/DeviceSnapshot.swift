import GeotifyJSON

/// One device as the map shows it: where it was last seen, how sure, its badge and the
/// fences it is inside.
package struct DeviceSnapshot: Sendable, Equatable {
    /// A position the device reported.
    package struct Position: Sendable, Equatable {
        package var latitude: Double
        package var longitude: Double
        /// Metres; nil when the tracker did not say.
        package var accuracy: Double?
        /// The fix's time, seconds since 1970.
        package var timestamp: Double

        package init(latitude: Double, longitude: Double, accuracy: Double?, timestamp: Double) {
            self.latitude = latitude
            self.longitude = longitude
            self.accuracy = accuracy
            self.timestamp = timestamp
        }
    }

    package var device: String
    /// Nil until the device's first fix.
    package var position: Position?
    package var badge: Int
    /// The identifiers of the fences (own or shared) it is inside.
    package var inside: [String]

    package init(device: String, position: Position?, badge: Int, inside: [String]) {
        self.device = device
        self.position = position
        self.badge = badge
        self.inside = inside
    }

    /// `{"device", "lat", "lon", "acc", "tst", "badge", "inside"}`, the position members
    /// only when there is one (`acc` only when known), as `geotify/state/<device>`
    /// spells them.
    package var json: JSON {
        var object = JSONObject()
        object["device"] = .string(device)
        if let position {
            object["lat"] = .number(position.latitude)
            object["lon"] = .number(position.longitude)
            if let accuracy = position.accuracy { object["acc"] = .number(accuracy) }
            object["tst"] = .number(position.timestamp)
        }
        object["badge"] = .number(Double(badge))
        object["inside"] = .array(inside.map(JSON.string))
        return .object(object)
    }
}
