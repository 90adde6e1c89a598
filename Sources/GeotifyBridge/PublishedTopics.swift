import GeotifyCore

/// Every topic the bridge publishes to with given settings, as filters, each with what
/// goes there: what none of its subscriptions (`SubscribedTopics`) may match, or the
/// bridge would read its own messages (as positions: it refused them and published a
/// new error for each, on and on; `#` made 30 000 error messages in 3 s).
///
/// The bridge's own inputs (`<topicPrefix>/cmd/#`, the positions' filters, Home
/// Assistant's birth message) are not here: it only reads them (`SubscribedTopics`,
/// which checks every input against these).
package struct PublishedTopics: Sendable {
    /// One family of published topics.
    package struct Family: Sendable, Equatable {
        /// The topics, as a filter (`#` may stand before the last level here, see
        /// `FilterOverlap`).
        package let filter: String
        /// What the bridge publishes there, for the error.
        package let what: String
        /// A level of `filter` (written `+`) whose topics all start with `text` and are
        /// longer: the device's level after a `responseTopicPrefix` that ends within a
        /// level (`resp-` makes `resp-<device>`), which a filter cannot say.
        package let levelStart: LevelStart?

        package init(filter: String, what: String, levelStart: LevelStart? = nil) {
            self.filter = filter
            self.what = what
            self.levelStart = levelStart
        }

        /// `common` (a filter of topics `filter` and another filter both match), with the
        /// level `levelStart` names written as its start and `<device>`, or nil when that
        /// level of `common` is a literal the family's topics cannot have there.
        func narrowed(_ common: String) -> String? {
            guard let index = levelStart?.index, let start = levelStart?.text else { return common }
            var levels = common.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard index < levels.count else { return common }
            switch levels[index] {
            case "+", "#":
                levels[index] = start + "<device>" + (levels[index] == "#" ? "/#" : "")
            case let literal where literal.hasPrefix(start) && literal.utf8.count > start.utf8.count:
                break
            default:
                return nil
            }
            return levels.joined(separator: "/")
        }
    }

    /// A level of a family's topics that starts with `text` and goes on.
    package struct LevelStart: Sendable, Equatable {
        package let index: Int
        package let text: String
    }

    package let families: [Family]

    /// The topics the bridge publishes with `settings`.
    package init(settings: Settings) {
        let topics = Topics(prefix: settings.topicPrefix, shard: settings.shard)
        let prefix = settings.topicPrefix
        var families: [Family] = [
            Family(filter: topics.error, what: "refused input and failures"),
            Family(filter: topics.status, what: "its online/offline status"),
            Family(filter: topics.stats, what: "its statistics"),
            Family(filter: "\(prefix)/event/+/#", what: "notifications"),
            Family(filter: "\(prefix)/badge/+/#", what: "badges"),
            Family(filter: "\(prefix)/state/+/#", what: "device states"),
            Family(filter: "\(prefix)/presence/+/#", what: "presence"),
            Family(filter: "\(prefix)/tracker/+/#", what: "trackers"),
            Family(filter: "\(prefix)/reply/+/#", what: "replies to commands"),
            Family(filter: "\(prefix)/occupancy/+/+", what: "shared fences' occupancy"),
        ]
        if topics.shard != nil {
            families.append(Family(filter: "\(prefix)/shard/+/#", what: "the instances' status, statistics and occupancy parts"))
        }
        if let responses = settings.responseTopicPrefix {
            // Response topics are `<responseTopicPrefix><device>` and below; a prefix that
            // ends within a level (`resp-`) leaves the rest of that level to the device:
            // topics whose level starts with that part.
            var levels = responses.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            let start = levels[levels.count - 1]
            levels[levels.count - 1] = "+"
            families.append(Family(
                filter: levels.joined(separator: "/") + "/#", what: "MQTT v5 command responses (responseTopicPrefix)",
                levelStart: start.isEmpty ? nil : LevelStart(index: levels.count - 1, text: start)))
        }
        if settings.homeAssistantEnabled {
            families.append(Family(filter: "\(settings.homeAssistantPrefix)/+/+/+/config", what: "Home Assistant discovery configs"))
        }
        // An OwnTracks device's topics are its position topic and a level below it; a '#'
        // of the filter takes at least one level there.
        let base = TopicLevels.split(settings.ownTracksTopic)
            .map { TopicLevels.isHash($0) ? "+/#" : String(decoding: $0, as: UTF8.self) }
            .joined(separator: "/")
        if settings.ownTracksTransitions {
            families.append(Family(filter: "\(base)/event", what: "OwnTracks transitions (owntracksTransitions)"))
        }
        if settings.ownTracksWaypoints {
            families.append(Family(filter: "\(base)/cmd", what: "OwnTracks waypoint commands (owntracksWaypoints)"))
        }
        self.families = families
    }

    /// The first family `filter` can match, with a filter of the topics in common; nil
    /// when it matches none.
    package func overlap(with filter: String) -> (family: Family, common: String)? {
        for family in families {
            // A position filter's '#' stands last, so the level `levelStart` names meets one
            // level of `filter`: the one `common` holds there.
            if let common = FilterOverlap.common(filter, family.filter), let narrowed = family.narrowed(common) {
                return (family, narrowed)
            }
        }
        return nil
    }
}
