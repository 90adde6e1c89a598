/// Which transitions of a fence produce a notification: the app's "On Entry" / "On Exit"
/// switch, widened so one fence can notify on both.
public struct EventType: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Notify when the device enters the fence.
    public static let onEntry = EventType(rawValue: 1 << 0)
    /// Notify when the device leaves the fence.
    public static let onExit = EventType(rawValue: 1 << 1)

    /// The spellings accepted in fence files and commands: Geotify's own and the iOS
    /// app's saved values ("On Entry", "On Exit"), so its exports import as they are.
    public static let spellings: [String: EventType] = [
        "onEntry": .onEntry,
        "onExit": .onExit,
        "onEntryAndExit": [.onEntry, .onExit],
        "On Entry": .onEntry,
        "On Exit": .onExit,
    ]

    /// The event type named `name`, in any accepted spelling.
    public init?(name: String) {
        guard let value = EventType.spellings[name] else { return nil }
        self = value
    }

    /// The canonical name Geotify writes.
    public var name: String {
        switch self {
        case .onEntry: "onEntry"
        case .onExit: "onExit"
        default: "onEntryAndExit"
        }
    }

    /// The canonical names, for error messages.
    public static let canonicalNames = ["onEntry", "onExit", "onEntryAndExit"]

    /// Whether a transition of `kind` is one this fence notifies about.
    public func notifies(_ kind: TransitionKind) -> Bool {
        switch kind {
        case .enter: contains(.onEntry)
        case .exit: contains(.onExit)
        }
    }
}
