/// What a device is known to be in relation to one fence, when that is anything but
/// "outside, settled".
///
/// Device state keeps these only for fences the device is inside or about to change
/// for; every other fence the device has seen is outside. That keeps state small
/// however many fences exist.
public struct FenceState: Sendable, Hashable {
    // Stored in this order, with a pending change (rare) out of line, so an entry is 40
    // bytes instead of 64: a fix reads every entry of its device.
    /// The fence's identifier.
    public var fence: String
    /// When the published relation began (the timestamp of the fix that showed it).
    public var since: Double
    /// A change seen but not yet published (minimum duration).
    public var pending: PendingChange? {
        get { pendingBox?.change }
        set { pendingBox = newValue.map(PendingBox.init) }
    }
    /// Where `pending` is kept.
    private var pendingBox: PendingBox?
    /// The published relation.
    public var inside: Bool
    /// Whether this stay's dwell transition has fired.
    public var dwelled: Bool
    /// False while no fix has been confident enough to say whether the device is inside
    /// (its first fixes were too coarse or too close to the edge); `inside` is then false
    /// but means "unknown", and the first confident fix establishes the relation silently.
    public var established: Bool

    public init(
        fence: String, inside: Bool = true, since: Double, pending: PendingChange? = nil, dwelled: Bool = false,
        established: Bool = true
    ) {
        self.fence = fence
        self.inside = inside
        self.since = since
        pendingBox = pending.map(PendingBox.init)
        self.dwelled = dwelled
        self.established = established
    }

    public static func == (lhs: FenceState, rhs: FenceState) -> Bool {
        lhs.fence == rhs.fence && lhs.since == rhs.since && lhs.inside == rhs.inside && lhs.dwelled == rhs.dwelled
            && lhs.established == rhs.established && (lhs.pendingBox === rhs.pendingBox || lhs.pending == rhs.pending)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(fence)
        hasher.combine(since)
        hasher.combine(pending)
        hasher.combine(inside)
        hasher.combine(dwelled)
        hasher.combine(established)
    }

    /// Whether this state says nothing beyond the default (outside, established,
    /// nothing pending), so it need not be kept.
    @inlinable
    public var isSettledOutside: Bool { !inside && pending == nil && established }
}
