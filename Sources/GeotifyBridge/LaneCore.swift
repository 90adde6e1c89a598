import GeotifyCore
import GeotifyJSON
import GeotifyMQTT
import GeotifyStore

/// The decisions of one evaluation lane, as a pure value: given the messages routed to
/// the lane, clock ticks and the fences in force, it updates its devices' state and says
/// what follows as `LaneEffects`: state to commit, notifications, badges, presence and
/// tracker messages to publish after the commit, occupancy changes, replies, fence writes,
/// log lines and counters. It does no I/O, takes no lock of its own and reads no clock:
/// time comes in with the inputs (each message's arrival, each tick's `now`).
///
/// Everything a user sees between transitions is decided here too: a device's retained
/// state, tracker, presence and badge topics (those `deviceTopics` keeps) say what is
/// known from its first confident fix on (silently: a first fix never notifies, as iOS
/// does not for a region it starts in); the state document follows the device's
/// position, throttled; and one retained state document per change carries both the
/// location name and the position, so a subscriber sees one change per transition.
///
/// `LaneCore+Commands.swift` holds the fence commands (the app's list, Add, Edit,
/// Delete and Peek & Pop).
package struct LaneCore: Sendable {
    package let configuration: LaneConfiguration
    /// Who may have state besides the devices the fence file names (shared across lanes).
    let admission: DeviceAdmission
    /// The lane's devices.
    package internal(set) var devices = DeviceTable()
    /// The number of the batch `handle` takes now (`DeviceTable.markSeen`).
    private var batchNumber: UInt64 = 0
    /// The devices with a timer, and when it is due (also in their record).
    private var deadlines: [String: Double] = [:]
    /// The edition of the book the deadlines were last worked out with, every device's at
    /// once: a tick that sees another edition (the file edited, a command) works them out
    /// again, so a dwell shortened, added or removed while a device stays inside is timed
    /// by the new rules, not only once the device's next fix comes.
    private var timedEdition: FenceBookEdition
    /// The edition of the book the devices' admission places were last reckoned with
    /// (`reckonAdmission`).
    private var admissionEdition: FenceBookEdition
    /// The previews waiting for a commit or cancel.
    var previews: PreviewBook
    /// How long each device's fence changes may still keep the file being written
    /// (`fenceWriteBudget`).
    var writeBudget: FenceWriteBudget
    /// The devices whose retained topics are still to be republished after a connection
    /// (`republishAll`).
    private var republishing: [String] = []
    /// What is reported only once and was: an admission limit a refusal reached, or
    /// (`key <device>`) a device whose encrypted positions have no key. At most
    /// `reportedOnceKept` (read by tests, which hold it to that bound).
    private(set) var reportedOnce: Set<String> = []
    /// How many refusal warnings the lane still logs in full (`logRefusal`).
    private var refusalLog: RefusalLogBudget
    /// How many notification lines the lane still logs in full, by device: a tracker may
    /// cause notifications at will (in and out of its fence, each message), and each is
    /// published and counted anyway.
    private var notificationLog: LogBudget<String>
    /// What the last look for an idle device found when it found none: no device can be
    /// idle long enough before `notBefore`, as long as the clock has not gone back past
    /// `at` and the book is the same edition (the devices it may evict are those the
    /// book does not name). Until then a full bridge refuses a new device without looking
    /// again: each look goes through every device of the lane, and a tracker can send
    /// positions of a device that is refused as often as it likes.
    private var noIdleDevice: (at: Double, notBefore: Double, edition: FenceBookEdition)?
    /// How many times the lane looked through its devices for an idle one (for tests).
    package private(set) var idleDeviceSearches = 0
    /// How many devices the lane looked at for the books that came into force (`candidates`;
    /// for tests).
    package internal(set) var devicesReconsidered = 0
    /// The book the devices' retained presence was last decided with; nil after a start
    /// until the states loaded are checked against the book in force
    /// (`leaveRemovedFences`).
    var decidedWith: FenceBook?
    /// The devices of the states loaded at start whose state was saved while the fence
    /// file named them (`StateStore.loadDevicesAndNames`), until the lane's first look
    /// (`leaveRemovedFences`).
    var loadedAsNamed: Set<String>

    /// A core for the devices of `states` (as loaded at start; those of `named` saved
    /// while the fence file named them), with the fences of `book`.
    package init(
        configuration: LaneConfiguration, admission: DeviceAdmission, states: [String: DeviceState], named: Set<String> = [],
        book: FenceBook, now: Double
    ) {
        self.configuration = configuration
        self.admission = admission
        loadedAsNamed = named
        previews = PreviewBook(
            timeout: configuration.previewTimeout, perDevice: configuration.previewsPerDevice,
            total: configuration.previewsPerLane)
        writeBudget = FenceWriteBudget(perMinute: configuration.fenceWriteBudget)
        refusalLog = RefusalLogBudget(everyLine: configuration.logLevel == .debug)
        notificationLog = LogBudget(
            "notification lines", ending: "each notification was published on \(configuration.messages.topics.event("<device>"))",
            everyLine: configuration.logLevel == .debug, name: { $0 })
        timedEdition = book.edition
        admissionEdition = book.edition
        for (device, state) in states {
            devices[device] = DeviceRecord(state: state, lastSeen: now, admitted: !book.knows(device))
        }
        retime(with: book)
    }

    /// How many devices have state here.
    package var deviceCount: Int { devices.count }

    /// How many previews wait here.
    package var previewCount: Int { previews.count }

    // MARK: Messages

    /// Handles a batch of routed messages in arrival order, except that each device's
    /// positions are taken in timestamp order (stable, only among that device's), so a
    /// burst of positions queued in the broker while the bridge was away is evaluated as
    /// it happened. A new book is first looked at for removed fences (`leaveRemovedFences`).
    package mutating func handle(_ batch: [Inbound], book: FenceBook, into effects: inout LaneEffects) {
        leaveRemovedFences(book: book, into: &effects)
        var items: [Item] = []
        items.reserveCapacity(batch.count)
        // The devices that come more than once: those kept are marked in the table, the
        // few new ones (not kept yet) remembered here.
        batchNumber &+= 1
        var newDevices: Set<String> = []
        var repeated: Set<String> = []
        // By index, reading the fields each step needs: `for inbound in batch` copied each
        // message whole (its strings and payload retained, then released).
        for position in batch.indices {
            // Larger than the bridge takes: read without its payload (`MQTTMessage.payloadLeftOut`).
            if batch[position].message.payloadLeftOut > 0 {
                let bytes = batch[position].message.payload.count + batch[position].message.payloadLeftOut
                items.append(.refused(message: position, configuration.decoder.payloadTooLarge(bytes, unread: true)))
                continue
            }
            switch batch[position].route {
            case .command:
                items.append(.command(message: position))
            case .location(let format):
                do throws(InputError) {
                    guard let fix = try configuration.decoder.decode(
                        batch[position].message.payload, device: batch[position].device, format: format,
                        arrival: batch[position].arrival)
                    else {
                        items.append(.ignored)
                        if let requester = batch[position].requester { effects.answers.append(LaneAnswer(requester: requester, outcome: .accepted)) }
                        continue
                    }
                    if configuration.strictDevices && !book.knows(fix.device) {
                        throw InputError(.unknownDevice, "the device \"\(fix.device)\" has no fences (strictDevices is on)")
                    }
                    let slot = devices.slot(of: fix.device)
                    if batch.count > 1 {
                        let again = if let slot { devices.markSeen(slot, in: batchNumber) } else { !newDevices.insert(fix.device).inserted }
                        if again { repeated.insert(fix.device) }
                    }
                    items.append(.fix(fix, slot: slot, format: format, message: position))
                } catch {
                    items.append(.refused(message: position, error))
                }
            }
        }
        var slots: [String: [Int]] = [:]
        if !repeated.isEmpty {
            for (position, item) in items.enumerated() {
                if case .fix(let fix, _, _, _) = item, repeated.contains(fix.device) { slots[fix.device, default: []].append(position) }
            }
        }
        for positions in slots.values {
            let fixes = positions.map { items[$0] }.sorted { lhs, rhs in
                guard case .fix(let left, _, _, _) = lhs, case .fix(let right, _, _, _) = rhs else { return false }
                return left.timestamp < right.timestamp
            }
            for (position, item) in zip(positions, fixes) { items[position] = item }
        }
        for position in items.indices {
            // The lines the evaluations of the next positions will read, asked for while
            // this one is evaluated.
            let ahead = EvaluationLookahead.fixes(before: position, count: items.count)
            for next in ahead.objects { if case .fix(_, let slot?, _, _) = items[next] { devices.prefetch(.objects, slot: slot) } }
            for next in ahead.tables { if case .fix(_, let slot?, _, _) = items[next] { devices.prefetch(.tables, slot: slot) } }
            switch items[position] {
            case .fix(let fix, let slot, let format, let message):
                let refusal = evaluate(
                    fix, slot: slot, format: format, arrival: batch[message].arrival, topic: batch[message].message.topic, book: book,
                    into: &effects)
                if let requester = batch[message].requester {
                    effects.answers.append(LaneAnswer(requester: requester, outcome: refusal.map { .refused($0) } ?? .accepted))
                }
            case .command(let message):
                command(batch[message], book: book, into: &effects)
            case .refused(let message, let error):
                refuse(error, topic: batch[message].message.topic, device: batch[message].device, at: batch[message].arrival, into: &effects)
                if let requester = batch[message].requester { effects.answers.append(LaneAnswer(requester: requester, outcome: .refused(error))) }
            case .ignored:
                effects.counters.add(.messagesIgnored)
            }
        }
    }

    /// A batch message after decoding: `message` is its position in the batch, where the
    /// rest of it (arrival, topic, who waits for the answer) is read when needed, so an
    /// item is copied without the message's strings and payload.
    private enum Item {
        /// `slot`: the device's in `devices` when the batch was decoded (nil when it was
        /// not kept then).
        case fix(Fix, slot: Int?, format: LocationDecoder.Format, message: Int)
        case command(message: Int)
        case refused(message: Int, InputError)
        case ignored
    }

    /// Counts, logs (as `logRefusal` allows) and reports a refused message that arrived at
    /// `now`. An encrypted position for which no secret is configured is said once per
    /// device (counted every time): a phone with encryption on sends every position so.
    mutating func refuse(_ error: InputError, topic: String, device: String?, at now: Double, into effects: inout LaneEffects) {
        effects.counters.add(.errors(error.code))
        if error.code == .noDecryptionKey, let device {
            guard reportedOnce.count < Self.reportedOnceKept, reportedOnce.insert("key \(device)").inserted else { return }
        }
        logRefusal(error.code, at: now, into: &effects, "refused the message on \(topic): \(error)")
        effects.direct.append(configuration.messages.error(error, topic: topic, device: device))
    }

    /// Logs the warning `message` about a refusal with `code` at `now` if the lane's
    /// `RefusalLogBudget` lets it through, after the summary of an interval that ended;
    /// otherwise only the budget counts it. A refusal is counted and reported whether
    /// logged or not, so a flood costs a bounded number of log lines.
    mutating func logRefusal(_ code: ErrorCode, at now: Double, into effects: inout LaneEffects, _ message: @autoclosure () -> String) {
        guard Logger.Level.warning >= configuration.logLevel else { return }
        let (summary, inFull) = refusalLog.take(code, at: now)
        if let summary { effects.log.append(LogEntry(level: .warning, message: summary)) }
        if inFull { effects.log.append(LogEntry(level: .warning, message: message())) }
    }

    /// Logs `notification` at info when `notificationLog` lets it through at `now`, after
    /// the summary of an interval that ended.
    private mutating func logNotification(_ notification: Notification, at now: Double, into effects: inout LaneEffects) {
        guard Logger.Level.info >= configuration.logLevel else { return }
        let (summary, inFull) = notificationLog.take(notification.device, at: now)
        if let summary { effects.log.append(LogEntry(level: .info, message: summary)) }
        if inFull {
            effects.log.append(LogEntry(
                level: .info, message: "\(notification.device) \(notification.kind.rawValue) \(notification.fence) (badge \(notification.badge))"))
        }
    }

    // MARK: Evaluation

    /// Evaluates `fix` for its device, whose slot in `devices` was `slot` when the batch
    /// was decoded; returns the refusal when the device may not have state (`admit`), nil
    /// when the fix was taken (evaluated, or dropped by the rules).
    private mutating func evaluate(
        _ fix: Fix, slot: Int?, format: LocationDecoder.Format, arrival: Double, topic: String, book: FenceBook,
        into effects: inout LaneEffects
    ) -> InputError? {
        let device = fix.device
        let found = devices.slot(slot, stillOf: device)
        let isNew = found == nil
        let index: Int
        if let found {
            index = found
        } else {
            // A first fix that would be dropped (too old, from the future) takes no place
            // and makes no idle device go.
            if let drop = configuration.evaluator.acceptance.drop(fix, lastAccepted: nil, now: arrival) {
                effects.counters.add(.fixesDropped(drop))
                effects.log(.debug, at: configuration.logLevel, "dropped a fix of \(device) at \(fix.timestamp): \(drop.rawValue)")
                return nil
            }
            if let refusal = admit(device, book: book, now: arrival, into: &effects) {
                reportOnce(refusal, topic: topic, device: device, into: &effects)
                return refusal.error
            }
            index = devices.insert(DeviceRecord(state: DeviceState(), lastSeen: arrival, admitted: !book.knows(device)), for: device)
        }
        let fences = devices.fences(at: index, in: book)
        let evaluator = configuration.evaluator
        let revision = book.revision
        let (before, evaluation) = withRecord(at: index) { record in
            let before = Persisted(record.state)
            let evaluation = evaluator.evaluate(fix, fences: fences, revision: revision, now: arrival, state: &record.state)
            record.lastSeen = arrival
            // An accepted fix is the device's last: its clock is now the fix's.
            if !evaluation.outcome.isDropped { record.clockOffset = arrival - fix.timestamp }
            if format == .ownTracks { record.ownTracks = true }
            return (before, evaluation)
        }
        switch evaluation.outcome {
        case .dropped(let reason):
            effects.counters.add(.fixesDropped(reason))
            effects.log(.debug, at: configuration.logLevel, "dropped a fix of \(device) at \(fix.timestamp): \(reason.rawValue)")
            return nil
        case .inaccurate:
            effects.counters.add(.fixesInaccurate)
        case .evaluated, .advanced:
            effects.counters.add(.fixesEvaluated)
        }
        // The device's first fix, also when a command (`resetBadge`) made its record.
        if isNew || before.fixTime == nil {
            warnAboutCase(of: device, book: book, at: arrival, into: &effects)
            keep(.badge, in: &effects.outbox) { configuration.messages.badge(0, of: device) }
            announceSharedPresence(of: device, fences: fences, established: evaluation.established, into: &effects)
        }
        if configuration.observing { effects.observed.append(device) }
        record(evaluation, device: device, at: index, before: before, fences: fences, book: book, now: arrival, isNew: isNew, into: &effects)
        return nil
    }

    /// Runs `body` on the record at `index` in place: reading a field through it copies
    /// that field, where reading through `devices.values[index]` copies the whole record
    /// (its arrays and strings retained and released), on every fix.
    mutating func withRecord<Result>(at index: Int, _ body: (inout DeviceRecord) -> Result) -> Result {
        body(&devices[slot: index])
    }

    /// What `record` reads of a device's record after an evaluation: its state only when
    /// it is to be saved, the only use of a copy of it (each copy retains the state's
    /// fix and fence entries and releases them again).
    private struct RecordOutcome {
        var saved: DeviceState?
        var ownTracks: Bool
        var deadlineChanged: Bool
        var deadline: Double?
    }

    /// What of a device's state a restart needs, to tell whether an evaluation changed
    /// it: its scalars, as they were. The evaluation says whether the fence entries
    /// changed (`Evaluation.changedFences`), so they are not copied: a copy retains their
    /// storage, an atomic write to a line that is out of the cache for a device not seen
    /// lately, and makes the evaluation's first write to them copy the whole list.
    private struct Persisted {
        var badge: Int
        var revision: Int?
        var fixTime: Double?

        init(_ state: DeviceState) {
            badge = state.badge
            revision = state.revision
            fixTime = state.lastFix?.timestamp
        }
    }

    /// Keeps what the evaluation left in the record, schedules the device's next timer,
    /// and adds what follows from it: notifications (also as OwnTracks transitions for
    /// OwnTracks devices), the badge, and on a change of presence or badge the retained
    /// state document, tracker, presence and occupancy. A state a restart needs is
    /// saved now; a new last fix alone is saved lazily. Each notification is logged as
    /// `notificationLog` allows at `now`.
    private mutating func record(
        _ evaluation: Evaluation, device: String, at index: Int, before: Persisted,
        fences: DeviceFences, book: FenceBook, now: Double, isNew: Bool = false, into effects: inout LaneEffects
    ) {
        let evaluator = configuration.evaluator
        let outcome: RecordOutcome = withRecord(at: index) { record in
            let deadline = evaluator.nextDeadline(fences: fences, entries: record.state.fences).map { $0 + record.clockOffset }
            let deadlineChanged = deadline != record.deadline
            record.deadline = deadline
            let mustSave = isNew || evaluation.changedFences || record.state.badge != before.badge
                || record.state.revision != before.revision
            if mustSave {
                record.unsavedFix = false
            } else if record.state.lastFix?.timestamp != before.fixTime {
                record.unsavedFix = true
            }
            return RecordOutcome(
                saved: mustSave ? record.state : nil, ownTracks: record.ownTracks, deadlineChanged: deadlineChanged, deadline: deadline)
        }
        let ownTracks = outcome.ownTracks
        if outcome.deadlineChanged { deadlines[device] = outcome.deadline }
        if let saved = outcome.saved { effects.saves[device] = saved }
        if !evaluation.transitions.isEmpty {
            effects.counters.add(.transitions, evaluation.transitions.count)
            effects.counters.add(.notifications, evaluation.notifications.count)
        }
        for notification in evaluation.notifications {
            logNotification(notification, at: now, into: &effects)
            let event = configuration.messages.event(notification)
            effects.outbox.append(event)
            effects.deliveries += configuration.deliveries.entries(for: notification, payload: event.payload)
            if ownTracks, let transition = configuration.ownTracks?.message(notification) {
                effects.outbox.append(transition)
            }
        }
        if let last = evaluation.notifications.last {
            keep(.badge, in: &effects.outbox) { configuration.messages.badge(last.badge, of: device) }
        }
        guard evaluation.changedPresence || !evaluation.notifications.isEmpty else {
            followPosition(of: device, at: index, fences: fences, into: &effects)
            return
        }
        for transition in evaluation.transitions where transition.kind != .dwell {
            let inside = transition.kind == .enter
            let identifier = transition.fence.identifier
            keep(.presence, in: &effects.outbox) { configuration.presence.presence(of: device, fence: identifier, inside: inside) }
            if !inside {
                Self.leaveOccupancy(of: device, fence: identifier, book: book, into: &effects)
            } else if let set = fences.owner(of: identifier) {
                effects.occupancy.append(OccupancyChange(owner: set.owner, fence: identifier, device: device, inside: true))
            }
        }
        for identifier in evaluation.established where !evaluation.transitions.contains(where: { $0.fence.identifier == identifier }) {
            let inside = withRecord(at: index) { $0.state.isInside(identifier) }
            let set = fences.owner(of: identifier)
            if inside || (set.map { $0.fences.count <= configuration.announceLimit } ?? true) {
                keep(.presence, in: &effects.outbox) { configuration.presence.presence(of: device, fence: identifier, inside: inside) }
            }
            if inside, let set {
                effects.occupancy.append(OccupancyChange(owner: set.owner, fence: identifier, device: device, inside: true))
            }
        }
        for identifier in evaluation.forgotten {
            Self.leaveOccupancy(of: device, fence: identifier, book: book, into: &effects)
        }
        publishState(of: device, at: index, fences: fences, into: &effects)
    }

    /// Takes `device` out of the count of every shared fence named `identifier`, on
    /// leaving its fence of that name or forgetting it. A device has one fence of each
    /// identifier, so it is then inside none of that name: also not one of a set that
    /// counted it before the file moved it to another group (or gave it an own fence of
    /// that name).
    static func leaveOccupancy(of device: String, fence identifier: String, book: FenceBook, into effects: inout LaneEffects) {
        for set in book.shared.values where set.fence(identifier) != nil {
            effects.occupancy.append(OccupancyChange(owner: set.owner, fence: identifier, device: device, inside: false))
        }
    }

    /// The retained state document and tracker of the device at `index`, in that order.
    /// The state document carries the tracker state with the position, so a subscriber
    /// that reads only it (Home Assistant's tracker) sees one change per transition; the
    /// tracker topic is for subscribers that want the location alone.
    mutating func publishState(of device: String, at index: Int, fences: DeviceFences, into effects: inout LaneEffects) {
        let state = withRecord(at: index) { record in
            record.published = record.state.lastFix
            return record.state
        }
        let relevant = Self.relevantFences(state, fences)
        keep(.state, in: &effects.outbox) { configuration.presence.state(of: device, state, fences: relevant) }
        showTracker(of: device, at: index, state, fences: relevant, in: &effects.outbox)
    }

    /// Appends the tracker message of the device at `index` to `messages` when its value
    /// differs from the one its record last showed (`DeviceRecord.shownTracker`), or
    /// `always`; and remembers it. A position or a badge that leaves the device in the
    /// same fence publishes no tracker message: the retained one says it already. The
    /// republishing after a connection passes `always`, since the broker may have lost it.
    mutating func showTracker(
        of device: String, at index: Int, _ state: DeviceState, fences relevant: [Fence],
        always: Bool = false, in messages: inout [OutboxMessage]
    ) {
        guard configuration.keeps(.tracker) else { return }
        let shown = PresenceMessages.trackerState(of: state, fences: relevant)
        let changed = withRecord(at: index) { record in
            guard always || record.shownTracker != shown else { return false }
            record.shownTracker = shown
            return true
        }
        guard changed else { return }
        messages.append(configuration.presence.tracker(of: device, showing: shown))
    }

    /// Appends the message `make` builds to `messages` when `topic` is one of the
    /// device topics kept (`LaneConfiguration.deviceTopics`); else builds nothing.
    func keep(_ topic: DeviceTopic, in messages: inout [OutboxMessage], _ make: () -> OutboxMessage) {
        if configuration.keeps(topic) { messages.append(make()) }
    }

    /// A new position with no change of presence: the state document follows it when the
    /// tracker's throttle allows (`trackerInterval`, `trackerDistance`), without a
    /// notification.
    private mutating func followPosition(of device: String, at index: Int, fences: DeviceFences, into effects: inout LaneEffects) {
        guard let interval = configuration.trackerInterval else { return }
        let (last, published) = withRecord(at: index) { ($0.state.lastFix, $0.published) }
        guard let fix = last else { return }
        if let published {
            guard fix.timestamp - published.timestamp >= interval,
                  Geodesy.sphericalDistance(published.coordinate, fix.coordinate) >= configuration.trackerDistance
            else { return }
        }
        publishState(of: device, at: index, fences: fences, into: &effects)
    }

    /// The fences the state document lists: the device's own, and the shared ones it is
    /// inside, in the order of the fence file.
    static func relevantFences(_ state: DeviceState, _ fences: DeviceFences) -> [Fence] {
        let sharedInside = state.fences.filter { entry in entry.inside && !fences.identifiers.contains(entry.fence) }
            .compactMap { fences.fence($0.fence) }
        // The own fences' array itself when no shared one is added: a copy retains every
        // string of every fence, and a state document is written with each transition.
        return sharedInside.isEmpty ? fences.own : fences.own + sharedInside
    }

    /// A device's first fix: it is outside every announced shared fence it was not found
    /// inside (shared sets are looked at only near a fix, so far ones are never
    /// "established" fence by fence). The fences the fix `established` are left to
    /// `record`, which tells each one's relation once: a fix near a shared fence but
    /// outside it establishes it without keeping an entry for it.
    private func announceSharedPresence(
        of device: String, fences: DeviceFences, established: [String], into effects: inout LaneEffects
    ) {
        guard configuration.keeps(.presence), let state = devices[device]?.state else { return }
        for set in fences.shared where set.fences.count <= configuration.announceLimit {
            for fence in set.fences
            where !state.fences.contains(where: { $0.fence == fence.identifier }) && !established.contains(fence.identifier) {
                effects.outbox.append(configuration.presence.presence(of: device, fence: fence.identifier, inside: false))
            }
        }
    }

    /// Says, at the first fix of a device the fence file does not name (so once a
    /// device), that the file names one that differs only in letter case (`Alice/Phone`
    /// for `alice/phone`).
    private mutating func warnAboutCase(of device: String, book: FenceBook, at now: Double, into effects: inout LaneEffects) {
        guard !book.knows(device), let named = book.device(matchingIgnoringCase: device) else { return }
        let error = InputError(.unknownDevice, "positions arrive for \"\(device)\", which has no fences; the fence file names \"\(named)\", which differs only in letter case (device identifiers are case-sensitive)")
        effects.counters.add(.errors(.unknownDevice))
        logRefusal(.unknownDevice, at: now, into: &effects, error.message)
        effects.direct.append(configuration.messages.error(error, topic: nil, device: device))
    }

    // MARK: Admission

    /// Counts a refusal of a new device every time, but logs and reports it on
    /// `geotify/error` once for each limit (the bridge's, each owner's), so a flood of
    /// made-up devices does not become a flood of reports.
    private mutating func reportOnce(_ refusal: (error: InputError, limit: String), topic: String, device: String, into effects: inout LaneEffects) {
        effects.counters.add(.errors(refusal.error.code))
        guard reportedOnce.count < Self.reportedOnceKept, reportedOnce.insert(refusal.limit).inserted else { return }
        effects.log(.error, at: configuration.logLevel, "\(refusal.error.message); further refusals for this limit are only counted (errors.too_many_devices)")
        effects.direct.append(configuration.messages.error(refusal.error, topic: topic, device: device))
    }

    /// The most refusals remembered as reported (past that, they are only counted).
    static let reportedOnceKept = 1_024

    /// Whether a device never seen before may have state: always when the fence file
    /// names it; otherwise when `DeviceAdmission` admits it, after evicting this lane's
    /// least recently seen idle unnamed device if the bridge is full. Returns the refusal
    /// and the limit that caused it when it may not.
    mutating func admit(_ device: String, book: FenceBook, now: Double, into effects: inout LaneEffects) -> (error: InputError, limit: String)? {
        if book.knows(device) { return nil }
        reckonAdmission(with: book)
        var decision = admission.admit(device)
        // More than one may have to go when more unnamed devices have state than the
        // limit allows (loaded at a start: the limit was lowered, or devices were
        // removed from the file while the bridge was stopped).
        while decision == .full, evictIdleDevice(book: book, now: now, into: &effects) {
            decision = admission.admit(device)
        }
        let reason: String
        let limit: String
        switch decision {
        case .admitted:
            return nil
        case .ownerFull:
            let owner = DeviceAdmission.owner(of: device)
            reason = "the owner \"\(owner)\" already has \(admission.perOwner) devices without fences (maximumDevicesPerOwner)"
            limit = "owner \(owner)"
        case .full:
            reason = "the bridge already keeps state for \(admission.maximum) devices without fences (maximumDevices), none idle for \(Int(configuration.evictionAge)) s to make room"
            limit = "bridge"
        }
        return (InputError(.tooManyDevices, "\(reason); the new device \"\(device)\" is refused (devices in the fence file are always admitted)"), limit)
    }

    /// Evicts the least recently seen device of this lane that the fence file does not
    /// name and that has sent nothing for `evictionAge`; says whether there was one. Of
    /// devices last seen at the same time (every message of a burst arrives at once), the
    /// first by identifier: which one goes follows from the inputs alone, not from the
    /// order of the table, which differs from one table to another.
    private mutating func evictIdleDevice(book: FenceBook, now: Double, into effects: inout LaneEffects) -> Bool {
        if let found = noIdleDevice, found.edition.isSame(as: book.edition), found.at <= now, now < found.notBefore {
            return false
        }
        idleDeviceSearches += 1
        let limit = now - configuration.evictionAge
        var oldest: (device: String, seen: Double)?
        for (device, record) in devices where !book.knows(device) {
            if let (found, seen) = oldest, record.lastSeen > seen || record.lastSeen == seen && device > found { continue }
            oldest = (device, record.lastSeen)
        }
        guard let (device, seen) = oldest, seen <= limit else {
            // A device seen later than the oldest, or one that comes now, is idle later.
            noIdleDevice = (now, (oldest?.seen ?? now) + configuration.evictionAge, book.edition)
            return false
        }
        noIdleDevice = nil
        forget(
            device, named: false, announced: book.deviceFences(of: device).announced(limit: configuration.announceLimit), before: nil,
            book: book, into: &effects)
        effects.log(.info, at: configuration.logLevel, "forgot the idle device \(device), which has no fences, to make room for new devices")
        return true
    }

    /// Forgets `device` and what the bridge said of it: it leaves the count of each shared
    /// fence its state is inside (of a fence its set has lost since `before`, the fences
    /// it had, as `OccupancyChange.fenceRemoved`), its retained topics are emptied
    /// (`PresenceMessages.forgetting`: the presence of each fence of `announced` and of
    /// each its state names), and its record, timer and admission place go, its saved
    /// state deleted in the commit that holds those messages. No notification: the device
    /// did not move. A position of it that comes later is a new device's. A device the
    /// file named (`named`) may have Home Assistant entities: with discovery on, their
    /// empty configs come first (`HomeAssistantDiscovery.forgetting`), so no entity is
    /// still subscribed when its topics empty, whichever of the lane and the announcer
    /// (or the start's sweep), which delete them too, reaches the broker first. The web
    /// console, when it watches, is told (`observed`), so open pages drop the device.
    mutating func forget(
        _ device: String, named: Bool, announced: [Fence], before: DeviceFences?, book: FenceBook, into effects: inout LaneEffects
    ) {
        if let state = devices[device]?.state {
            for entry in state.fences where entry.inside {
                Self.leaveOccupancy(of: device, fence: entry.fence, book: book, into: &effects)
                if let set = before?.owner(of: entry.fence), book.shared[set.owner]?.fence(entry.fence) == nil {
                    effects.occupancy.append(
                        OccupancyChange(owner: set.owner, fence: entry.fence, device: device, inside: false, fenceRemoved: true))
                }
            }
            let presence = Set(announced.map(\.identifier)).union(state.fences.map(\.fence)).sorted()
            if named, let discovery = configuration.discovery {
                effects.outbox += discovery.forgetting(device, fences: presence)
            }
            effects.outbox += configuration.presence.forgetting(device, fences: presence)
        }
        if devices[device]?.admitted == true { admission.release(device) }
        devices[device] = nil
        deadlines[device] = nil
        effects.saves[device] = nil
        effects.forgotten.append(device)
        if configuration.observing { effects.observed.append(device) }
    }

    // MARK: Time

    /// Advances the clock to `now`: fires the dwell and minimum-duration timers that are
    /// due (each device's on its own clock, `DeviceRecord.deviceClock`), forgets expired
    /// previews, and then republishes a share of the retained topics of every device
    /// after a connection (`republishAll`), from the states the timers left: what is
    /// republished is the last retained value, after the timers' own messages. A new
    /// book is first looked at for removed fences (`leaveRemovedFences`). The summary of
    /// refusals and notifications left out of the log comes once their interval is over,
    /// also when no more come (`LogBudget`).
    package mutating func tick(now: Double, book: FenceBook, into effects: inout LaneEffects) {
        leaveRemovedFences(book: book, into: &effects)
        if let summary = refusalLog.summary(at: now) { effects.log.append(LogEntry(level: .warning, message: summary)) }
        if let summary = notificationLog.summary(at: now) { effects.log.append(LogEntry(level: .info, message: summary)) }
        previews.expire(now: now)
        reckonAdmission(with: book)
        if !book.edition.isSame(as: timedEdition) {
            retime(with: book)
            timedEdition = book.edition
        }
        fireTimers(now: now, book: book, into: &effects)
        republish(book: book, into: &effects)
    }

    /// Fires the timers due by `now`, device by device in identifier order.
    private mutating func fireTimers(now: Double, book: FenceBook, into effects: inout LaneEffects) {
        guard !deadlines.isEmpty else { return }
        let due = deadlines.filter { $0.value <= now }.map(\.key).sorted()
        for device in due {
            guard let index = devices.slot(of: device) else {
                deadlines[device] = nil
                continue
            }
            let fences = book.deviceFences(of: device)
            let evaluator = configuration.evaluator
            let (before, evaluation) = withRecord(at: index) { record in
                (Persisted(record.state), evaluator.advance(to: record.deviceClock(at: now), fences: fences, state: &record.state))
            }
            record(evaluation, device: device, at: index, before: before, fences: fences, book: book, now: now, into: &effects)
            if configuration.observing && !evaluation.transitions.isEmpty { effects.observed.append(device) }
        }
    }

    /// Once for each edition of the book (at the next tick, or before a new device is
    /// admitted if that comes first): gives back the admission places of devices the
    /// file now names, so `DeviceAdmission` counts the devices kept that the book in
    /// force does not name (a device the file stops naming is forgotten before,
    /// `leaveRemovedFences`, so none comes to need a place).
    private mutating func reckonAdmission(with book: FenceBook) {
        guard !book.edition.isSame(as: admissionEdition) else { return }
        let candidates = candidates(since: admissionEdition, in: book)
        admissionEdition = book.edition
        for (device, index) in candidates where book.knows(device) {
            let admitted = withRecord(at: index) { record in
                defer { record.admitted = false }
                return record.admitted
            }
            if admitted { admission.release(device) }
        }
    }

    /// Works out the next deadline with the fences of `book` of every device whose
    /// fences may have changed since the book the deadlines were worked out with
    /// (`candidates`: those `book`'s lineage names, else every device, whose fences kept
    /// by the device table are then let go too: an earlier book's need not stay in
    /// memory until each device's next position looks them up again).
    private mutating func retime(with book: FenceBook) {
        let evaluator = configuration.evaluator
        if book.lineage.devicesChanged(since: timedEdition) == nil {
            deadlines = [:]
            devices.forgetFences()
        }
        for (device, index) in candidates(since: timedEdition, in: book) {
            let deadline = withRecord(at: index) { record in
                record.deadline = evaluator.nextDeadline(fences: book.deviceFences(of: device), entries: record.state.fences).map { $0 + record.clockOffset }
                return record.deadline
            }
            deadlines[device] = deadline
        }
    }

    /// The devices republished per tick after a connection.
    static let republishedPerTick = 200

    /// Republishes every device's retained topics from now on, a share each tick: each
    /// time the bridge connects to the broker, the first time after a start included (so
    /// the states loaded at start are published once connected, not into a queue that
    /// waits for the connection). They are last values sent at QoS 0
    /// (`PresenceMessages.lastValue`), so one the connection or a crash lost, or a broker
    /// that lost its retained messages, is put right.
    package mutating func republishAll() {
        republishing = devices.slotsByDevice.keys.sorted()
    }

    /// Republishes the retained topics of the next devices to republish after a
    /// connection (state document, tracker, badge, presence of each fence whose relation
    /// is known), so they are right even if the broker lost them, and clears those
    /// `deviceTopics` leaves out; a share each tick, not all at once.
    private mutating func republish(book: FenceBook, into effects: inout LaneEffects) {
        guard !republishing.isEmpty else { return }
        for device in republishing.suffix(Self.republishedPerTick) {
            guard let index = devices.slot(of: device) else { continue }
            let state = withRecord(at: index) { $0.state }
            let fences = book.deviceFences(of: device)
            keep(.badge, in: &effects.direct) { configuration.messages.badge(state.badge, of: device) }
            let relevant = Self.relevantFences(state, fences)
            keep(.state, in: &effects.direct) { configuration.presence.state(of: device, state, fences: relevant) }
            showTracker(of: device, at: index, state, fences: relevant, always: true, in: &effects.direct)
            for fence in fences.own where state.hasSeen(fence) {
                let entry = state.fences.first { $0.fence == fence.identifier }
                if entry?.established == false { continue }
                keep(.presence, in: &effects.direct) { configuration.presence.presence(of: device, fence: fence.identifier, inside: entry?.inside == true) }
            }
            effects.direct += configuration.presence.clearances(
                of: device, left: configuration.leftOutTopics, fences: fences, announceLimit: configuration.announceLimit)
        }
        republishing.removeLast(min(Self.republishedPerTick, republishing.count))
    }

    /// Saves at most `limit` of the last fixes not saved yet (a restart can do without
    /// them, so they are saved now and then rather than with every fix). Returns whether
    /// more are left, so that a shell can save the rest in further turns rather than
    /// stall the lane on one large transaction.
    @discardableResult
    package mutating func saveFixes(into effects: inout LaneEffects, limit: Int = .max) -> Bool {
        let unsaved = Array(devices.lazy.filter(\.value.unsavedFix).map(\.key).prefix(limit == .max ? .max : limit + 1))
        for device in unsaved.prefix(limit) {
            devices[device]?.unsavedFix = false
            if effects.saves[device] == nil { effects.saves[device] = devices[device]?.state }
        }
        return unsaved.count > limit
    }

    /// The state of `device`, if it has one here.
    package func state(of device: String) -> DeviceState? {
        devices[device]?.state
    }

    /// Whether a state of `device` saved now is saved as that of a device the fence file
    /// names (`StateStore.loadDevicesAndNames`): whether the book the lane last decided with
    /// names it (before the lane's first look after a start, whether its loaded state
    /// was saved so). A device such a state was saved for is forgotten at a start whose
    /// book no longer names it (`leaveRemovedFences`).
    package func savesAsNamed(_ device: String) -> Bool {
        decidedWith?.knows(device) ?? loadedAsNamed.contains(device)
    }

    /// The states of `saves` as the store takes them, each with `savesAsNamed`: the
    /// lane's commit reads them here, in one call, since each read of the core through
    /// the lane copies it (every field retained and released).
    package func rows(saving saves: [String: DeviceState]) -> [(device: String, state: DeviceState, named: Bool)] {
        saves.map { ($0.key, $0.value, savesAsNamed($0.key)) }
    }

    /// When the next timer of any device here is due, nil when none waits.
    package var nextDeadline: Double? { deadlines.values.min() }
}
