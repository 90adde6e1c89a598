import GeotifyCore

/// Which devices a target hears about, written like an MQTT subscription over device ids:
/// `alice/phone` is that device, `+` stands for one level (`+/phone`), and a final `#` for
/// any number of levels, none included (`alice/#` is `alice`, `alice/phone`, `alice/car/1`;
/// `#` alone is every device).
///
/// Levels are cut and compared byte by byte, as MQTT does and as the bridge reads device
/// identifiers (`TopicLevels`).
package struct DeviceFilter: Sendable, Equatable, CustomStringConvertible {
    package let pattern: String
    /// The pattern's levels as bytes.
    private let levels: [[UInt8]]

    /// A filter; throws when `pattern` is empty or uses a wildcard the way MQTT does not
    /// allow (`#` not a whole last level, `+` not a whole level).
    package init(_ pattern: String) throws(DeliverySettingsError) {
        guard !pattern.isEmpty else { throw DeliverySettingsError("a device filter must not be empty") }
        let levels = TopicLevels.split(pattern)
        switch TopicLevels.wildcardMisuse(in: levels) {
        case .hashNotWholeLastLevel?:
            throw DeliverySettingsError("in the device filter \"\(pattern)\", '#' must be a whole level and the last one")
        case .plusNotWholeLevel?:
            throw DeliverySettingsError("in the device filter \"\(pattern)\", '+' must be a whole level")
        case nil:
            break
        }
        self.pattern = pattern
        self.levels = levels.map(Array.init)
    }

    package var description: String { pattern }

    /// Whether `device` is one of the devices the filter names.
    package func matches(_ device: String) -> Bool {
        let parts = TopicLevels.split(device)
        for (index, level) in levels.enumerated() {
            if TopicLevels.isHash(level) { return true }
            guard index < parts.count, TopicLevels.isPlus(level) || parts[index].elementsEqual(level) else { return false }
        }
        return parts.count == levels.count
    }
}
