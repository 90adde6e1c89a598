import GeotifyCore

extension LaneCore {
    /// Once for each book that comes into force (at the lane's next message, tick or sweep,
    /// before anything is decided with it) and once after a start: clears what the
    /// lane's devices say about fences they no longer have (a fence removed from the
    /// file, a shared set removed, a group that lost a set or a device that left a
    /// group), whether or not the file names the device. For each device of the lane
    /// (in identifier order) whose fences differ from those of the book its presence was
    /// last decided with, the retained presence topic of every fence gone is emptied
    /// (retained, QoS 1, as `PresenceMessages.removals`): of each fence the device was
    /// announced with in that book (`DeviceFences.announced`: an `outside` published at
    /// its first fix keeps no entry in its state) and of each fence its state still
    /// names. Those entries leave the state (saved), an inside one leaves the shared
    /// fence's count (`OccupancyChange.fenceRemoved` when the set lost the fence), and
    /// the state document and tracker follow.
    ///
    /// A device the earlier book named and this one does not is forgotten instead
    /// (`forget`): its state is deleted with the commit of the empty retained messages of
    /// all its topics (state, tracker, presence of every fence it was announced with or
    /// its state names, badge), and it leaves every count it was in. Nothing republishes
    /// it after a connection, and the sweep of the next start does not keep its topics.
    /// A device the file never named keeps its state, as ever (but at a start under
    /// `strictDevices`, below).
    ///
    /// After a start there is no earlier book: the states loaded name what the devices
    /// were last told, so a fence removed while the bridge was stopped is cleared for
    /// every device whose state names it. A device the book does not name is forgotten
    /// if its state was saved while the file named it (`loadedAsNamed`: removed from the
    /// file while the bridge was stopped), if the book the lane was made with named it
    /// (the book changed before the lane's first look), or under `strictDevices` (no
    /// device the file does not name may have state). A state saved before whether the
    /// file named the device was recorded counts as never named.
    ///
    /// A device the book names whose state was saved as one the file did not name (it
    /// was added to the file, or its state was saved by an earlier version) is saved
    /// again, so that its removal while the bridge is stopped is told at the next start.
    ///
    /// The lane is the only one to decide its devices' presence, so every presence it
    /// decided with the earlier book is queued before these removals, and none decided
    /// with the new book names a fence gone: a removal is never overtaken by a stale
    /// presence. For the devices the file names or named, the announcer empties the same
    /// topics (`FenceChangeAnnouncer`, after their Home Assistant configs); the lane's
    /// removals come after any value it published meanwhile, which the announcer's may
    /// not.
    mutating func leaveRemovedFences(book: FenceBook, into effects: inout LaneEffects) {
        let old = decidedWith
        if let old, old.edition.isSame(as: book.edition) { return }
        decidedWith = book
        let loadedAsNamed = self.loadedAsNamed
        self.loadedAsNamed = []
        guard devices.count > 0 else { return }
        // The fences gone from an earlier `DeviceFences` to a new one that were announced:
        // every device the file does not name has the same two, so they are worked out once.
        var goneAnnounced: [Pair: [String]] = [:]
        var changed: [(device: String, index: Int, before: DeviceFences?, fences: DeviceFences)] = []
        for (device, index) in candidates(since: old?.edition, in: book) {
            let fences = book.deviceFences(of: device)
            let before = old?.deviceFences(of: device)
            if book.knows(device), !(old?.knows(device) ?? loadedAsNamed.contains(device)) {
                effects.saves[device] = withRecord(at: index) { record in
                    record.unsavedFix = false
                    return record.state
                }
            }
            if let before, before === fences { continue }
            changed.append((device, index, before, fences))
        }
        let limit = configuration.announceLimit
        var left: [String] = []
        for (device, index, before, fences) in changed.sorted(by: { $0.device < $1.device }) {
            // Named by the book before (after a start: when its state was saved, or by
            // the book the lane was made with, which `admitted` still tells), and no
            // longer; or, at a start under `strictDevices`, not named at all.
            let wasNamed = old?.knows(device) ?? (loadedAsNamed.contains(device) || !withRecord(at: index, { $0.admitted }))
            if !book.knows(device), wasNamed || (old == nil && configuration.strictDevices) {
                forget(device, named: wasNamed, announced: before?.announced(limit: limit) ?? [], before: before, book: book, into: &effects)
                left.append(device)
                continue
            }
            var gone: [String] = []
            if let before {
                let pair = Pair(before: ObjectIdentifier(before), after: ObjectIdentifier(fences))
                if let known = goneAnnounced[pair] {
                    gone = known
                } else {
                    gone = before.announced(limit: limit).map(\.identifier).filter { fences.fence($0) == nil }
                    goneAnnounced[pair] = gone
                }
            }
            let entries = withRecord(at: index) { $0.state.fences }.filter { fences.fence($0.fence) == nil }
            for entry in entries where !gone.contains(entry.fence) { gone.append(entry.fence) }
            for fence in gone {
                keep(.presence, in: &effects.outbox) { configuration.presence.presenceRemoval(of: device, fence: fence) }
            }
            guard !entries.isEmpty else { continue }
            let state = withRecord(at: index) { record in
                record.state.fences.removeAll { entry in fences.fence(entry.fence) == nil }
                return record.state
            }
            effects.saves[device] = state
            for entry in entries where entry.inside {
                Self.leaveOccupancy(of: device, fence: entry.fence, book: book, into: &effects)
                if let set = before?.owner(of: entry.fence), book.shared[set.owner]?.fence(entry.fence) == nil {
                    effects.occupancy.append(
                        OccupancyChange(owner: set.owner, fence: entry.fence, device: device, inside: false, fenceRemoved: true))
                }
            }
            if entries.contains(where: \.inside) {
                publishState(of: device, at: index, fences: fences, into: &effects)
            }
        }
        if !left.isEmpty {
            effects.log(
                .info, at: configuration.logLevel,
                "forgot \(Counted(left.count, "device")) the fence file does not name (\(left.prefix(5).joined(separator: ", "))\(left.count > 5 ? ", ..." : "")): their state and retained topics")
        }
    }

    /// The devices of the lane (with their slots) whose fences may differ between the
    /// book of `edition` and `book`: those `book`'s lineage names (`FenceBookLineage`:
    /// a command changed a few devices' fences), or every device when `edition` is not a
    /// forebear it remembers or there is none (a start).
    mutating func candidates(since edition: FenceBookEdition?, in book: FenceBook) -> [(device: String, slot: Int)] {
        let candidates: [(device: String, slot: Int)]
        if let edition, let changed = book.lineage.devicesChanged(since: edition) {
            candidates = changed.compactMap { device in devices.slot(of: device).map { (device, $0) } }
        } else {
            candidates = devices.slotsByDevice.map { ($0.key, $0.value) }
        }
        devicesReconsidered += candidates.count
        return candidates
    }

    /// Two `DeviceFences` objects, before and after a change of book.
    private struct Pair: Hashable {
        var before: ObjectIdentifier
        var after: ObjectIdentifier
    }
}
