import GeotifyMQTT
import Synchronization

/// Records every `MQTTEvent` an `MQTTClient` reports, in order, so a test can wait
/// (bounded) for the one it expects. Pass `recorder.record` as the client's `onEvent`.
package final class EventRecorder: Sendable {
    private let events = Mutex<[MQTTEvent]>([])

    /// Creates an empty recorder.
    package init() {}

    /// Appends an event; this is the `onEvent` closure to hand to a client.
    @Sendable
    package func record(_ event: MQTTEvent) {
        events.withLock { $0.append(event) }
    }

    /// Every event recorded so far, oldest first.
    package var all: [MQTTEvent] {
        events.withLock { $0 }
    }

    /// How many events have been recorded; a mark to wait for later events with
    /// `waitFor(after:)`.
    package var count: Int {
        events.withLock { $0.count }
    }

    /// Waits up to `timeout` seconds for an event, at position `after` or later, that
    /// `match` picks out, and returns what `match` made of it (nil on timeout).
    package func waitFor<Value>(
        after start: Int = 0,
        timeout: Double = 10,
        _ match: (MQTTEvent) -> Value?
    ) -> Value? {
        var found: Value?
        waitUntil(timeout: timeout) {
            let recorded = all
            found = recorded.dropFirst(start).lazy.compactMap(match).first
            return found != nil
        }
        return found
    }

    /// Waits for a `.connected` event at position `after` or later; returns its
    /// `sessionPresent`, or nil on timeout.
    package func waitForConnected(after start: Int = 0, timeout: Double = 10) -> Bool? {
        waitFor(after: start, timeout: timeout) { event in
            if case .connected(let sessionPresent) = event { return sessionPresent }
            return nil
        }
    }

    /// Waits for a `.published` event carrying `messageID`; says whether it came in time.
    package func waitForPublished(_ messageID: Int32, timeout: Double = 10) -> Bool {
        waitFor(timeout: timeout) { event in
            if case .published(let id) = event, id == messageID { return true }
            return nil
        } ?? false
    }

    /// Waits for a `.subscribed` event carrying `messageID`; returns its granted QoS
    /// list, or nil on timeout.
    package func waitForSubscribed(_ messageID: Int32, timeout: Double = 10) -> [Int]? {
        waitFor(timeout: timeout) { event in
            if case .subscribed(let id, let granted) = event, id == messageID { return granted }
            return nil
        }
    }

    /// The messages among the recorded events, oldest first.
    package var messages: [MQTTMessage] {
        all.compactMap { event in
            if case .message(let message) = event { return message }
            return nil
        }
    }

    /// Forgets everything recorded so far.
    package func clear() {
        events.withLock { $0.removeAll() }
    }
}
