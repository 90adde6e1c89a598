/// A `PendingChange` kept out of line (see `FenceState.pending`): immutable, replaced
/// whole when the change does. A pending change is rare and a fix reads every state
/// entry of its device, so keeping it here makes an entry 40 bytes instead of 64.
final class PendingBox: Sendable {
    let change: PendingChange

    init(_ change: PendingChange) {
        self.change = change
    }
}
