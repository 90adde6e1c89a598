/// What a device is known to be in relation to one fence, when that is anything but
/// "outside, settled".
///
/// Device state keeps these only for fences the device is inside or about to change
/// for (and, until its next fix of a later time, one it left with `repeats` to
/// count); every other fence the device has seen is outside. That keeps state small
/// however many fences exist.
public struct FenceState: Sendable, Hashable {
    // Stored in this order, with a pending change (rare) out of line, so an entry is 40
    // bytes instead of 64: a fix reads every entry of its device. `repeats` takes four
    // of the five bytes of padding after the three flags, so it costs no space.
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
    /// How many changes of the relation happened at `since` before the one that began it:
    /// 0 unless fixes sharing one time (a `tst` in whole seconds, a repeated message)
    /// took the device across the fence's edge and back. What tells the second entry
    /// (exit, dwell) at one time from the first (`Transition.occurrence`). An entry
    /// outside with repeats is kept until a fix of a later time, so a change back at
    /// the same time still counts them.
    public var repeats: UInt32

    public init(
        fence: String, inside: Bool = true, since: Double, pending: PendingChange? = nil, dwelled: Bool = false,
        established: Bool = true, repeats: UInt32 = 0
    ) {
        self.fence = fence
        self.inside = inside
        self.since = since
        pendingBox = pending.map(PendingBox.init)
        self.dwelled = dwelled
        self.established = established
        self.repeats = repeats
    }

    public static func == (lhs: FenceState, rhs: FenceState) -> Bool {
        lhs.fence == rhs.fence && lhs.since == rhs.since && lhs.inside == rhs.inside && lhs.dwelled == rhs.dwelled
            && lhs.established == rhs.established && lhs.repeats == rhs.repeats
            && (lhs.pendingBox === rhs.pendingBox || lhs.pending == rhs.pending)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(fence)
        hasher.combine(since)
        hasher.combine(pending)
        hasher.combine(inside)
        hasher.combine(dwelled)
        hasher.combine(established)
        hasher.combine(repeats)
    }

    /// Which relation of its kind beginning at `since` this is, 1 for the first: the
    /// relation alternates, so every second earlier change at that time began one of
    /// the same kind (a stay, or a time outside).
    @inlinable
    public var occurrence: Int { Int(repeats / 2) + 1 }

    /// Whether this state says nothing beyond the default (outside, established,
    /// nothing pending, no changes at its time to count), so it need not be kept.
    @inlinable
    public var isSettledOutside: Bool { !inside && pending == nil && established && repeats == 0 }
}
