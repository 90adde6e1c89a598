import GeotifyCore
import GeotifyStore

/// What a lane decided while handling inputs, as values for the shell to carry out: state
/// to commit, messages to publish once it is committed, replies, occupancy changes, fence
/// writes, log lines and counter increments. The lane core only ever adds to it.
package struct LaneEffects: Sendable {
    /// States a restart needs, by device: committed together with `outbox` in one
    /// transaction, before anything of `outbox` is published, each with whether the
    /// fence file names the device (`LaneCore.savesAsNamed`).
    package var saves: [String: DeviceState] = [:]
    /// Devices whose state is forgotten (evicted, or no longer named by the fence file),
    /// deleted in the same transaction, before `saves` are written: a device's state in
    /// `saves` was decided after it was forgotten (the core drops it from `saves` when it
    /// forgets the device), so a position after the forgetting keeps its new state.
    package var forgotten: [String] = []
    /// Messages decided by the state in `saves`: persisted with it, then published, in order.
    package var outbox: [OutboxMessage] = []
    /// Notifications to deliver to targets, queued in the same transaction.
    package var deliveries: [DeliveryEntry] = []
    /// Replies and error reports: published after `outbox`, not persisted (a lost reply
    /// is asked for again).
    package var direct: [OutboxMessage] = []
    /// Changes to the occupancy of shared fences, which is counted across lanes.
    package var occupancy: [OccupancyChange] = []
    /// Fence changes commands asked for, to write to the fence file; their replies
    /// follow from `LaneCore.finish(_:results:book:into:)`.
    package var fenceWrites: [FenceWrite] = []
    /// Outcomes for requesters in the process (`Inbound.requester`).
    package var answers: [LaneAnswer] = []
    /// The devices whose state changed with these inputs, those forgotten included, when
    /// the core reports them (`LaneConfiguration.observing`): what the web console shows
    /// live (`LaneCore.liveUpdates(of:)`).
    package var observed: [String] = []
    /// Lines to log.
    package var log: [LogEntry] = []
    package var counters = CounterDelta()

    package init() {}

    /// Whether anything must be committed before publishing.
    package var needsCommit: Bool { !saves.isEmpty || !forgotten.isEmpty || !outbox.isEmpty || !deliveries.isEmpty }

    /// Adds a log line at `level` when the lane logs that level, building the text only then.
    package mutating func log(_ level: Logger.Level, at threshold: Logger.Level, _ message: @autoclosure () -> String) {
        if level >= threshold { log.append(LogEntry(level: level, message: message())) }
    }
}
