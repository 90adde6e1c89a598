import Dispatch
import GeotifyCore
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
/// Thread safety (why `@unchecked Sendable` is sound): `states` is only read and
/// written on `queue`; `inbox` is guarded by its mutex; everything else is immutable
/// or `Sendable`.
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
        /// The fence book in force.
        let book: @Sendable () -> FenceBook
    }

    private struct Inbox {
        var items: [Inbound] = []
        var draining = false
    }

    /// The most messages committed in one transaction.
    private static let batchLimit = 512

    private let queue: DispatchQueue
    private let inbox = Mutex(Inbox())
    private let environment: Environment
    private let evaluator = Evaluator()
    private var states: [String: DeviceState]

    init(index: Int, states: [String: DeviceState], environment: Environment) {
        queue = DispatchQueue(label: "geotify.lane.\(index)")
        self.states = states
        self.environment = environment
    }

    /// Queues a message; returns at once (it is called on the network thread).
    func submit(_ inbound: Inbound) {
        let startDraining = inbox.withLock { inbox in
            inbox.items.append(inbound)
            defer { inbox.draining = true }
            return !inbox.draining
        }
        if startDraining {
            queue.async { self.drain() }
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
        }
    }

    private func process(_ batch: [Inbound]) {
        let book = environment.book()
        var changed: [String: DeviceState] = [:]
        var outbox: [OutboxMessage] = []
        for inbound in batch {
            do {
                switch inbound.route {
                case .location(let format):
                    try evaluate(inbound, format: format, book: book, changed: &changed, outbox: &outbox)
                case .command:
                    try execute(inbound, changed: &changed, outbox: &outbox)
                }
            } catch {
                refuse(inbound, error)
            }
        }
        commit(changed, outbox)
    }

    private func evaluate(
        _ inbound: Inbound, format: LocationDecoder.Format, book: FenceBook,
        changed: inout [String: DeviceState], outbox: inout [OutboxMessage]
    ) throws(InputError) {
        guard let fix = try environment.decoder.decode(
            inbound.message.payload, device: inbound.device, format: format, arrival: inbound.arrival)
        else {
            environment.counters.add("messages_ignored")
            return
        }
        guard let fences = book.devices[inbound.device] ?? (environment.settings.strictDevices ? nil : []) else {
            throw InputError(.unknownDevice, "the device \"\(inbound.device)\" has no fences (strictDevices is on)")
        }
        var state = states[inbound.device] ?? DeviceState()
        let evaluation = evaluator.evaluate(fix, fences: fences, revision: book.revision, state: &state)
        states[inbound.device] = state
        changed[inbound.device] = state
        environment.counters.add("fixes_evaluated")
        environment.counters.add("transitions", evaluation.transitions.count)
        environment.counters.add("notifications", evaluation.notifications.count)
        for notification in evaluation.notifications {
            environment.logger.info("\(notification.device) \(notification.kind.rawValue) \(notification.fence) (badge \(notification.badge))")
            outbox.append(environment.messages.event(notification))
            outbox.append(environment.messages.badge(notification.badge, of: notification.device))
        }
    }

    private func execute(_ inbound: Inbound, changed: inout [String: DeviceState], outbox: inout [OutboxMessage]) throws(InputError) {
        switch try Command(payload: inbound.message.payload, maximumBytes: environment.settings.maximumPayloadBytes) {
        case .resetBadge:
            var state = states[inbound.device] ?? DeviceState()
            state.badge = 0
            states[inbound.device] = state
            changed[inbound.device] = state
            environment.counters.add("commands_executed")
            environment.logger.info("\(inbound.device) badge reset")
            outbox.append(environment.messages.badge(0, of: inbound.device))
        }
    }

    private func refuse(_ inbound: Inbound, _ error: InputError) {
        environment.counters.count(error)
        environment.logger.warning("refused the message on \(inbound.message.topic): \(error)")
        environment.publisher.send(environment.messages.error(error, topic: inbound.message.topic, device: inbound.device))
    }

    /// Persists the batch's states with the messages they caused, then publishes them.
    /// When the store cannot be written the messages are still published: the bridge
    /// keeps working and reports the failure.
    private func commit(_ changed: [String: DeviceState], _ outbox: [OutboxMessage]) {
        guard !changed.isEmpty || !outbox.isEmpty else { return }
        let ids: [Int64?]
        do {
            ids = try environment.store.save(devices: changed.map { ($0.key, $0.value) }, outbox: outbox).map { $0 }
        } catch {
            environment.counters.add("errors.state_write")
            environment.logger.error("could not save device state: \(error)")
            environment.publisher.send(environment.messages.failure("state_write", "could not save device state: \(error)"))
            ids = Array(repeating: nil, count: outbox.count)
        }
        for (message, id) in zip(outbox, ids) {
            environment.publisher.send(message, outboxID: id)
        }
    }
}
