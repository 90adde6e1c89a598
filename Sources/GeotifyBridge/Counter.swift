import GeotifyCore

/// One running total the bridge keeps, so nothing is dropped or refused without a
/// trace: `geotify/stats`, `geotify status` and `/metrics` report them by `name`.
package enum Counter: Hashable, Sendable {
    /// Messages that arrived on a subscribed topic (positions and commands).
    case messagesReceived
    /// Valid messages that are not positions (OwnTracks `lwt`, `card`, ...).
    case messagesIgnored
    /// Messages on a topic no filter routes.
    case messagesUnrouted
    /// Positions and commands of devices another instance owns, dropped unread (not in
    /// `messagesReceived`, which counts what this instance handles).
    case messagesOtherShards
    /// Fixes evaluated against the device's fences.
    case fixesEvaluated
    /// Fixes kept as the last position but too inaccurate to decide anything.
    case fixesInaccurate
    /// Fixes not evaluated at all, by reason.
    case fixesDropped(FixAcceptance.Drop)
    case transitions
    case notifications
    case commandsExecuted
    /// Commands refused, by code.
    case commandsRefused(ErrorCode)
    /// Refused input and failures, by code (`errors.invalid_json`).
    case errors(ErrorCode)
    /// New fence books put in force.
    case fenceReloads
    /// Times the state database could be written again after failing.
    case stateWriteRecoveries
    /// Messages read back from the outbox because they came while the publisher's
    /// queue was full (`maximumWaitingMessages`): how often the bridge spills.
    case outboxReadBack
    /// Starts that found the outbox's hand-over mark (`outbox.handed`) damaged, and so
    /// sent none of the messages left in the outbox (`DamagedOutboxMark`).
    case outboxMarkDamaged
    /// Retained topics of removed fences and devices cleared at a start
    /// (`RetainedSweep`).
    case sweepCleared
    /// Stale retained topics that came past the sweep's bound
    /// (`RetainedCollection.maximumStale`), or after its collection ended: left to a
    /// later start's sweep.
    case sweepSkipped
    /// Filters of the start's sweep the broker refused (its access rules): nothing
    /// retained under them was seen, so nothing there is cleared.
    case sweepRefused
    /// Notifications a delivery target acknowledged.
    case deliveriesDelivered
    /// Delivery attempts that failed and will be tried again.
    case deliveryRetries
    /// Dead letters deleted as the oldest beyond their target's `maximumDeadLetters`.
    case deadLettersPruned
    /// What the HTTP server counts, by its own name (`http_responses.200`,
    /// `http_refused.payload_too_large`).
    case http(String)

    /// The name reports use: `fixes_dropped.too_old`, `errors.invalid_json`.
    package var name: String {
        switch self {
        case .messagesReceived: "messages_received"
        case .messagesIgnored: "messages_ignored"
        case .messagesUnrouted: "messages_unrouted"
        case .messagesOtherShards: "messages_other_shards"
        case .fixesEvaluated: "fixes_evaluated"
        case .fixesInaccurate: "fixes_inaccurate"
        case .fixesDropped(let reason): "fixes_dropped.\(reason.rawValue)"
        case .transitions: "transitions"
        case .notifications: "notifications"
        case .commandsExecuted: "commands_executed"
        case .commandsRefused(let code): "commands_refused.\(code.rawValue)"
        case .errors(let code): "errors.\(code.rawValue)"
        case .fenceReloads: "fence_reloads"
        case .stateWriteRecoveries: "state_write_recoveries"
        case .outboxReadBack: "outbox_read_back"
        case .outboxMarkDamaged: "outbox_mark_damaged"
        case .sweepCleared: "sweep_cleared"
        case .sweepSkipped: "sweep_skipped"
        case .sweepRefused: "sweep_refused"
        case .deliveriesDelivered: "deliveries_delivered"
        case .deliveryRetries: "delivery_retries"
        case .deadLettersPruned: "dead_letters_pruned"
        case .http(let name): name
        }
    }
}
