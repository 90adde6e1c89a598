import GeotifyCore

extension LaneCore {
    /// Clears those of `found` (retained topics of this lane's devices that the broker
    /// held at the start, `RetainedCollection`) that `sweep` finds stale with `book`, the
    /// book in force now, and the devices whose state the lane keeps now: an empty
    /// retained message each, in the outbox after everything the lane decided before, so
    /// no clear overtakes a presence published meanwhile and none follows one it should
    /// not (a device that sent its first position during the collection has state by
    /// now, a fence added since is in `book`). Counted in `sweepCleared`. A new book is
    /// first looked at for removed fences (`leaveRemovedFences`), so a device the start
    /// forgets (removed from the file while the bridge was stopped) has no state the
    /// sweep would keep its topics for, even when the sweep comes before the lane's
    /// first tick.
    mutating func clearStale(_ found: [RetainedTopic], sweep: RetainedSweep, book: FenceBook, into effects: inout LaneEffects) {
        leaveRemovedFences(book: book, into: &effects)
        let clears = sweep.clearances(of: found, book: book, holdsState: { devices.slot(of: $0) != nil })
        guard !clears.isEmpty else { return }
        effects.outbox += clears
        effects.counters.add(.sweepCleared, clears.count)
        effects.log(.info, at: configuration.logLevel, "clearing \(clears.count) retained topics of devices' fences and devices removed while the bridge was stopped")
    }
}
