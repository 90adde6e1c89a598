import Foundation

/// Decides what a fix means for a device: which fences it crossed, which crossings
/// notify, and when a stay becomes a dwell. A pure function of (device state, fix,
/// fences, clock value); no I/O.
///
/// The rules (see `TransitionRules` and `Containment`): fixes out of order, too old or
/// from the future are dropped; a fix too inaccurate for a fence does not decide it; a
/// fix decides only when it is inside or outside with confidence, otherwise the state
/// holds (hysteresis); a new relation must hold for `minimumDuration` before it is
/// published; a stay of `dwell` seconds fires one dwell transition. The first fix of a
/// device, and the first fix after a fence was added, only establishes the relation,
/// as iOS does when it starts monitoring a region the device is already in, unless
/// `initialTrigger` says otherwise.
///
/// Every transition carries the time it happened, taken from fix timestamps (a
/// debounced change from the fix that first showed it, a dwell from entry + dwell), so
/// replaying the same fixes gives the same transitions whether timers fired in between
/// or not. Fixes may share a time; a transition of a kind its fence already had at that
/// time says which one it is (`Transition.occurrence`, counted in `FenceState.repeats`),
/// and a fix at the time of the one before establishes no fence, so that no two
/// notifications of a device have the same id.
public struct Evaluator: Sendable {
    /// The global rules; each fence may override them.
    public var rules: TransitionRules
    /// Which fixes are evaluated at all.
    public var acceptance: FixAcceptance

    public init(rules: TransitionRules = TransitionRules(), acceptance: FixAcceptance = FixAcceptance()) {
        self.rules = rules
        self.acceptance = acceptance
    }

    /// Evaluates `fix` against `fences` (the device's fences at book `revision`) with the
    /// clock at `now`, updating `state`.
    ///
    /// The fences the device has state for (inside, pending, undecided) are evaluated
    /// first, then the other fences whose bounding box contains the fix: a fence far
    /// away from a device that is outside it cannot change anything. Fences that no
    /// longer apply are forgotten (and listed in `Evaluation.forgotten` when the device
    /// was inside).
    public func evaluate(_ fix: Fix, fences: DeviceFences, revision: Int, now: Double, state: inout DeviceState) -> Evaluation {
        // What the evaluation reads first, asked for at once (see `CacheLines`): the
        // boxes of the own fences and the state's entries (three, as most devices have).
        fences.table.prefetchBoxes()
        CacheLines.prefetch(state.fences, first: 3)
        if let drop = acceptance.drop(fix, lastAccepted: state.lastFix?.timestamp, now: now) {
            return Evaluation(outcome: .dropped(drop))
        }
        var evaluation = Evaluation()
        let timers = mayHaveTimers(fences, state)
        if timers { fireTimers(at: fix.timestamp, fences: fences, state: &state, into: &evaluation) }
        // A fix worse than the global threshold still goes on when a fence's own is wider;
        // every fence then applies its own threshold.
        guard rules.accepts(accuracy: fix.accuracy) || fences.someFenceTakes(accuracy: fix.accuracy) else {
            state.lastFix = fix
            evaluation.outcome = .inaccurate
            return evaluation
        }
        let candidates = sharedCandidates(of: fix.coordinate, in: fences)
        // Observed while `state.lastFix` is still the fix before, whose time tells a
        // change at the time of an earlier one (`FenceState.repeats`).
        fences.table.withView { own in
            observe(fix, own: own, candidates: candidates, fences: fences, state: &state, into: &evaluation)
        }
        state.lastFix = fix
        state.revision = revision
        if timers || (!evaluation.transitions.isEmpty && mayHaveTimers(fences, state)) {
            fireTimers(at: fix.timestamp, fences: fences, state: &state, into: &evaluation)
        }
        return evaluation
    }

    /// Applies one accepted fix to every fence that may matter: first the fences the
    /// device has state for (inside, pending, undecided), in the order of its state, then
    /// the other own fences whose grid box (`BoxGrid`) holds the fix (all of them while the
    /// device has not seen every fence), then the other shared candidates. A fence far
    /// away from a device that is outside it cannot change anything. Fences that no
    /// longer apply are forgotten (and listed in `Evaluation.forgotten` when the device
    /// was inside).
    private func observe(
        _ fix: Fix, own: OwnFenceTable.View, candidates: [SharedCandidate], fences: DeviceFences,
        state: inout DeviceState, into evaluation: inout Evaluation
    ) {
        let point = fix.coordinate
        // As `PolygonGeometry.planarBracket` computes it (`InteriorDisc`, `ClearanceGrid`).
        let pointCosine = cos(point.latitude * (Double.pi / 180))
        // The first 64 own fences whose grid box holds the fix, as bits (the others
        // are looked at one by one), and those the device has state for, so the box scan
        // skips them (from 64 on, and shared fences, through the identifiers).
        let cell = own.grid.cell(of: point)
        var near: UInt64 = 0
        for index in 0..<min(own.count, 64) where own.box(index).contains(cell) {
            near |= 1 << index
        }
        var nearFences = near
        while nearFences != 0 {
            own.prefetchRecord(nearFences.trailingZeroBitCount)
            nearFences &= nearFences - 1
        }
        var trackedOwn: UInt64 = 0
        let trackedIdentifiers = state.fences.isEmpty || (fences.shared.isEmpty && own.count <= 64)
            ? [] : state.fences.map(\.fence)
        var position = 0
        while position < state.fences.count {
            let identifier = state.fences[position].fence
            let count = state.fences.count
            if let index = ownIndex(of: identifier, near: near, in: own, fences: fences) {
                // The entry at `position` is the fence's first unless an earlier entry
                // named the same fence (then the first is found by search).
                let first = index < 64 && trackedOwn & (1 << index) == 0
                    ? position : state.fences.firstIndex { $0.fence == identifier }
                if index < 64 { trackedOwn |= 1 << index }
                observe(fix, own: index, in: own, pointCosine: pointCosine, fences: fences, at: first, state: &state, into: &evaluation)
            } else if let candidate = trackedCandidate(identifier, among: candidates, fences: fences) {
                observeShared(fix, candidate, fences: fences, tracked: true, state: &state, into: &evaluation)
            } else if let fence = fences.fence(identifier) {
                observe(fix, fence: fence, tracked: true, state: &state, into: &evaluation)
            } else {
                if state.fences[position].inside { evaluation.forgotten.append(identifier) }
                state.fences.remove(at: position)
                evaluation.changedFences = true
            }
            // Observing a tracked fence keeps its entry in place or removes it.
            if state.fences.count == count { position += 1 }
        }
        let everySeen = state.revision.map { $0 >= fences.newestRevision } ?? false
        for index in 0..<own.count {
            let isNear = index < 64 ? near & (1 << index) != 0 : own.box(index).contains(cell)
            guard isNear || !everySeen else { continue }
            guard isNear || !state.hasSeen(addedRevision: own.shape(index).addedRevision) else { continue }
            let tracked = index < 64
                ? trackedOwn & (1 << index) != 0
                : trackedIdentifiers.contains(fences.identifiers[index])
            if !tracked {
                observe(fix, own: index, in: own, pointCosine: pointCosine, fences: fences, at: nil, state: &state, into: &evaluation)
            }
        }
        for candidate in candidates {
            let identifier = fences.shared[candidate.set].spatial.slots[candidate.slot].identifier
            if trackedIdentifiers.isEmpty || !trackedIdentifiers.contains(identifier) {
                observeShared(fix, candidate, fences: fences, tracked: false, state: &state, into: &evaluation)
            }
        }
    }

    /// The position of the own fence `identifier` in `fences.own`, looked for first among
    /// the fences whose box contains the fix (`near`, as bits), where a fence the device
    /// has state for nearly always is, by `IdentifierKey`: the identifiers themselves are
    /// read only when that finds nothing.
    @inline(__always)
    private func ownIndex(of identifier: String, near: UInt64, in own: OwnFenceTable.View, fences: DeviceFences) -> Int? {
        if near != 0, fences.ownIdentifiersAreUnique, let key = IdentifierKey(identifier) {
            var rest = near
            while rest != 0 {
                let index = rest.trailingZeroBitCount
                if own.identifierKey(index) == key { return index }
                rest &= rest - 1
            }
        }
        return fences.identifiers.firstIndex(of: identifier)
    }

    /// Whether any of the device's fence states may have a timer (`mayHaveTimer`).
    private func mayHaveTimers(_ fences: DeviceFences, _ state: DeviceState) -> Bool {
        let dwellCanRun = mayDwell(fences)
        return state.fences.contains { Self.mayHaveTimer($0, mayDwell: dwellCanRun) }
    }

    /// Whether a stay in one of `fences` can wait for a dwell: the rules or one of the
    /// fences set a dwell time.
    private func mayDwell(_ fences: DeviceFences) -> Bool {
        rules.dwell != nil || fences.anyDwell
    }

    /// Whether `entry` may have a timer: a pending change, or a stay that has not
    /// dwelled while a dwell can run (`mayDwell`). Most entries have none (outside, or
    /// inside with the dwell done or no dwell time anywhere), and are passed over before
    /// their fence is looked up, on every fix and every retiming.
    @inline(__always)
    private static func mayHaveTimer(_ entry: FenceState, mayDwell: Bool) -> Bool {
        entry.pending != nil || (mayDwell && entry.inside && !entry.dwelled)
    }

    /// Evaluates `fix` against a list of own fences (see the other `evaluate`).
    public func evaluate(_ fix: Fix, fences: [Fence], revision: Int, now: Double, state: inout DeviceState) -> Evaluation {
        evaluate(fix, fences: DeviceFences(own: fences), revision: revision, now: now, state: &state)
    }

    /// Advances the device's clock to `now` without a fix: confirms pending changes whose
    /// minimum duration has passed and fires due dwell transitions.
    public func advance(to now: Double, fences: DeviceFences, state: inout DeviceState) -> Evaluation {
        var evaluation = Evaluation(outcome: .advanced)
        if mayHaveTimers(fences, state) { fireTimers(at: now, fences: fences, state: &state, into: &evaluation) }
        return evaluation
    }

    /// Advances the device's clock against a list of own fences (see the other `advance`).
    public func advance(to now: Double, fences: [Fence], state: inout DeviceState) -> Evaluation {
        advance(to: now, fences: DeviceFences(own: fences), state: &state)
    }

    /// The earliest time at which `advance` would do something for this device, nil
    /// when nothing is waiting.
    public func nextDeadline(fences: [Fence], state: DeviceState) -> Double? {
        nextDeadline(fences: DeviceFences(own: fences), entries: state.fences)
    }

    /// The earliest time at which `advance` would do something for a device with these
    /// fence `entries` (its state's), nil when nothing is waiting. The entries, not the
    /// state: a lane holds the state in place, and passing it copied it (its fix and
    /// entries retained and released, on every fix).
    public func nextDeadline(fences: DeviceFences, entries: [FenceState]) -> Double? {
        var earliest: Double?
        let dwellCanRun = mayDwell(fences)
        for entry in entries where Self.mayHaveTimer(entry, mayDwell: dwellCanRun) {
            guard let fence = fences.fence(entry.fence) else { continue }
            let rules = rules(for: fence)
            if let pending = entry.pending {
                earliest = min(earliest ?? .infinity, pending.timestamp + rules.minimumDuration)
            }
            if entry.inside, !entry.dwelled, let dwell = rules.dwell {
                earliest = min(earliest ?? .infinity, entry.since + dwell)
            }
        }
        return earliest
    }

    /// The rules in force for `fence`.
    @inlinable
    public func rules(for fence: Fence) -> TransitionRules {
        fence.overridesRules ? fence.rules.resolved(over: rules) : rules
    }

    /// Applies one accepted fix to a shared fence (or one found by identifier);
    /// `tracked` says whether the device has state for it.
    private func observe(_ fix: Fix, fence: Fence, tracked: Bool, state: inout DeviceState, into evaluation: inout Evaluation) {
        let rules = rules(for: fence)
        observe(
            fix, identifier: { fence.identifier }, addedRevision: fence.addedRevision,
            at: tracked ? state.fences.firstIndex { $0.fence == fence.identifier } : nil,
            near: fence.boundingBox.contains(fix.coordinate), rules: rules,
            relation: { accuracy in
                fence.region.containment(
                    of: fix.coordinate, accuracy: accuracy, hysteresis: rules.hysteresis(forSize: fence.size), size: fence.size
                ).relation
            },
            fence: { fence }, state: &state, into: &evaluation)
    }

    /// Applies one accepted fix to the device's own fence `index`, reading its shape and
    /// polygon from the device's `OwnFenceTable` (the `Fence` is read only for rules of its
    /// own or a transition); `position` is where the device's state has an entry for it,
    /// nil when it has none. Called for fences whose grid box holds the fix or that the
    /// device has state for: a fix in the grid box but outside the exact one is outside
    /// the region, which changes nothing for a fence the device has no state for, so the
    /// exact box is not needed.
    private func observe(
        _ fix: Fix, own index: Int, in own: OwnFenceTable.View, pointCosine: Double, fences: DeviceFences, at position: Int?,
        state: inout DeviceState, into evaluation: inout Evaluation
    ) {
        let shape = own.shape(index)
        let rules = shape.overridesRules ? fences.own[index].rules.resolved(over: self.rules) : self.rules
        observe(
            fix, identifier: { fences.identifiers[index] }, addedRevision: shape.addedRevision, at: position, near: true,
            rules: rules,
            relation: { accuracy in
                let hysteresis = rules.hysteresis(forSize: shape.size)
                guard shape.isCircle else {
                    let insideMargin = min(accuracy, shape.size / 2)
                    if let disc = own.interiorDisc(index), disc.holdsInside(fix.coordinate, cosine: pointCosine, margin: insideMargin) {
                        return .inside
                    }
                    if let grid = own.clearanceGrid(index), let relation = grid.relation(
                        of: fix.coordinate, cosine: pointCosine, insideMargin: insideMargin, outsideMargin: hysteresis + accuracy) {
                        return relation
                    }
                    return own.polygon(index).containment(
                        of: fix.coordinate, accuracy: accuracy, hysteresis: hysteresis, size: shape.size
                    ).relation
                }
                var distance = CircleDistance(
                    shape.center, cosineOfLatitude: shape.cosineOfLatitude, fix.coordinate, cosineOfLatitude: pointCosine)
                return Region.circleContainment(&distance, radius: shape.radius, accuracy: accuracy, hysteresis: hysteresis).relation
            },
            fence: { fences.own[index] }, state: &state, into: &evaluation)
    }

    /// Applies one accepted fix to one fence: `position` is where the device's state has
    /// an entry for it (nil when none), `near` whether the fix is in its bounding box,
    /// `relation` where the fix lies given its accuracy (metres, 0 when not used), `fence`
    /// the fence itself, read only for a transition, and `identifier` its identifier, read
    /// only for a change of state. A fix that confirms a settled relation (inside and
    /// staying in, or outside with no entry and staying out) writes nothing.
    private func observe(
        _ fix: Fix, identifier: () -> String, addedRevision: Int, at position: Int?, near: Bool, rules: TransitionRules,
        relation: (_ accuracy: Double) -> Containment.Relation, fence: () -> Fence,
        state: inout DeviceState, into evaluation: inout Evaluation
    ) {
        var index = position
        if !state.hasSeen(addedRevision: addedRevision) {
            let identifier = identifier()
            let unknown = FenceState(fence: identifier, inside: false, since: fix.timestamp, established: false)
            store(unknown, at: index, state: &state, into: &evaluation)
            index = state.fences.firstIndex { $0.fence == identifier }
        }
        guard index != nil || near else { return }
        guard rules.accepts(accuracy: fix.accuracy) else { return }
        let observed: Bool
        switch relation(rules.accuracyAware ? (fix.accuracy ?? 0) : 0) {
        case .inside: observed = true
        case .outside: observed = false
        case .uncertain: return
        }
        if let index {
            let settled = state.fences[index]
            if observed && settled.inside && settled.established && settled.pending == nil { return }
        } else if !observed {
            return
        }
        // A fence the device has no entry for is outside since at least its fix before: a
        // change at that fix's time may have come before this one (`commit`).
        var entry = index.map { state.fences[$0] }
            ?? FenceState(fence: identifier(), inside: false, since: state.lastFix?.timestamp ?? fix.timestamp)
        if !entry.established {
            // Not by a fix at the time of the one before: the fence may be one deleted and
            // created again, whose transitions at that time have the ids its own would.
            if state.lastFix?.timestamp == fix.timestamp { return }
            establish(observed, fix: fix, fence: fence(), rules: rules, entry: &entry, state: &state, into: &evaluation)
        } else if observed == entry.inside {
            entry.pending = nil
            // Repeats are counted only while fixes keep their time.
            if !observed && fix.timestamp > entry.since { entry.repeats = 0 }
        } else if rules.minimumDuration <= 0 {
            commit(PendingChange(inside: observed, coordinate: fix.coordinate, accuracy: fix.accuracy, timestamp: fix.timestamp),
                   fence: fence(), device: fix.device, entry: &entry, state: &state, into: &evaluation)
        } else if entry.pending?.inside != observed {
            entry.pending = PendingChange(inside: observed, coordinate: fix.coordinate, accuracy: fix.accuracy, timestamp: fix.timestamp)
        }
        store(entry, at: index, state: &state, into: &evaluation)
    }

    /// The first confident observation of a fence by a device: sets the relation with no
    /// transition, unless `initialTrigger` asks for one.
    private func establish(
        _ inside: Bool, fix: Fix, fence: Fence, rules: TransitionRules, entry: inout FenceState,
        state: inout DeviceState, into evaluation: inout Evaluation
    ) {
        entry = FenceState(fence: fence.identifier, inside: inside, since: fix.timestamp)
        evaluation.established.append(fence.identifier)
        switch rules.initialTrigger {
        case .enter where inside:
            record(Transition(fence: fence, kind: .enter, fix: fix), state: &state, into: &evaluation)
        case .exit where !inside:
            record(Transition(fence: fence, kind: .exit, fix: fix), state: &state, into: &evaluation)
        default:
            break
        }
    }

    /// Publishes a change of relation: the transition carries the position and time of
    /// the fix that first showed it. A change at the time the relation it ends began
    /// counts one more repeat (`FenceState.repeats`): every second one (the relation
    /// alternates) is of the same kind at the same time as an earlier one.
    private func commit(
        _ change: PendingChange, fence: Fence, device: String, entry: inout FenceState,
        state: inout DeviceState, into evaluation: inout Evaluation
    ) {
        entry.repeats = entry.since != change.timestamp ? 0 : entry.repeats == .max ? .max : entry.repeats + 1
        entry.inside = change.inside
        entry.since = change.timestamp
        entry.pending = nil
        entry.dwelled = false
        let fix = Fix(device: device, coordinate: change.coordinate, accuracy: change.accuracy, timestamp: change.timestamp)
        record(
            Transition(fence: fence, kind: change.inside ? .enter : .exit, fix: fix, occurrence: entry.occurrence),
            state: &state, into: &evaluation)
    }

    /// Confirms pending changes and fires dwells that are due at `time`.
    private func fireTimers(at time: Double, fences: DeviceFences, state: inout DeviceState, into evaluation: inout Evaluation) {
        guard !state.fences.isEmpty, let device = state.lastFix?.device else { return }
        for identifier in state.fences.map(\.fence) {
            guard let fence = fences.fence(identifier),
                  let index = state.fences.firstIndex(where: { $0.fence == identifier })
            else { continue }
            let rules = rules(for: fence)
            var entry = state.fences[index]
            if let pending = entry.pending, time - pending.timestamp >= rules.minimumDuration {
                commit(pending, fence: fence, device: device, entry: &entry, state: &state, into: &evaluation)
            }
            if entry.inside, !entry.dwelled, let dwell = rules.dwell, time - entry.since >= dwell {
                entry.dwelled = true
                let last = state.lastFix
                let fix = Fix(
                    device: device, coordinate: last?.coordinate ?? fence.region.center, accuracy: last?.accuracy,
                    timestamp: entry.since + dwell)
                record(Transition(fence: fence, kind: .dwell, fix: fix, occurrence: entry.occurrence), state: &state, into: &evaluation)
            }
            store(entry, at: index, state: &state, into: &evaluation)
        }
    }

    /// Adds a transition, and its notification when the fence asks for one.
    private func record(_ transition: Transition, state: inout DeviceState, into evaluation: inout Evaluation) {
        evaluation.transitions.append(transition)
        if transition.fence.eventType.notifies(transition.kind) {
            state.badge += 1
            evaluation.notifications.append(Notification(transition: transition, badge: state.badge))
        }
    }

    /// Puts `entry` back into the device state (at `index` when it was there), dropping
    /// it when it says nothing beyond "outside, settled" and keeping the list sorted;
    /// notes in `evaluation` when that changed the entries (an entry put back as it was
    /// changes nothing).
    private func store(_ entry: FenceState, at index: Int?, state: inout DeviceState, into evaluation: inout Evaluation) {
        if let index {
            if entry.isSettledOutside {
                state.fences.remove(at: index)
            } else if state.fences[index] != entry {
                state.fences[index] = entry
            } else {
                return
            }
        } else if !entry.isSettledOutside {
            let position = state.fences.firstIndex { $0.fence > entry.fence } ?? state.fences.endIndex
            state.fences.insert(entry, at: position)
        } else {
            return
        }
        evaluation.changedFences = true
    }

    // MARK: Shared fences

    /// A fence of one of the device's shared sets whose bounding box contains the fix:
    /// the set's place in `DeviceFences.shared` and the fence's slot in its `spatial`.
    private typealias SharedCandidate = (set: Int, slot: Int)

    /// The candidates of `point` in the device's shared sets, set by set, each set's in
    /// the order its index names them: the fences whose bounding box contains it, and
    /// perhaps a few whose box comes within single-precision rounding of it (which
    /// `observeShared` drops).
    private func sharedCandidates(of point: Coordinate, in fences: DeviceFences) -> [SharedCandidate] {
        guard !fences.shared.isEmpty else { return [] }
        var candidates: [SharedCandidate] = []
        for (number, set) in fences.shared.enumerated() {
            set.spatial.index.forEachPossibleCandidate(containing: point) { candidates.append((number, $0)) }
        }
        return candidates
    }

    /// The candidate that is the tracked fence `identifier`, when it is the very fence
    /// `fences.fence(identifier)` names (no own fence and no earlier set has that
    /// identifier, and its set has no other fence by it): then it is found among a few
    /// neighbouring slots instead of through the set's table of identifiers.
    private func trackedCandidate(
        _ identifier: String, among candidates: [SharedCandidate], fences: DeviceFences
    ) -> SharedCandidate? {
        guard let found = candidates.first(where: { fences.shared[$0.set].spatial.slots[$0.slot].identifier == identifier }),
              fences.shared[found.set].identifiersAreUnique, !fences.identifiers.contains(identifier),
              !fences.shared[..<found.set].contains(where: { $0.position(of: identifier) != nil })
        else { return nil }
        return found
    }

    /// Applies one accepted fix to a shared fence (see `observe`), deciding from its slot
    /// when the fix changes nothing: a fence the device is outside of and stays outside
    /// of, one it is inside and stays inside, or an uncertain fix. Anything else (a
    /// change, a fence the device has not seen, a fence with rules of its own) goes
    /// through `observe` with the `Fence` itself, if the fix is in its bounding box or
    /// the device has state for it, as for every fence.
    private func observeShared(
        _ fix: Fix, _ candidate: SharedCandidate, fences: DeviceFences, tracked: Bool, state: inout DeviceState,
        into evaluation: inout Evaluation
    ) {
        let set = fences.shared[candidate.set]
        let slot = set.spatial.slots[candidate.slot]
        if !slot.overridesRules, let revision = state.revision, slot.addedRevision <= revision {
            guard rules.accepts(accuracy: fix.accuracy) else { return }
            let accuracy = rules.accuracyAware ? (fix.accuracy ?? 0) : 0
            let containment = set.spatial.containment(
                of: slot, point: fix.coordinate, accuracy: accuracy, hysteresis: rules.hysteresis(forSize: slot.size))
            switch containment.relation {
            case .uncertain:
                return
            case .outside:
                if !tracked { return }
            case .inside:
                if tracked, let entry = state.fences.first(where: { $0.fence == slot.identifier }),
                   entry.established, entry.inside, entry.pending == nil {
                    return
                }
            }
        }
        let fence = set.fences[Int(slot.position)]
        guard tracked || fence.boundingBox.contains(fix.coordinate) else { return }
        observe(fix, fence: fence, tracked: tracked, state: &state, into: &evaluation)
    }
}
