import GeotifyCore

extension LaneCore {
    /// Clears those of `found` (retained topics of this lane's devices that the broker
    /// held at the start, `RetainedCollection`) that `sweep` finds stale with `book`, the
    /// book in force now, and the devices whose state the lane keeps now: an empty
    /// retained message each, in the outbox after everything the lane decided before, so
    /// no clear overtakes a presence published meanwhile and none follows one it should
    /// not (a device that sent its first position during the collection has state by
    /// now, a fence added since is in `book`). Counted in `sweepCleared`.
    mutating func clearStale(_ found: [RetainedTopic], sweep: RetainedSweep, book: FenceBook, into effects: inout LaneEffects) {
        let clears = sweep.clearances(of: found, book: book, holdsState: { devices.slot(of: $0) != nil })
        guard !clears.isEmpty else { return }
        effects.outbox += clears
        effects.counters.add(.sweepCleared, clears.count)
        effects.log(.info, at: configuration.logLevel, "clearing \(clears.count) retained topics of devices' fences and devices removed while the bridge was stopped")
    }
}
