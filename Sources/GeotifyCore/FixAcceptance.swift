/// Which fixes are evaluated at all, judged by their own timestamp against the device's
/// last accepted fix and the clock: older than the last one (a stale replay), older than
/// `maximumAge`, or further in the future than `maximumFutureSkew` allows.
public struct FixAcceptance: Sendable, Hashable {
    /// Seconds; older fixes are dropped. 0 turns the check off.
    public var maximumAge: Double
    /// Seconds a fix's time may be ahead of the clock (device clocks drift).
    public var maximumFutureSkew: Double

    public init(maximumAge: Double = 86_400, maximumFutureSkew: Double = 300) {
        self.maximumAge = maximumAge
        self.maximumFutureSkew = maximumFutureSkew
    }

    /// Why a fix is dropped before evaluation.
    public enum Drop: String, Sendable, Hashable, CaseIterable {
        /// Older than the device's last accepted fix.
        case outOfOrder = "out_of_order"
        /// Older than `maximumAge`.
        case tooOld = "too_old"
        /// Further in the future than `maximumFutureSkew`.
        case future
    }

    /// Why `fix` must be dropped, or nil when it may be evaluated; `now` is the clock.
    public func drop(_ fix: Fix, lastAccepted: Double?, now: Double) -> Drop? {
        if fix.timestamp - now > maximumFutureSkew { return .future }
        if maximumAge > 0 && now - fix.timestamp > maximumAge { return .tooOld }
        if let lastAccepted, fix.timestamp < lastAccepted { return .outOfOrder }
        return nil
    }
}
