/// Which devices a target hears about, written like an MQTT subscription over device ids:
/// `alice/phone` is that device, `+` stands for one level (`+/phone`), and a final `#` for
/// any number of levels, none included (`alice/#` is `alice`, `alice/phone`, `alice/car/1`;
/// `#` alone is every device).
package struct DeviceFilter: Sendable, Equatable, CustomStringConvertible {
    package let pattern: String
    private let levels: [Substring]

    /// A filter; throws when `pattern` is empty or uses a wildcard the way MQTT does not
    /// allow (`#` not a whole last level, `+` not a whole level).
    package init(_ pattern: String) throws(DeliverySettingsError) {
        guard !pattern.isEmpty else { throw DeliverySettingsError("a device filter must not be empty") }
        let levels = pattern.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("#") && (level != "#" || index != levels.count - 1) {
                throw DeliverySettingsError("in the device filter \"\(pattern)\", '#' must be a whole level and the last one")
            }
            if level.contains("+") && level != "+" {
                throw DeliverySettingsError("in the device filter \"\(pattern)\", '+' must be a whole level")
            }
        }
        self.pattern = pattern
        self.levels = levels
    }

    package var description: String { pattern }

    /// Whether `device` is one of the devices the filter names.
    package func matches(_ device: String) -> Bool {
        let parts = device.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level == "#" { return true }
            guard index < parts.count, level == "+" || parts[index] == level else { return false }
        }
        return parts.count == levels.count
    }
}
