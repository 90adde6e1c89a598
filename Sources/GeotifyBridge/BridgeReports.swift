import GeotifyCore
import GeotifyDelivery
import GeotifyMQTT
import GeotifyStore
import GeotifyTime
import Synchronization

/// What the bridge's workers report beside their work: messages refused for their topic
/// alone, messages the publisher did not hand over (too large, or refused by
/// libmosquitto), the delivery worker's outcomes and the notifications a lane did not
/// queue for a full target. Each is counted, logged within
/// its budget (`LogBudget`, summed up past it at each housekeeping round) and, when it is
/// a failure, reported on `geotify/error`.
///
/// Apart from the bridge so that the workers that call it (the lanes, the publisher,
/// the web console's threads, the delivery worker) hold this and never the bridge: a
/// callback that held the bridge, even weakly (a weak reference is made strong for the
/// call), could hold its last reference, and the bridge's `deinit` would then run on
/// that worker's own thread and wait there for the worker itself (a `sync` on the queue
/// it runs on traps).
final class BridgeReports: Sendable {
    private let counters: Counters
    private let logger: Logger
    private let scheduler: any Scheduler
    private let publisher: Publisher
    private let messages: OutboundMessages
    private let topics: Topics
    /// The largest packet the broker takes (`maximumPacketBytes`), for the line about a
    /// message left out.
    private let maximumPacketBytes: Int
    /// How many warnings about messages refused for their topic or left out for their
    /// size are still logged in full (on the monotonic clock): the network thread and the
    /// web console refuse them.
    private let refusalLog: Mutex<RefusalLogBudget>
    /// How many messages libmosquitto refused are still logged in full, by its error
    /// code (on the monotonic clock): a refusal that lasts would otherwise log a line for
    /// every message.
    private let publishFailureLog: Mutex<LogBudget<Int32>>
    /// How many messages an MQTT 5 broker refused are still logged in full, by its reason
    /// code (on the monotonic clock): access rules that refuse a topic refuse every
    /// message published to it.
    private let brokerRefusalLog: Mutex<LogBudget<Int>>
    /// How many dead letters are still logged in full, by target (on the monotonic
    /// clock): a tracker may cause notifications at will, and a target that refuses them
    /// makes a dead letter of each, each still reported on `geotify/error`.
    private let deadLetterLog: Mutex<LogBudget<String>>
    /// How many notifications not queued for a full target are still logged in full, by
    /// target (on the monotonic clock): a tracker may cause them at will too.
    private let queueFullLog: Mutex<LogBudget<String>>

    /// Reports for a bridge with `settings`, publishing on `topics` through `publisher`;
    /// at the debug level every line is logged.
    init(
        settings: Settings, topics: Topics, messages: OutboundMessages, publisher: Publisher, counters: Counters, logger: Logger,
        scheduler: any Scheduler
    ) {
        self.counters = counters
        self.logger = logger
        self.scheduler = scheduler
        self.publisher = publisher
        self.messages = messages
        self.topics = topics
        maximumPacketBytes = settings.maximumPacketBytes
        let everyLine = settings.logLevel == .debug
        refusalLog = Mutex(RefusalLogBudget(everyLine: everyLine))
        publishFailureLog = Mutex(LogBudget(
            "lines about messages not published", ending: "each was counted under errors.\(ErrorCode.publish.rawValue)",
            everyLine: everyLine, name: { "code \($0)" }))
        brokerRefusalLog = Mutex(LogBudget(
            "lines about messages the broker refused", ending: "each was counted under errors.\(ErrorCode.publishRefused.rawValue)",
            everyLine: everyLine, name: { "reason \(Bridge.hex($0))" }))
        deadLetterLog = Mutex(LogBudget(
            "dead-letter lines", ending: "each is in the dead letters (geotify notify status) and was reported on \(topics.error)",
            everyLine: everyLine, name: { $0 }))
        queueFullLog = Mutex(LogBudget(
            "queue-full lines", ending: "each was counted under errors.\(ErrorCode.deliveryQueueFull.rawValue) and reported on \(topics.error)",
            everyLine: everyLine, name: { $0 }))
    }

    /// Counts, logs (as `refusalLog` allows) and reports on `geotify/error` a message
    /// refused for its topic alone (from the broker, or posted to the web console).
    func refuse(_ error: InputError, topic: String) {
        let topic = String(topic.prefix(200))
        counters.add(.errors(error.code))
        let (summary, inFull) = refusalLog.withLock { $0.take(error.code, at: scheduler.uptime) }
        if let summary { logger.warning(summary) }
        if inFull { logger.warning("refused the message on \(topic): \(error)") }
        publisher.send(messages.error(error, topic: topic, device: nil))
    }

    /// Logs a message the publisher did not hand over (counted there): one too large as
    /// `refusalLog` allows, also reported on `geotify/error` (`tooLarge`), one libmosquitto
    /// refused as `publishFailureLog` allows.
    func notHandedOver(_ message: OutboxMessage, _ reason: Publisher.NotHandedOver) {
        switch reason {
        case .tooLarge(let size, let announced):
            tooLarge(message, size: size, announced: announced)
        case .refused(let error):
            let (summary, inFull) = publishFailureLog.withLock { $0.take(error.code, at: scheduler.uptime) }
            if let summary { logger.error(summary) }
            if inFull { logger.error("could not publish to \(String(message.topic.prefix(200))): \(error)") }
        }
    }

    /// Counts and logs (as `brokerRefusalLog` allows) a message an MQTT 5 broker took
    /// and refused with reason `code` (`reason` its text), published to `topic` (nil when
    /// the publisher no longer knew it). Not reported on `geotify/error`: a broker that
    /// refuses the bridge's topics may refuse that one too, and each refusal would then
    /// cause another.
    func publishRefused(topic: String?, code: Int, reason: String) {
        counters.add(.errors(.publishRefused))
        let (summary, inFull) = brokerRefusalLog.withLock { $0.take(code, at: scheduler.uptime) }
        if let summary { logger.error(summary) }
        guard inFull else { return }
        logger.error(Self.refusedByBroker(topic: topic, code: code, reason: reason))
    }

    /// The line about a message an MQTT 5 broker refused with reason `code`.
    static func refusedByBroker(topic: String?, code: Int, reason: String) -> String {
        let message = topic.map { "the message published to \(String($0.prefix(200)))" } ?? "a message"
        let hint = switch code {
        case 0x87: "; do the broker's access rules let the bridge's login publish there?"
        case 0x95: "; the broker takes smaller messages (mosquitto: message_size_limit counts the payload)"
        default: ""
        }
        return "the broker refused \(message): \(Bridge.words(reason)) (MQTT v5 reason \(Bridge.hex(code))); it is not delivered\(hint)"
    }

    /// Logs (as `refusalLog` allows) and reports on `geotify/error` a message the
    /// publisher did not hand over, its packet of `size` bytes being larger than the broker
    /// takes (`maximumPacketBytes`, or the smaller Maximum Packet Size an MQTT 5 broker
    /// `announced`); a report that is itself too large is not reported again.
    private func tooLarge(_ message: OutboxMessage, size: Int, announced: Int?) {
        let limit = announced.map { "the \($0) the broker takes (the Maximum Packet Size it announced at the connection; maximumPacketBytes is \(maximumPacketBytes))" }
            ?? "the \(maximumPacketBytes) the broker takes (maximumPacketBytes)"
        let error = InputError(
            .messageTooLarge,
            "not published: the message would be a packet of \(size) bytes, more than \(limit), which would close the connection for it")
        let topic = String(message.topic.prefix(200))
        let (summary, inFull) = refusalLog.withLock { $0.take(error.code, at: scheduler.uptime) }
        if let summary { logger.warning(summary) }
        if inFull { logger.warning("\(topic): \(error)") }
        guard message.topic != topics.error else { return }
        publisher.send(messages.error(error, topic: topic, device: nil))
    }

    /// Logs, counts and, for a dead letter, reports on `geotify/error` what the delivery
    /// worker tells.
    func delivery(_ report: DeliveryReport) {
        switch report {
        case .delivered(let target, let eventID, let attempts):
            counters.add(.deliveriesDelivered)
            logger.debug("delivered \(eventID) to \(target) (attempt \(attempts))")
        case .retrying(let target, let eventID, let attempts, _, let reason):
            counters.add(.deliveryRetries)
            logger.log(attempts == 1 ? .warning : .debug, "could not deliver \(eventID) to \(target) (attempt \(attempts)): \(reason); trying again")
        case .deadLettered(let target, let device, let eventID, let reason):
            failure(
                .deliveryFailed,
                "gave up delivering \(eventID) to \(target): \(reason); it is in the dead letters (geotify notify status, geotify notify retry \(target))",
                target: target, device: device, within: deadLetterLog)
        case .deadLettersPruned(let target, let count):
            counters.add(.deadLettersPruned, count)
            logger.debug("deleted the \(count) oldest dead letters of \(target), past its maximumDeadLetters")
        case .storeFailed(let reason):
            counters.add(.errors(.stateWrite))
            logger.error("the delivery queue in the state database could not be used: \(reason); trying again")
        }
    }

    /// Counts, logs (as `queueFullLog` allows) and reports on `geotify/error` each
    /// notification a lane's commit did not queue for a target that was full.
    func refusedDeliveries(_ refusals: [DeliveryRefusal]) {
        for refusal in refusals {
            let entry = refusal.entry
            failure(
                .deliveryQueueFull,
                "did not queue \(entry.eventID) for \(entry.target): \(refusal.reason); it was published on \(topics.event(entry.device)) only",
                target: entry.target, device: entry.device, within: queueFullLog)
        }
    }

    /// Logs the sums of the lines each budget left out in the interval ended by `now`
    /// (on the monotonic clock), if any: at each housekeeping round.
    func logSummaries(at now: Double) {
        if let summary = refusalLog.withLock({ $0.summary(at: now) }) { logger.warning(summary) }
        if let summary = publishFailureLog.withLock({ $0.summary(at: now) }) { logger.error(summary) }
        if let summary = brokerRefusalLog.withLock({ $0.summary(at: now) }) { logger.error(summary) }
        if let summary = deadLetterLog.withLock({ $0.summary(at: now) }) { logger.error(summary) }
        if let summary = queueFullLog.withLock({ $0.summary(at: now) }) { logger.error(summary) }
    }

    /// One delivery's failure: counted under `code`, logged in full as `budget` allows
    /// for `target` (else summed up by it), and reported on `geotify/error` naming `device`.
    private func failure(_ code: ErrorCode, _ text: String, target: String, device: String, within budget: borrowing Mutex<LogBudget<String>>) {
        counters.add(.errors(code))
        let (summary, inFull) = budget.withLock { $0.take(target, at: scheduler.uptime) }
        if let summary { logger.error(summary) }
        if inFull { logger.error(text) }
        publisher.send([messages.failure(code, "\(text) (device \(device))")])
    }
}
