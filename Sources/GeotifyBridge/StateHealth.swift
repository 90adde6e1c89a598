import GeotifyStore
import Synchronization

/// Whether the state database can be written, across all lanes and the outbox, so that
/// a full or failing disk is reported once when it starts failing (logged, and published
/// on `geotify/error`) and once when it recovers, not on every write in between. A disk
/// at its limit often lets a small write through between failed ones; a failure within
/// `quietPeriod` of the last report is therefore not reported again. Meanwhile the
/// bridge keeps evaluating and publishing; `errors.state_write` counts every failed write.
final class StateHealth: Sendable {
    private struct State {
        /// Why writes fail, while they do.
        var failing: String?
        /// When a failure was last reported (monotonic seconds).
        var reported: Double?
    }

    /// Seconds after a report during which a new failure is not reported again.
    static let quietPeriod = 60.0

    private let state = Mutex(State())
    private let logger: Logger
    private let counters: Counters
    private let messages: OutboundMessages
    /// The monotonic clock.
    private let uptime: @Sendable () -> Double

    init(logger: Logger, counters: Counters, messages: OutboundMessages, uptime: @escaping @Sendable () -> Double) {
        self.logger = logger
        self.counters = counters
        self.messages = messages
        self.uptime = uptime
    }

    /// Records a failed write of `what`; when writes were working until now, logs it
    /// and hands the `geotify/error` report to `publish`.
    func failed(_ what: String, _ error: StoreError, publish: (OutboxMessage) -> Void) {
        counters.add(.errors(.stateWrite))
        let message = "could not save \(what): \(error); evaluating and publishing on, and retrying with every write"
        let now = uptime()
        let first = state.withLock { state in
            defer { state.failing = message }
            guard state.failing == nil, state.reported.map({ now - $0 >= StateHealth.quietPeriod }) ?? true else { return false }
            state.reported = now
            return true
        }
        guard first else { return }
        logger.error(message)
        publish(messages.failure(.stateWrite, message))
    }

    /// Why the state database cannot be written now; nil while it can.
    var problem: String? { state.withLock { $0.failing } }

    /// Records a successful write; logs the recovery when writes were failing.
    func succeeded() {
        let recovered = state.withLock { state in
            defer { state.failing = nil }
            return state.failing != nil
        }
        guard recovered else { return }
        counters.add(.stateWriteRecoveries)
        logger.info("the state database can be written again; states kept in memory meanwhile are saved")
    }
}
