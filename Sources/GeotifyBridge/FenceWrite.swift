import GeotifyCore
import GeotifyStore

/// A change to the fence file that a command asked for: decided (validated against the
/// fences in force) by the lane core, written by the shell, and answered by the core
/// once the write's outcome is known.
package struct FenceWrite: Sendable {
    /// How the reply to a successful write is shaped.
    package enum Reply: Sendable, Equatable {
        /// `add`/`edit`: the fence as stored, the previous one for an edit, warnings.
        case changed(edit: Bool)
        /// `delete` with `"confirm": true`: the fence deleted.
        case deleted
        /// `commit` of a preview: what was committed and the fence.
        case committed
    }

    package var change: FenceChange
    /// The device's own fences the change was decided on (what its preview saw): the
    /// write is refused as `stale` if they changed since. Nil for a direct change, which
    /// applies to whatever the device has when it is written.
    package var basis: [Fence]?
    package var request: CommandRequest
    package var reply: Reply

    package init(change: FenceChange, basis: [Fence]?, request: CommandRequest, reply: Reply) {
        self.change = change
        self.basis = basis
        self.request = request
        self.reply = reply
    }
}
