/// Which transitions of a fence produce a notification: the app's "On Entry" / "On Exit"
/// switch, widened so one fence can notify on several, and on dwelling.
public struct EventType: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Notify when the device enters the fence.
    public static let onEntry = EventType(rawValue: 1 << 0)
    /// Notify when the device leaves the fence.
    public static let onExit = EventType(rawValue: 1 << 1)
    /// Notify when the device has stayed inside for the fence's dwell time.
    public static let onDwell = EventType(rawValue: 1 << 2)

    /// The spellings of one value accepted in fence files and commands: Geotify's own
    /// and the iOS app's saved values ("On Entry", "On Exit"), so its exports import as
    /// they are. Several can be combined in a JSON array.
    public static let spellings: [String: EventType] = [
        "onEntry": .onEntry,
        "onExit": .onExit,
        "onDwell": .onDwell,
        "onEntryAndExit": [.onEntry, .onExit],
        "On Entry": .onEntry,
        "On Exit": .onExit,
    ]

    /// The event type named `name`, in any accepted spelling.
    public init?(name: String) {
        guard let value = EventType.spellings[name] else { return nil }
        self = value
    }

    /// The canonical names of the parts, in a fixed order: `onEntry`, `onExit`, `onDwell`.
    public var names: [String] {
        [(EventType.onEntry, "onEntry"), (.onExit, "onExit"), (.onDwell, "onDwell")]
            .filter { contains($0.0) }.map(\.1)
    }

    /// The single canonical name when there is one (`onEntry`, `onExit`, `onDwell`,
    /// `onEntryAndExit`); nil for other combinations, which are written as arrays.
    public var name: String? {
        switch self {
        case .onEntry: "onEntry"
        case .onExit: "onExit"
        case .onDwell: "onDwell"
        case [.onEntry, .onExit]: "onEntryAndExit"
        default: nil
        }
    }

    /// The canonical names, for error messages.
    public static let canonicalNames = ["onEntry", "onExit", "onEntryAndExit", "onDwell"]

    /// Whether a transition of `kind` is one this fence notifies about.
    @inlinable
    public func notifies(_ kind: TransitionKind) -> Bool {
        switch kind {
        case .enter: contains(.onEntry)
        case .exit: contains(.onExit)
        case .dwell: contains(.onDwell)
        }
    }
}
