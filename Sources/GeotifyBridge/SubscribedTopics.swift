import GeotifyCore

/// Every topic filter the bridge subscribes to with given settings, each with the input
/// it feeds: what the bridge subscribes to when it connects, and what the settings are
/// checked against, so that no message is taken by two inputs and no input reads what the
/// bridge publishes (`PublishedTopics`).
///
/// The router takes a message for the first input that matches it (positions, then
/// commands), so a `locationTopic` of `geotify/cmd/#` read every command as a position,
/// and a Home Assistant prefix of `geotify/cmd` made the command topic of a device named
/// `status` its birth topic. Such settings are refused when they load.
package struct SubscribedTopics: Sendable {
    /// One subscription.
    package struct Input: Sendable, Equatable {
        /// The filter subscribed to.
        package let filter: String
        /// What the bridge reads there, for the error: `commands`.
        package let what: String
        /// The filter as an error names it, with the setting that places it:
        /// `"locationTopic" "geotify/#"`, `the command filter geotify/cmd/# (of "topicPrefix")`.
        package let subject: String
        /// Whether the bridge publishes these topics itself and reads them back (its
        /// instances' occupancy parts), so they are not checked against `PublishedTopics`.
        package let readsBack: Bool

        init(filter: String, what: String, subject: String, readsBack: Bool = false) {
            self.filter = filter
            self.what = what
            self.subject = subject
            self.readsBack = readsBack
        }
    }

    /// In the order the bridge subscribes to them.
    package let inputs: [Input]

    /// The topics the bridge subscribes to with `settings`.
    package init(settings: Settings) {
        let topics = Topics(prefix: settings.topicPrefix, shard: settings.shard)
        var inputs = [
            Input(filter: settings.ownTracksTopic, what: "OwnTracks positions", subject: "\"owntracksTopic\" \"\(settings.ownTracksTopic)\""),
            Input(filter: settings.locationTopic, what: "plain JSON positions", subject: "\"locationTopic\" \"\(settings.locationTopic)\""),
            Input(filter: topics.commands, what: "commands", subject: "the command filter \(topics.commands) (of \"topicPrefix\")"),
        ]
        if settings.homeAssistantEnabled {
            let birth = HomeAssistantDiscovery.birthTopic(prefix: settings.homeAssistantPrefix)
            inputs.append(Input(
                filter: birth, what: "Home Assistant's birth message", subject: "Home Assistant's birth topic \(birth) (of \"homeassistant.prefix\")"))
        }
        if let parts = topics.occupancyParts {
            inputs.append(Input(
                filter: parts, what: "the instances' occupancy parts", subject: "the occupancy parts' filter \(parts) (of \"topicPrefix\")", readsBack: true))
        }
        self.inputs = inputs
    }

    /// Why these subscriptions cannot work together, naming a topic of the conflict, nil
    /// when they can: an input that matches a topic the bridge publishes (it would read
    /// its own messages), else two inputs that match one topic (one of them would lose
    /// it). Every input is checked against the published topics before any two inputs
    /// against each other.
    package func conflict(with published: PublishedTopics) -> String? {
        for input in inputs where !input.readsBack {
            if let (family, common) = published.overlap(with: input.filter) {
                return "\(input.subject) also matches \(common), where the bridge publishes \(family.what): it would read its own messages as \(input.what); choose settings that keep what it reads apart from what it publishes (docs/mqtt.md)"
            }
        }
        for (index, first) in inputs.enumerated() {
            for second in inputs[(index + 1)...] {
                if let common = FilterOverlap.common(first.filter, second.filter) {
                    return "\(first.subject) also matches \(common), where the bridge reads \(second.what) (\(second.filter)): a message there would be taken as one of them and lost to the other; choose settings that keep its inputs apart (docs/mqtt.md)"
                }
            }
        }
        return nil
    }
}
