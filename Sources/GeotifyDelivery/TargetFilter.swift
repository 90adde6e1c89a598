import GeotifyCore

/// Which notifications go to a target: from which devices, about which fences, of which
/// kinds. Each part left out of the settings lets everything through.
package struct TargetFilter: Sendable, Equatable {
    /// Any of these must match the device; empty means every device.
    package var devices: [DeviceFilter] = []
    /// The fence identifiers; nil means every fence.
    package var fences: Set<String>?
    /// The transition kinds.
    package var events: Set<TransitionKind> = Set(TransitionKind.allCases)

    package init(devices: [DeviceFilter] = [], fences: Set<String>? = nil, events: Set<TransitionKind> = Set(TransitionKind.allCases)) {
        self.devices = devices
        self.fences = fences
        self.events = events
    }

    /// Whether a notification of `kind` about `device` at `fence` passes.
    package func matches(device: String, fence: String, kind: TransitionKind) -> Bool {
        events.contains(kind)
            && (fences?.contains(fence) ?? true)
            && (devices.isEmpty || devices.contains { $0.matches(device) })
    }
}
