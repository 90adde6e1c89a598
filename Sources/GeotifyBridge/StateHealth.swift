import GeotifyStore
import Synchronization

/// Whether the state database can be written, across all lanes and the outbox, so that
/// a full or failing disk is reported once when it starts failing (logged, and published
/// on `geotify/error`) and once when it recovers, not on every write in between.
/// Meanwhile the bridge keeps evaluating and publishing; `errors.state_write` counts
/// every failed write.
final class StateHealth: Sendable {
    private let failing = Mutex(false)
    private let logger: Logger
    private let counters: Counters
    private let messages: OutboundMessages

    init(logger: Logger, counters: Counters, messages: OutboundMessages) {
        self.logger = logger
        self.counters = counters
        self.messages = messages
    }

    /// Records a failed write of `what`; when writes were working until now, logs it
    /// and hands the `geotify/error` report to `publish`.
    func failed(_ what: String, _ error: StoreError, publish: (OutboxMessage) -> Void) {
        counters.add(.errors(.stateWrite))
        let first = failing.withLock { failing in
            defer { failing = true }
            return !failing
        }
        guard first else { return }
        let message = "could not save \(what): \(error); evaluating and publishing on, and retrying with every write"
        logger.error(message)
        publish(messages.failure(.stateWrite, message))
    }

    /// Records a successful write; logs the recovery when writes were failing.
    func succeeded() {
        let recovered = failing.withLock { failing in
            defer { failing = false }
            return failing
        }
        guard recovered else { return }
        counters.add(.stateWriteRecoveries)
        logger.info("the state database can be written again; states kept in memory meanwhile are saved")
    }
}
