import GeotifyConsole
import Synchronization

/// Where the lanes send what changed, for whoever watches live (the web console's map):
/// each evaluated device's state, each device forgotten and each notification. Empty
/// until someone subscribes; then the lanes report after each batch, off the
/// per-message path.
final class LiveUpdates: Sendable {
    private let sink = Mutex<(@Sendable (ConsoleUpdate) -> Void)?>(nil)

    /// Sends every update to `sink` from now on.
    func subscribe(_ sink: @escaping @Sendable (ConsoleUpdate) -> Void) {
        self.sink.withLock { $0 = sink }
    }

    /// Whether anyone listens.
    var isWatched: Bool { sink.withLock { $0 != nil } }

    /// Reports `update` to the subscriber, if any.
    func send(_ update: ConsoleUpdate) {
        let current = sink.withLock { $0 }
        current?(update)
    }
}
