import GeotifyJSON

/// The outcome of a message that someone in the process waits for (`Inbound.requester`):
/// the HTTP console's command or OwnTracks HTTP-mode position.
package struct LaneAnswer: Sendable {
    /// What became of the message.
    package enum Outcome: Sendable {
        /// A command's reply document, as it would be published on `geotify/reply/<device>`.
        case reply(JSONObject)
        /// A position was taken (evaluated, dropped by the fix rules, or valid but not a
        /// position).
        case accepted
        /// A position was refused (undecodable, an unknown device under `strictDevices`,
        /// a new device beyond the limits), with the code the bridge counts.
        case refused(InputError)
    }

    package var requester: Int
    package var outcome: Outcome

    package init(requester: Int, outcome: Outcome) {
        self.requester = requester
        self.outcome = outcome
    }
}
