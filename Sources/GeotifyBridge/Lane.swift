import Dispatch
import Foundation
import GeotifyCore
import GeotifyJSON
import GeotifyStore
import Synchronization

/// A serial evaluation lane: the devices hashed to it are decoded and evaluated here,
/// one message at a time in arrival order, so each device's fixes stay in order while
/// different lanes run in parallel.
///
/// Messages are taken in batches: each batch's state changes and the messages they
/// cause are committed in one transaction, then published. Under load that turns many
/// small commits into few; when idle a batch is a single message.
///
/// libmosquitto acknowledges a QoS 1 message to the broker before handing it over, so
/// a message submitted here but not yet committed is lost if the process is killed.
/// To keep that window small, `submit` makes the network thread wait while more than
/// `backlogLimit` messages are uncommitted: the broker then keeps the rest, unacknowledged,
/// in the bridge's persistent session.
///
/// Thread safety (why `@unchecked Sendable` is sound): the lane's mutable state
/// (`states`, `deadlines`, `ownTracksDevices`, `latency`, `unsaved`, `commands`) is only
/// read and written on `queue`; `inbox` is guarded by its mutex and `room` is a
/// condition variable; everything else is immutable or `Sendable`.
final class Lane: @unchecked Sendable {
    /// What all lanes share.
    struct Environment: Sendable {
        let settings: Settings
        let decoder: LocationDecoder
        let messages: OutboundMessages
        let store: StateStore
        let publisher: Publisher
        let counters: Counters
        let logger: Logger
        /// The fences in force and their file.
        let fences: LiveFenceBook
        /// How many devices are inside each shared fence, across lanes.
        let occupancy: Occupancy
        /// The retained presence topics.
        let presence: PresenceMessages
        /// The OwnTracks transitions published for OwnTracks devices; nil when off.
        let ownTracks: OwnTracksTransition?
        /// The `maximumDevices` limit.
        let admission: DeviceAdmission
        /// Whether the state database can be written.
        let health: StateHealth
        /// The clock, in seconds since 1970.
        let now: @Sendable () -> Double
    }

    private struct Inbox {
        var items: [Inbound] = []
        var draining = false
        /// Messages submitted and not yet committed (queued or in the batch at work).
        var uncommitted = 0
    }

    /// The most messages committed in one transaction.
    private static let batchLimit = 512
    /// The most uncommitted messages before `submit` waits for the lane to catch up.
    static let backlogLimit = 128

    private let queue: DispatchQueue
    private let inbox = Mutex(Inbox())
    /// Signalled when the backlog falls, to wake a waiting `submit`.
    private let room = NSCondition()
    private let environment: Environment
    private let evaluator: Evaluator
    private let commands: Commands
    private var states: [String: DeviceState]
    /// When each device with a pending change or an unfired dwell next needs its clock
    /// advanced.
    private var deadlines: [String: Double] = [:]
    /// The devices whose positions arrive as OwnTracks messages.
    private var ownTracksDevices: Set<String> = []
    /// How long messages took from arrival to commit since the last report.
    private var latency = LatencyHistogram()
    /// Devices whose latest state could not be saved (a full disk); saved with the next
    /// batch that can be.
    private var unsaved: Set<String> = []

    init(index: Int, states: [String: DeviceState], environment: Environment) {
        queue = DispatchQueue(label: "geotify.lane.\(index)")
        self.states = states
        self.environment = environment
        evaluator = Evaluator(rules: environment.settings.rules, acceptance: environment.settings.acceptance)
        commands = Commands(environment: environment)
        let book = environment.fences.book
        for (device, state) in states {
            if let deadline = evaluator.nextDeadline(fences: book.deviceFences(of: device), state: state) {
                deadlines[device] = deadline
            }
        }
    }

    /// Queues a message (it is called on the network thread); waits while the lane is
    /// more than `backlogLimit` messages behind.
    func submit(_ inbound: Inbound) {
        let (startDraining, backlog) = inbox.withLock { inbox in
            inbox.items.append(inbound)
            inbox.uncommitted += 1
            defer { inbox.draining = true }
            return (!inbox.draining, inbox.uncommitted)
        }
        if startDraining {
            queue.async { self.drain() }
        }
        if backlog > Lane.backlogLimit {
            room.lock()
            while inbox.withLock({ $0.uncommitted }) > Lane.backlogLimit / 2 {
                _ = room.wait(until: Date().addingTimeInterval(0.1))
            }
            room.unlock()
        }
    }

    /// Fires the dwell and minimum-duration timers that are due; called every 200 ms.
    func tick() {
        queue.async { self.advanceDueDevices() }
    }

    /// The number of devices with state, and the arrival-to-commit latencies since the
    /// last call.
    func statistics() -> (devices: Int, latency: LatencyHistogram) {
        queue.sync {
            defer { latency = LatencyHistogram() }
            return (states.count, latency)
        }
    }

    /// Blocks until every message submitted so far has been handled.
    func waitUntilIdle() {
        queue.sync {}
    }

    private func drain() {
        while true {
            let batch = inbox.withLock { inbox in
                let count = min(inbox.items.count, Lane.batchLimit)
                let batch = Array(inbox.items.prefix(count))
                inbox.items.removeFirst(count)
                if batch.isEmpty { inbox.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            process(batch)
            inbox.withLock { $0.uncommitted -= batch.count }
            room.lock()
            room.broadcast()
            room.unlock()
        }
    }

    private func process(_ batch: [Inbound]) {
        let book = environment.fences.book
        var changed: [String: DeviceState] = [:]
        var outbox: [OutboxMessage] = []
        var replies: [OutboxMessage] = []
        for item in decode(batch, book: book) {
            switch item {
            case .fix(let fix, let arrival):
                evaluate(fix, arrival: arrival, book: book, changed: &changed, outbox: &outbox)
            case .command(let inbound):
                replies += execute(inbound, changed: &changed, outbox: &outbox)
            case .refused(let inbound, let error):
                refuse(inbound, error)
            case .ignored:
                environment.counters.add("messages_ignored")
            }
        }
        commit(changed, outbox)
        for reply in replies { environment.publisher.send(reply) }
        let committed = environment.now()
        for inbound in batch { latency.record(max(0, committed - inbound.arrival)) }
    }

    /// A batch message after decoding.
    private enum Item {
        case fix(Fix, arrival: Double)
        case command(Inbound)
        case refused(Inbound, InputError)
        case ignored
    }

    /// Decodes the batch's positions and puts each device's fixes in timestamp order
    /// (stable, and only among that device's fixes), so a burst of queued positions
    /// delivered after a reconnect is evaluated as it happened.
    private func decode(_ batch: [Inbound], book: FenceBook) -> [Item] {
        var items: [Item] = []
        items.reserveCapacity(batch.count)
        var slots: [String: [Int]] = [:]
        for inbound in batch {
            switch inbound.route {
            case .command:
                items.append(.command(inbound))
            case .location(let format):
                do throws(InputError) {
                    guard let fix = try environment.decoder.decode(
                        inbound.message.payload, device: inbound.device, format: format, arrival: inbound.arrival)
                    else {
                        items.append(.ignored)
                        continue
                    }
                    if format == .ownTracks { ownTracksDevices.insert(fix.device) }
                    guard book.knows(fix.device) || !environment.settings.strictDevices else {
                        throw InputError(.unknownDevice, "the device \"\(fix.device)\" has no fences (strictDevices is on)")
                    }
                    slots[fix.device, default: []].append(items.count)
                    items.append(.fix(fix, arrival: inbound.arrival))
                } catch {
                    items.append(.refused(inbound, error))
                }
            }
        }
        for positions in slots.values where positions.count > 1 {
            let fixes = positions.map { items[$0] }.sorted { lhs, rhs in
                guard case .fix(let left, _) = lhs, case .fix(let right, _) = rhs else { return false }
                return left.timestamp < right.timestamp
            }
            for (position, item) in zip(positions, fixes) { items[position] = item }
        }
        return items
    }

    private func evaluate(
        _ fix: Fix, arrival: Double, book: FenceBook,
        changed: inout [String: DeviceState], outbox: inout [OutboxMessage]
    ) {
        let fences = book.deviceFences(of: fix.device)
        guard states[fix.device] != nil || admit(fix.device) else { return }
        var state = states[fix.device] ?? DeviceState()
        let evaluation = evaluator.evaluate(fix, fences: fences, revision: book.revision, now: arrival, state: &state)
        switch evaluation.outcome {
        case .dropped(let reason):
            environment.counters.add("fixes_dropped.\(reason.rawValue)")
            environment.logger.debug("dropped a fix of \(fix.device) at \(fix.timestamp): \(reason.rawValue)")
            return
        case .inaccurate:
            environment.counters.add("fixes_inaccurate")
        case .evaluated, .advanced:
            environment.counters.add("fixes_evaluated")
        }
        record(evaluation, device: fix.device, state: state, fences: fences, changed: &changed, outbox: &outbox)
    }

    /// Whether a device not seen before may have state (`maximumDevices`); refuses and
    /// reports it when not.
    private func admit(_ device: String) -> Bool {
        let (admitted, firstRefusal) = environment.admission.admit()
        guard !admitted else { return true }
        let error = InputError(
            .tooManyDevices,
            "the bridge already keeps state for \(environment.admission.maximum) devices (maximumDevices); the position of the new device \"\(device)\" is refused")
        environment.counters.count(error)
        if firstRefusal {
            environment.logger.error("\(error.message); further new devices are refused and counted (errors.too_many_devices)")
            environment.publisher.send(environment.messages.error(error, topic: nil, device: device))
        }
        return false
    }

    /// Keeps the new state, schedules the device's next timer, and queues what the
    /// evaluation publishes: notifications (also as OwnTracks transitions for OwnTracks
    /// devices), the badge, and on a change of presence or badge the retained state,
    /// tracker, presence and occupancy topics.
    private func record(
        _ evaluation: Evaluation, device: String, state: DeviceState, fences: DeviceFences,
        changed: inout [String: DeviceState], outbox: inout [OutboxMessage]
    ) {
        states[device] = state
        changed[device] = state
        deadlines[device] = evaluator.nextDeadline(fences: fences, state: state)
        if !evaluation.transitions.isEmpty {
            environment.counters.add("transitions", evaluation.transitions.count)
            environment.counters.add("notifications", evaluation.notifications.count)
        }
        for notification in evaluation.notifications {
            environment.logger.info("\(notification.device) \(notification.kind.rawValue) \(notification.fence) (badge \(notification.badge))")
            outbox.append(environment.messages.event(notification))
            if ownTracksDevices.contains(device), let transition = environment.ownTracks?.message(notification) {
                outbox.append(transition)
            }
        }
        if let last = evaluation.notifications.last {
            outbox.append(environment.messages.badge(last.badge, of: device))
        }
        guard evaluation.changedPresence || !evaluation.notifications.isEmpty else { return }
        outbox += presence(of: device, state: state, fences: fences)
        for transition in evaluation.transitions where transition.kind != .dwell {
            let inside = transition.kind == .enter
            outbox.append(environment.presence.presence(of: device, fence: transition.fence.identifier, inside: inside))
            if let set = fences.owner(of: transition.fence.identifier) {
                outbox += occupancy(owner: set.owner, fence: transition.fence.identifier, device: device, inside: inside)
            }
        }
        let book = environment.fences.book
        for identifier in evaluation.forgotten {
            for set in book.shared.values where set.fence(identifier) != nil {
                outbox += occupancy(owner: set.owner, fence: identifier, device: device, inside: false)
            }
        }
    }

    /// The retained state document and tracker of `device`.
    private func presence(of device: String, state: DeviceState, fences: DeviceFences) -> [OutboxMessage] {
        let sharedInside = state.fences.filter { entry in entry.inside && !fences.own.contains { $0.identifier == entry.fence } }
            .compactMap { fences.fence($0.fence) }
        let relevant = fences.own + sharedInside
        return [
            environment.presence.state(of: device, state, fences: relevant),
            environment.presence.tracker(of: device, state, fences: relevant),
        ]
    }

    /// The new occupancy count of a shared fence, when `device` changed it.
    private func occupancy(owner: String, fence: String, device: String, inside: Bool) -> [OutboxMessage] {
        guard let count = environment.occupancy.update(owner: owner, fence: fence, device: device, inside: inside) else { return [] }
        return [environment.presence.occupancy(owner: owner, fence: fence, count: count)]
    }

    /// Advances the clock of every device whose timer is due.
    private func advanceDueDevices() {
        let now = environment.now()
        let due = deadlines.filter { $0.value <= now }.map(\.key)
        guard !due.isEmpty else { return }
        let book = environment.fences.book
        var changed: [String: DeviceState] = [:]
        var outbox: [OutboxMessage] = []
        for device in due {
            guard var state = states[device] else {
                deadlines[device] = nil
                continue
            }
            let fences = book.deviceFences(of: device)
            let evaluation = evaluator.advance(to: now, fences: fences, state: &state)
            record(evaluation, device: device, state: state, fences: fences, changed: &changed, outbox: &outbox)
        }
        commit(changed, outbox)
    }

    /// Runs a command and returns its replies: on `geotify/reply/<device>`, and also on
    /// the MQTT v5 response topic with the correlation data when the request carried them.
    private func execute(_ inbound: Inbound, changed: inout [String: DeviceState], outbox: inout [OutboxMessage]) -> [OutboxMessage] {
        let device = inbound.device
        let decoded = Command.decode(inbound.message.payload, maximumBytes: environment.settings.maximumPayloadBytes)
        var reply = JSONObject()
        if let id = decoded.id { reply["id"] = .string(id) }
        if let name = decoded.actionName { reply["action"] = .string(name) }
        do throws(CommandRefusal) {
            let command: Command
            switch decoded.result {
            case .success(let success):
                command = success
            case .failure(let error):
                environment.publisher.send(environment.messages.error(error, topic: inbound.message.topic, device: device))
                throw CommandRefusal(error)
            }
            guard environment.settings.commandsEnabled else {
                throw CommandRefusal(InputError(.notAllowed, "commands are turned off (the commands setting)"))
            }
            guard commands.allows(device) || command.action == .resetBadge && environment.fences.book.devices[device] != nil else {
                throw CommandRefusal(InputError(.notAllowed, "commands may not manage the device \"\(device)\" (not in the fence file or not in commandDevices)"))
            }
            reply["ok"] = true
            if command.action == .resetBadge {
                guard states[device] != nil || admit(device) else {
                    throw CommandRefusal(InputError(.tooManyDevices, "the bridge keeps state for no more devices (maximumDevices)"))
                }
                var state = states[device] ?? DeviceState()
                state.badge = 0
                states[device] = state
                changed[device] = state
                environment.logger.info("\(device) badge reset")
                outbox.append(environment.messages.badge(0, of: device))
                outbox += presence(of: device, state: state, fences: environment.fences.book.deviceFences(of: device))
                reply["badge"] = 0
            } else {
                for member in try commands.run(command, device: device, state: states[device]).members {
                    reply[member.key] = member.value
                }
            }
            environment.counters.add("commands_executed")
        } catch {
            reply["ok"] = false
            reply["error"] = ["code": .string(error.code), "message": .string(error.message)]
            environment.counters.add("commands_refused.\(error.code)")
            environment.logger.warning("refused the command on \(inbound.message.topic): \(error.code): \(error.message)")
        }
        var replies = [environment.messages.reply(reply, to: device)]
        if let responseTopic = inbound.message.responseTopic {
            var response = environment.messages.reply(reply, to: device)
            response.topic = responseTopic
            response.correlationData = inbound.message.correlationData
            replies.append(response)
        }
        return replies
    }

    private func refuse(_ inbound: Inbound, _ error: InputError) {
        environment.counters.count(error)
        environment.logger.warning("refused the message on \(inbound.message.topic): \(error)")
        environment.publisher.send(environment.messages.error(error, topic: inbound.message.topic, device: inbound.device))
    }

    /// Persists the batch's states with the messages they caused, then publishes them.
    /// When the store cannot be written (a full or failing disk) the messages are still
    /// published: the bridge keeps working, reports the failure once on `geotify/error`
    /// (and counts every failed batch in `errors.state_write`), keeps the unsaved states
    /// to save with the next batch, and reports when writes work again.
    private func commit(_ changed: [String: DeviceState], _ outbox: [OutboxMessage]) {
        guard !changed.isEmpty || !outbox.isEmpty else { return }
        var devices = changed
        for device in unsaved where devices[device] == nil { devices[device] = states[device] }
        let ids: [Int64?]
        do {
            ids = try environment.store.save(devices: devices.map { ($0.key, $0.value) }, outbox: outbox).map { $0 }
            unsaved.removeAll()
            environment.health.succeeded()
        } catch {
            unsaved.formUnion(devices.keys)
            environment.health.failed("device state", error) { environment.publisher.send($0) }
            ids = Array(repeating: nil, count: outbox.count)
        }
        for (message, id) in zip(outbox, ids) {
            environment.publisher.send(message, outboxID: id)
        }
    }
}
